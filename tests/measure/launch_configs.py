"""Check Headroom's launch configurations with each framework's own parser.

For every scenario in tests/fixtures/launch/*.json and every target, runs
`headroom launch SCENARIO --for TARGET`. A refusal is recorded with its message; a file is
handed to the framework's parser (nothing is trained or served), and the values the parser
read back are compared with the scenario:

- deepspeed:  deepspeed.runtime.config.DeepSpeedConfig (with the plan's data-parallel size)
- accelerate: accelerate.commands.config.config_args.load_config_from_file, and TRL's
              TrlParser((ScriptArguments, SFTConfig, ModelConfig)) for the arguments
- torchtune:  torchtune's recipe registry, TuneRecipeArgumentParser and
              _merge_yaml_and_cli_args on the packaged config (every override must name a key
              the config has, or the recipe reads with cfg.get)
- litgpt:     jsonargparse over litgpt.finetune.{full,lora}.setup, as `litgpt` builds it
- torchtitan: torchtitan.config.ConfigManager().parse_args(["--job.config_file", FILE])
- megatron:   Megatron-LM's megatron/training/arguments.py (tag core_v0.16.1, matching the
              megatron-core wheel): parse_args, then validate_args at the plan's world size
- vllm:       vllm's `serve` argument parser (make_arg_parser) and EngineArgs.from_cli_args
- sglang:     sglang.srt.server_args.ServerArgs.add_cli_args and an argparse parse

Run (the training frameworks and vLLM/SGLang live in two virtual environments, since vLLM pins
its own torch; the second run merges into the same output):

    /work/venv-27/bin/python tests/measure/launch_configs.py --headroom target/debug/headroom \
        --targets deepspeed,accelerate,torchtune,litgpt,torchtitan,megatron \
        --megatron-lm /work/venv-27/megatron-lm --out tests/fixtures/launch/parsed.json
    /work/venv-27-vllm/bin/python tests/measure/launch_configs.py --headroom target/debug/headroom \
        --targets vllm,sglang --out tests/fixtures/launch/parsed.json
"""

import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile
import traceback
from importlib import metadata


def launch(headroom, scenario, target):
    p = subprocess.run([headroom, "launch", scenario, "--for", target], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr.strip()


def argv_of(command_text):
    """A printed command (with backslash-newline continuations) as an argv list."""
    return shlex.split(command_text.replace("\\\n", " "))


def version(pkg):
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


# ---------------------------------------------------------------- training frameworks

def check_deepspeed(text, s):
    import deepspeed.runtime.config as ds_config
    from deepspeed.runtime.config import DeepSpeedConfig

    # No process group here: DeepSpeedConfig asks for the rank first and, failing, falls back to
    # a world of 1 without asking the mpu. Rank 0 of the plan's data-parallel group it is.
    ds_config.dist.get_rank = lambda *a, **k: 0
    dp = s.get("parallel", {}).get("dp", 1)

    class Mpu:
        def get_data_parallel_world_size(self):
            return dp

        def get_model_parallel_world_size(self):
            return 1

        def get_data_parallel_rank(self):
            return 0

    cfg = DeepSpeedConfig(json.loads(text), mpu=Mpu())
    return {
        "train_batch_size": cfg.train_batch_size,
        "train_micro_batch_size_per_gpu": cfg.train_micro_batch_size_per_gpu,
        "gradient_accumulation_steps": cfg.gradient_accumulation_steps,
        "zero_stage": int(cfg.zero_optimization_stage),
        "bf16": bool(cfg.bfloat16_config.enabled) if hasattr(cfg, "bfloat16_config") else bool(getattr(cfg, "bfloat16_enabled", False)),
        "optimizer": cfg.optimizer_name,
        "offload_optimizer": str(cfg.zero_config.offload_optimizer.device) if cfg.zero_config.offload_optimizer else None,
    }


def check_accelerate(text, s):
    from accelerate.commands.config.config_args import load_config_from_file

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    cfg = load_config_from_file(f.name)
    # A bare `no` would load as False: the values must be accelerate's own strings.
    assert str(cfg.mixed_precision) in ("no", "fp16", "bf16", "fp8"), cfg.mixed_precision
    assert str(cfg.distributed_type).split(".")[-1] in ("NO", "MULTI_GPU", "FSDP", "DEEPSPEED"), cfg.distributed_type
    out = {
        "distributed_type": str(cfg.distributed_type),
        "num_processes": cfg.num_processes,
        "num_machines": cfg.num_machines,
        "mixed_precision": str(cfg.mixed_precision),
        "fsdp_config": cfg.fsdp_config,
        "deepspeed_config": cfg.deepspeed_config,
    }
    # The TRL arguments: the comment lines after the launch line.
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("# accelerate launch"))
    args = " ".join(l[1:].rstrip(" \\") for l in lines[start + 1:] if l.startswith("#"))
    argv = shlex.split(args)
    from trl import ModelConfig, ScriptArguments, SFTConfig, TrlParser

    parser = TrlParser((ScriptArguments, SFTConfig, ModelConfig))
    # bf16 on a machine without a GPU is refused by TrainingArguments' own check; the parse is
    # what is checked here, so the device check is turned off with use_cpu.
    script, sft, model = parser.parse_args_and_config(argv + ["--use_cpu", "true", "--output_dir", tempfile.mkdtemp()], fail_with_unknown_args=True)
    out["trl"] = {
        "per_device_train_batch_size": sft.per_device_train_batch_size,
        "gradient_accumulation_steps": sft.gradient_accumulation_steps,
        "max_length": sft.max_length,
        "bf16": sft.bf16,
        "gradient_checkpointing": sft.gradient_checkpointing,
        "optim": str(sft.optim),
        "use_peft": model.use_peft,
        "lora_r": model.lora_r,
        "lora_target_modules": model.lora_target_modules,
        "dtype": getattr(model, "dtype", None) or getattr(model, "torch_dtype", None),
        "load_in_4bit": model.load_in_4bit,
    }
    return out


