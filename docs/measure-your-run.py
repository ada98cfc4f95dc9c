# Measure one training step for `headroom check --measured run.json` (needs only torch and a CUDA GPU).
# Put your step in step(): forward, backward, optimizer.step(), zero_grad - exactly as you train.
import json, torch

def step():
    raise NotImplementedError("your training step here: loss = model(**batch).loss; loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)")

def measure(step, warmup=2):
    for _ in range(warmup):  # the first steps create optimizer state and pick kernels
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()  # keeps the cache, so reserved starts at its warm level
    step()
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()  # the driver's view: every process on this GPU
    return {"max_memory_allocated": torch.cuda.max_memory_allocated(),
            "max_memory_reserved": torch.cuda.max_memory_reserved(),
            "used": total - free, "total": total}

if __name__ == "__main__":
    print(json.dumps(measure(step)))
