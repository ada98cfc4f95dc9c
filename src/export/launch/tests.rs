//! Each target's file for the fixtures in `tests/fixtures/launch/`, field by field; the same
//! files are accepted by the frameworks' own parsers in `tests/fixtures/launch/parsed.json`
//! (`tests/measure/launch_configs.py`).

use super::*;

fn fixture(name: &str) -> Scenario {
    let text = std::fs::read_to_string(format!("{}/tests/fixtures/launch/{name}.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    Scenario::from_json(&text).unwrap().scenario
}

/// `--flag value` pairs of a printed command (a flag without a value maps to "").
fn flags(text: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().filter(|w| *w != "\\").collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if words[i].starts_with("--") {
            let value = words.get(i + 1).filter(|v| !v.starts_with("--")).map_or("", |v| v);
            out.push((words[i].to_string(), value.to_string()));
            i += if value.is_empty() { 1 } else { 2 };
        } else {
            i += 1;
        }
    }
    out
}

fn get<'a>(f: &'a [(String, String)], name: &str) -> &'a str {
    f.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no {name} in {f:?}"))
}

#[test]
fn deepspeed_json_has_the_plans_batch_zero_and_precision() {
    let v = deepspeed::value(&fixture("full-70b")).unwrap();
    assert_eq!(v["train_micro_batch_size_per_gpu"], 1);
    assert_eq!(v["gradient_accumulation_steps"], 8);
    assert_eq!(v["train_batch_size"], 256); // 1 × 8 × dp 32
    assert_eq!(v["zero_optimization"]["stage"], 3);
    assert_eq!(v["bf16"]["enabled"], true);
    assert_eq!(v["optimizer"]["type"], "AdamW");
    assert!(v.get("fp16").is_none() && v["zero_optimization"].get("offload_optimizer").is_none());
    let mut s = fixture("full-70b");
    s.parallel.offload = crate::scenario::Offload::OptimizerAndParams;
    let v = deepspeed::value(&s).unwrap();
    assert_eq!(v["zero_optimization"]["offload_param"]["device"], "cpu");
    assert_eq!(v["zero_optimization"]["offload_optimizer"]["device"], "cpu");
}

#[test]
fn accelerate_yaml_and_trl_arguments() {
    let text = launch(&fixture("full-70b"), Target::Accelerate).unwrap();
    for line in [
        "distributed_type: 'FSDP'",
        "mixed_precision: 'bf16'",
        "num_processes: 32",
        "num_machines: 4",
        "  fsdp_version: 2",
        "  fsdp_activation_checkpointing: true",
        "  fsdp_offload_params: false",
        "  fsdp_cpu_ram_efficient_loading: false",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
    }
    // A meta model filled one tensor at a time is accelerate's cpu_ram_efficient_loading.
    let mut tensor = fixture("full-70b");
    tensor.parallel.fsdp_load = crate::model::inputs::FsdpLoad::Tensor;
    assert!(launch(&tensor, Target::Accelerate).unwrap().lines().any(|l| l == "  fsdp_cpu_ram_efficient_loading: true"));
    let f = flags(&text.lines().filter(|l| l.starts_with("#   ")).map(|l| &l[1..]).collect::<Vec<_>>().join(" "));
    assert_eq!(get(&f, "--per_device_train_batch_size"), "1");
    assert_eq!(get(&f, "--gradient_accumulation_steps"), "8");
    assert_eq!(get(&f, "--max_length"), "4096");
    assert_eq!(get(&f, "--bf16"), "true");
    // FSDP checkpoints the blocks itself; the Trainer's switch stays off.
    assert_eq!(get(&f, "--gradient_checkpointing"), "false");
    let lora = launch(&fixture("lora-7b"), Target::Accelerate).unwrap();
    assert!(lora.contains("mixed_precision: 'no'") && lora.contains("--dtype bfloat16") && lora.contains("--lora_r 16"), "{lora}");
    assert!(lora.contains("--lora_target_modules q_proj k_proj v_proj o_proj"), "{lora}");
}

#[test]
fn torchtune_recipe_config_and_overrides() {
    let torchtune::Plan { recipe, config, overrides: o } = torchtune::plan(&fixture("lora-7b")).unwrap();
    assert_eq!((recipe.as_str(), config.as_str()), ("lora_finetune_distributed", "llama2/7B_lora"));
    let get = |k: &str| o.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str()).unwrap();
    assert_eq!(get("batch_size"), "4");
    assert_eq!(get("gradient_accumulation_steps"), "4");
    assert_eq!(get("tokenizer.max_seq_len"), "2048");
    assert_eq!(get("dtype"), "bf16");
    assert_eq!(get("enable_activation_checkpointing"), "True");
    assert_eq!(get("model.lora_rank"), "16");
    assert_eq!(get("model.lora_attn_modules"), "[q_proj,k_proj,v_proj,output_proj]");
    assert_eq!(get("model.apply_lora_to_mlp"), "False");
    let text = launch(&fixture("lora-7b"), Target::Torchtune).unwrap();
    assert!(text.starts_with("tune run --nproc_per_node 2 lora_finetune_distributed"), "{text}");
    assert!(text.contains("'model.lora_attn_modules=[q_proj,k_proj,v_proj,output_proj]'"), "quoted for the shell: {text}");
}

