#!/usr/bin/env python3
"""Exact parameter counts of every preset in src/model/presets/models/.

Each model is instantiated from its config on torch.device("meta") (no memory,
no download). param_count = sum(p.numel() for p in model.parameters()); this
de-duplicates tied weights (PyTorch yields a shared Parameter once).
largest_module_params = max over modules m of sum(p.numel() for p in
m.parameters(recurse=False)) (e.g. the embedding or the untied lm_head).
ResNet presets are cross-checked against torchvision.models.resnet*.
Rewrites tests/fixtures/measured/param_counts.json.
"""
import json, os, glob
import torch, transformers, torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRESETS = os.path.join(ROOT, "src", "model", "presets", "models")
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "param_counts.json")


def build(cfg_dict):
    d = {k: v for k, v in cfg_dict.items() if k != "_headroom"}
    cls_name = cfg_dict["_headroom"]["hf_class"]
    config = transformers.AutoConfig.for_model(d.pop("model_type"), **d)
    cls = getattr(transformers, cls_name)
    with torch.device("meta"):
        model = cls(config)
    return model


def counts(model):
    total = sum(p.numel() for p in model.parameters())
    largest, largest_name = 0, None
    for name, m in model.named_modules():
        n = sum(p.numel() for p in m.parameters(recurse=False))
        if n > largest:
            largest, largest_name = n, name
    return total, largest, largest_name


def main():
    cases = []
    for path in sorted(glob.glob(os.path.join(PRESETS, "*.json"))):
        pid = os.path.basename(path)[:-5]
        with open(path) as f:
            cfg = json.load(f)
        model = build(cfg)
        total, largest, largest_name = counts(model)
        case = {"preset": pid, "hf_class": cfg["_headroom"]["hf_class"], "param_count": total,
                "largest_module_params": largest, "largest_module": largest_name}
        if cfg["model_type"] == "resnet":
            tv_name = "resnet" + pid.split("-")[1]
            with torch.device("meta"):
                tv = getattr(torchvision.models, tv_name)(weights=None)
            case["torchvision_param_count"] = sum(p.numel() for p in tv.parameters())
            case["torchvision_model"] = "torchvision.models." + tv_name
        print(pid, total, largest, largest_name, case.get("torchvision_param_count", ""))
        cases.append(case)
        del model
    out = {"generator": "tests/measure/param_counts.py", "torch": torch.__version__,
           "transformers": transformers.__version__, "torchvision": torchvision.__version__,
           "method": "model built on torch.device('meta') from the preset config; sum(p.numel() for p in model.parameters())",
           "cases": cases}
    with open(OUT, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