def check_torchtune(text, s):
    from omegaconf import OmegaConf
    from torchtune._recipe_registry import get_all_recipes
    from torchtune.config._parse import TuneRecipeArgumentParser
    from torchtune.config._utils import _merge_yaml_and_cli_args
    import torchtune

    recipes_dir = os.path.join(os.path.dirname(os.path.dirname(torchtune.__file__)), "recipes")
    argv = argv_of(text)
    assert argv[:2] == ["tune", "run"], argv
    i = 2
    while argv[i].startswith("--nnodes") or argv[i].startswith("--nproc_per_node"):
        i += 2
    recipe = argv[i]
    rest = argv[i + 1:]
    config_name = rest[rest.index("--config") + 1]
    known = {r.name: r for r in get_all_recipes()}
    assert recipe in known, f"unknown recipe {recipe}"
    assert config_name in [c.name for c in known[recipe].configs], f"{config_name} is not a config of {recipe}"
    path = os.path.join(recipes_dir, "configs", config_name + ".yaml")
    base = OmegaConf.load(path)
    overrides = [a for a in rest if a not in ("--config", config_name)]
    parser = TuneRecipeArgumentParser(description="check")
    yaml_args, cli_args = parser.parse_known_args(["--config", path] + overrides)
    cfg = _merge_yaml_and_cli_args(yaml_args, cli_args)
    # Keys the recipe reads with cfg.get(...) although its config may leave them out.
    optional = {"fsdp_reshard_after_forward", "tensor_parallel_dim", "enable_activation_offloading", "optimizer_in_bwd", "compile", "fsdp_cpu_offload"}
    src = open(os.path.join(recipes_dir, recipe + ".py")).read()
    for o in overrides:
        key = o.lstrip("~").split("=")[0]
        if OmegaConf.select(base, key, default="__missing__") == "__missing__":
            assert key in optional and f'"{key}"' in src, f"{key} is neither in {config_name} nor read by {recipe}"
    return {
        "recipe": recipe,
        "config": config_name,
        "batch_size": cfg.batch_size,
        "gradient_accumulation_steps": cfg.gradient_accumulation_steps,
        "tokenizer.max_seq_len": cfg.tokenizer.max_seq_len,
        "dtype": cfg.dtype,
        "enable_activation_checkpointing": cfg.enable_activation_checkpointing,
        "optimizer": cfg.optimizer._component_,
        "optimizer.fused": cfg.optimizer.get("fused", None),
        "lora_rank": cfg.model.get("lora_rank", None),
        "lora_attn_modules": list(cfg.model.lora_attn_modules) if "lora_attn_modules" in cfg.model else None,
        "fsdp_cpu_offload": cfg.get("fsdp_cpu_offload", None),
        "tensor_parallel_dim": cfg.get("tensor_parallel_dim", None),
    }