#[test]
fn litgpt_flags() {
    let f = flags(&launch(&fixture("lora-7b"), Target::Litgpt).unwrap());
    assert_eq!(get(&f, "--devices"), "2");
    assert_eq!(get(&f, "--precision"), "bf16-true");
    assert_eq!(get(&f, "--train.global_batch_size"), "32");
    assert_eq!(get(&f, "--lora_projection"), "true");
    assert_eq!(get(&f, "--lora_mlp"), "false");
    let f = flags(&launch(&fixture("full-70b"), Target::Litgpt).unwrap());
    assert_eq!((get(&f, "--devices"), get(&f, "--num_nodes"), get(&f, "--precision")), ("8", "4", "bf16-mixed"));
}

#[test]
fn torchtitan_toml() {
    let text = launch(&fixture("full-70b"), Target::Torchtitan).unwrap();
    for line in [
        "flavor = \"70B\"", "local_batch_size = 1", "global_batch_size = 256", "data_parallel_shard_degree = 32", "data_parallel_replicate_degree = 1", "mode = \"full\"",
        "mixed_precision_param = \"bfloat16\"",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing:\n{text}");
    }
}

#[test]
fn megatron_arguments() {
    let text = launch(&fixture("megatron-70b"), Target::Megatron).unwrap();
    assert!(text.starts_with("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nnodes 16 --nproc_per_node 8 pretrain_gpt.py"), "{text}");
    let f = flags(&text);
    assert_eq!(get(&f, "--tensor-model-parallel-size"), "8");
    assert_eq!(get(&f, "--pipeline-model-parallel-size"), "4");
    assert_eq!(get(&f, "--num-layers-per-virtual-pipeline-stage"), "10"); // 80 / (4 × 2)
    assert_eq!(get(&f, "--global-batch-size"), "64"); // 1 × 16 × dp 4
    assert_eq!(get(&f, "--num-query-groups"), "8");
    assert_eq!(get(&f, "--sequence-parallel"), "");
    assert_eq!(get(&f, "--use-distributed-optimizer"), "");
    assert_eq!(get(&f, "--recompute-activations"), "");
}

#[test]
fn vllm_and_sglang_flags() {
    let f = flags(&launch(&fixture("serve-70b-fp8"), Target::Vllm).unwrap());
    assert_eq!(get(&f, "--tensor-parallel-size"), "2");
    assert_eq!(get(&f, "--max-model-len"), "8192");
    assert_eq!(get(&f, "--gpu-memory-utilization"), "0.9");
    assert_eq!(get(&f, "--quantization"), "fp8");
    assert_eq!(get(&f, "--kv-cache-dtype"), "fp8");
    let s = fixture("serve-8b-sglang");
    let f = flags(&launch(&s, Target::Sglang).unwrap());
    assert_eq!(get(&f, "--dp-size"), "2");
    assert_eq!(get(&f, "--max-running-requests"), "64");
    assert_eq!(get(&f, "--kv-cache-dtype"), "fp8_e4m3");
    assert_eq!(get(&f, "--disable-cuda-graph"), "");
    let fraction = crate::estimate(&s).serving.unwrap().memory_fraction;
    assert_eq!(get(&f, "--mem-fraction-static"), fraction.to_string());
}

/// What a framework cannot run as planned is refused with the field, never a wrong file.
#[test]
fn refusals_name_the_field() {
    let cases = [
        ("lora-7b", Target::Deepspeed, "training.lora"),
        ("full-70b", Target::Torchtune, "training.precision"),
        ("full-70b", Target::Megatron, "parallel.zero"),
        ("megatron-70b", Target::Accelerate, "parallel.tp"),
        ("megatron-70b", Target::Torchtitan, "parallel.zero"),
        ("serve-70b-fp8", Target::Sglang, "training.serving.engine"),
        ("serve-70b-fp8", Target::Litgpt, "training.mode"),
        ("full-70b", Target::Vllm, "training.mode"),
    ];
    for (name, target, field) in cases {
        let e = launch(&fixture(name), target).unwrap_err().to_string();
        assert!(e.starts_with(field), "{name} --for {}: {e}", target.id());
    }
}

/// Every target on every fixture answers (a file or a refusal), and a file never comes out
/// for a mode the target does not run.
#[test]
fn every_target_answers_every_fixture() {
    for name in ["lora-7b", "full-70b", "megatron-70b", "serve-70b-fp8", "serve-8b-sglang"] {
        let s = fixture(name);
        for t in Target::ALL {
            let out = launch(&s, t);
            let serving = s.training.mode == crate::model::inputs::Mode::Inference;
            if out.is_ok() {
                assert_eq!(t.serves(), serving, "{name} {}", t.id());
            }
        }
    }
}