def check_litgpt(text, s):
    from jsonargparse import ArgumentParser
    import litgpt.finetune.full as full
    import litgpt.finetune.lora as lora

    argv = argv_of(text)
    assert argv[0] == "litgpt", argv
    fn = {"finetune_full": full.setup, "finetune_lora": lora.setup}[argv[1]]
    parser = ArgumentParser(exit_on_error=False)
    parser.add_function_arguments(fn, as_positional=True)
    ns = parser.parse_args(argv[2:])
    return {
        "command": argv[1],
        "checkpoint_dir": str(ns.checkpoint_dir),
        "devices": ns.devices,
        "num_nodes": ns.num_nodes,
        "precision": ns.precision,
        "quantize": ns.get("quantize"),
        "micro_batch_size": ns.train.micro_batch_size,
        "global_batch_size": ns.train.global_batch_size,
        "max_seq_length": ns.train.max_seq_length,
        "optimizer": ns.optimizer,
        "lora_r": ns.get("lora_r"),
        "lora": {k: ns.get(k) for k in ("lora_query", "lora_key", "lora_value", "lora_projection", "lora_mlp")},
    }


def check_torchtitan(text, s):
    from torchtitan.config import ConfigManager

    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    cfg = ConfigManager().parse_args(["--job.config_file", f.name])
    p = cfg.parallelism
    return {
        "model": [cfg.model.name, cfg.model.flavor],
        "local_batch_size": cfg.training.local_batch_size,
        "global_batch_size": cfg.training.global_batch_size,
        "seq_len": cfg.training.seq_len,
        "dp_shard": p.data_parallel_shard_degree,
        "dp_replicate": p.data_parallel_replicate_degree,
        "tp": p.tensor_parallel_degree,
        "pp": p.pipeline_parallel_degree,
        "cp": p.context_parallel_degree,
        "ac_mode": cfg.activation_checkpoint.mode,
        "mixed_precision_param": cfg.training.mixed_precision_param,
    }


def check_megatron(text, s, megatron_lm):
    sys.path.insert(0, megatron_lm)
    import megatron.training.arguments as margs
    from megatron.training.arguments import parse_args, validate_args

    # validate_args asks the GPU's architecture (a warning below Blackwell); there is no GPU
    # here, so it answers for the plan's device (H100: 9).
    margs.get_device_arch_version = lambda: 9

    argv = argv_of(text)
    # Environment assignments before torchrun are the launch's environment.
    while "=" in argv[0]:
        key, value = argv.pop(0).split("=", 1)
        os.environ[key] = value
    script = argv.index("pretrain_gpt.py")
    world = int(argv[argv.index("--nnodes") + 1]) * int(argv[argv.index("--nproc_per_node") + 1])
    saved = sys.argv
    sys.argv = ["pretrain_gpt.py"] + argv[script + 1:]
    try:
        args = parse_args()
    finally:
        sys.argv = saved
    args.world_size, args.rank = world, 0
    # validate_args prints every argument; keep stdout for the report.
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        validate_args(args)
    return {
        "world_size": world,
        "data_parallel_size": args.data_parallel_size,
        "tensor_model_parallel_size": args.tensor_model_parallel_size,
        "pipeline_model_parallel_size": args.pipeline_model_parallel_size,
        "virtual_pipeline_model_parallel_size": args.virtual_pipeline_model_parallel_size,
        "global_batch_size": args.global_batch_size,
        "micro_batch_size": args.micro_batch_size,
        "num_query_groups": args.num_query_groups,
        "use_distributed_optimizer": args.use_distributed_optimizer,
        "recompute_granularity": args.recompute_granularity,
        "bf16": args.bf16,
    }


# ---------------------------------------------------------------- serving engines

def check_vllm(text, s):
    # Building the parser asks vLLM's platform; without a GPU none is detected, so the CPU
    # platform answers (the flags and EngineArgs are the same dataclass on every platform).
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    from vllm.engine.arg_utils import EngineArgs

    try:
        from vllm.entrypoints.common.cli_args import make_arg_parser
    except ImportError:
        from vllm.entrypoints.openai.cli_args import make_arg_parser

    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    argv = argv_of(text)
    assert argv[:2] == ["vllm", "serve"], argv
    parser = make_arg_parser(FlexibleArgumentParser())
    args = parser.parse_args(argv[2:])
    # As `vllm serve` does (vllm/entrypoints/cli/serve.py, ServeSubcommand.cmd): the
    # positional model tag becomes the engine's model.
    if getattr(args, "model_tag", None) is not None:
        args.model = args.model_tag
    e = EngineArgs.from_cli_args(args)
    return {
        "model": e.model,
        "tensor_parallel_size": e.tensor_parallel_size,
        "pipeline_parallel_size": e.pipeline_parallel_size,
        "data_parallel_size": e.data_parallel_size,
        "max_model_len": e.max_model_len,
        "gpu_memory_utilization": e.gpu_memory_utilization,
        "quantization": e.quantization,
        "kv_cache_dtype": e.kv_cache_dtype,
        "dtype": e.dtype,
        "max_num_seqs": e.max_num_seqs,
        "enforce_eager": e.enforce_eager,
    }


def check_sglang(text, s):
    from sglang.srt.server_args import ServerArgs

    argv = argv_of(text)
    assert argv[:3] == ["python", "-m", "sglang.launch_server"], argv
    parser = argparse.ArgumentParser(exit_on_error=False)
    ServerArgs.add_cli_args(parser)
    args = parser.parse_args(argv[3:])
    return {
        "model_path": args.model_path,
        "tp_size": args.tp_size,
        "pp_size": args.pp_size,
        "dp_size": args.dp_size,
        "context_length": args.context_length,
        "mem_fraction_static": args.mem_fraction_static,
        "max_running_requests": args.max_running_requests,
        "kv_cache_dtype": args.kv_cache_dtype,
        "disable_cuda_graph": args.disable_cuda_graph,
        "dtype": args.dtype,
    }


PACKAGES = {
    "deepspeed": "deepspeed",
    "accelerate": "accelerate",
    "torchtune": "torchtune",
    "litgpt": "litgpt",
    "torchtitan": "torchtitan",
    "megatron": "megatron-core",
    "vllm": "vllm",
    "sglang": "sglang",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--headroom", required=True)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--megatron-lm")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = json.load(open(a.out)) if os.path.exists(a.out) else {"cases": {}, "versions": {}}
    here = os.path.dirname(os.path.abspath(__file__))
    fixtures = sorted(glob.glob(os.path.join(here, "..", "fixtures", "launch", "*.json")))
    fixtures = [f for f in fixtures if not f.endswith("parsed.json")]
    for target in a.targets.split(","):
        out["versions"][target] = {PACKAGES[target]: version(PACKAGES[target]), "python": sys.executable}
        if target == "megatron":
            out["versions"][target]["megatron-lm"] = "NVIDIA/Megatron-LM tag core_v0.16.1 (megatron/training/arguments.py)"
        for f in fixtures:
            name = os.path.basename(f)[:-5]
            s = json.load(open(f))
            rc, text, err = launch(a.headroom, f, target)
            case = {"scenario": name, "target": target}
            if rc != 0:
                case.update(outcome="refused", message=err)
            else:
                try:
                    check = globals()["check_" + target]
                    parsed = check(text, s, a.megatron_lm) if target == "megatron" else check(text, s)
                    case.update(outcome="accepted", parsed=parsed)
                except Exception as e:  # the parser's refusal is the result
                    case.update(outcome="parser-error", error=f"{type(e).__name__}: {e}", trace=traceback.format_exc(limit=3))
            out["cases"][f"{name}/{target}"] = case
            print(f"{name:18} {target:11} {case['outcome']}: {case.get('message') or case.get('error') or ''}", flush=True)
    with open(a.out, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True, default=str)
        fh.write("\n")


if __name__ == "__main__":
    main()
