#!/usr/bin/env python3
"""Sample `torch.cuda.memory_summary()` printouts for `tests/check.rs`, made by PyTorch's own code.

There is no GPU here, so `torch.cuda.memory.memory_stats` is replaced by a function returning a
stats dict built below (the same keys the CUDA caching allocator reports: `allocated_bytes.all.peak`,
`reserved_bytes.large_pool.current`, `num_ooms`, ...); `torch.cuda.memory_summary(device=N)` then
formats it with its real code (`_format_size`: B / KiB / MiB / GiB / TiB, the unit of each column
chosen by the "all" row and the value rounded down to it).

The figures are made up but shaped like real runs (allocated <= reserved, large + small pool = all,
peaks >= current, cumulative totals far larger than peaks).

Output, per sample, in tests/fixtures/measured_runs/:
  NAME.txt   the printout, exactly as `print(torch.cuda.memory_summary())` writes it
  NAME.json  the stats it was made from, and what a parser must read from the text: the peaks
             rounded down to the unit shown (`expected`), with that unit (`resolution`)
Run: /work/venv/bin/python tests/measure/memory_summary_samples.py   (torch 2.15, CPU is enough)
"""
import json
import os

import torch
import torch.cuda.memory as cuda_memory

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured_runs")

SIZE_METRICS = ["allocated_bytes", "active_bytes", "requested_bytes", "reserved_bytes", "inactive_split_bytes"]
COUNT_METRICS = ["allocation", "active", "segment", "inactive_split"]
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


def split(total, small):
    """(all, large_pool, small_pool) with the small pool holding `small`."""
    return {"all": total, "large_pool": total - small, "small_pool": small}


def stats_dict(metrics, oversize, num_ooms=0, num_alloc_retries=0):
    """`metrics`: name -> {stat: (all, small_pool)} for stat in current/peak/allocated/freed."""
    d = {"num_ooms": num_ooms, "num_alloc_retries": num_alloc_retries, "num_sync_all_streams": 0,
         "num_device_alloc": 0, "num_device_free": 0, "max_split_size": -1}
    for name, per_stat in metrics.items():
        for stat, (total, small) in per_stat.items():
            for pool, value in split(total, small).items():
                d[f"{name}.{pool}.{stat}"] = value
    for name, per_stat in oversize.items():
        for stat, value in per_stat.items():
            d[f"{name}.{stat}"] = value
    return d


def sizes(current, peak, allocated, small_current, small_peak, small_allocated):
    return {"current": (current, small_current), "peak": (peak, small_peak),
            "allocated": (allocated, small_allocated), "freed": (allocated - current, small_allocated - small_current)}


def counts(current, peak, allocated, small_current, small_peak, small_allocated):
    return sizes(current, peak, allocated, small_current, small_peak, small_allocated)


NO_OVERSIZE = {"oversize_allocations": {"current": 0, "peak": 0, "allocated": 0, "freed": 0},
               "oversize_segments": {"current": 0, "peak": 0, "allocated": 0, "freed": 0}}

SAMPLES = [
    # A Llama-3.2-1B-sized bf16 run on an H100 after a few hundred steps (Tot Alloc in TiB).
    dict(name="llama-1b-bf16-h100", device=0, abbreviated=False, num_ooms=0, num_alloc_retries=0,
         metrics={
             "allocated_bytes": sizes(9_891_432_448, 20_112_345_088, 2_351_898_233_344, 6_291_968, 29_360_640, 41_943_040_512),
             "active_bytes": sizes(9_891_432_448, 20_112_345_088, 2_351_898_233_344, 6_291_968, 29_360_640, 41_943_040_512),
             "requested_bytes": sizes(9_890_100_236, 20_109_876_224, 2_351_012_004_100, 6_100_212, 29_001_300, 41_900_000_000),
             "reserved_bytes": sizes(23_028_826_112, 23_028_826_112, 23_028_826_112, 31_457_280, 31_457_280, 31_457_280),
             "inactive_split_bytes": sizes(432_013_824, 3_114_270_720, 1_812_345_678_912, 2_097_152, 8_388_608, 9_876_543_210),
             "allocation": counts(1_211, 3_975, 4_012_345, 640, 1_802, 2_100_456),
             "active": counts(1_211, 3_975, 4_012_345, 640, 1_802, 2_100_456),
             "segment": counts(412, 412, 412, 15, 15, 15),
             "inactive_split": counts(97, 388, 1_712_003, 12, 61, 600_123),
         }, oversize=NO_OVERSIZE),
    # GPT-2 small, fp32 AdamW, on an A100 40GB (MiB peaks, GiB totals).
    dict(name="gpt2-fp32-a100", device=0, abbreviated=False, num_ooms=0, num_alloc_retries=2,
         metrics={
             "allocated_bytes": sizes(2_001_234_432, 3_456_789_504, 912_345_678_848, 1_048_576, 12_582_912, 2_147_483_648),
             "active_bytes": sizes(2_001_234_432, 3_456_789_504, 912_345_678_848, 1_048_576, 12_582_912, 2_147_483_648),
             "requested_bytes": sizes(2_000_987_136, 3_456_000_000, 912_000_000_000, 1_000_000, 12_000_000, 2_100_000_000),
             "reserved_bytes": sizes(4_133_486_592, 4_175_429_632, 6_291_456_000, 14_680_064, 16_777_216, 20_971_520),
             "inactive_split_bytes": sizes(209_715_200, 734_003_200, 400_123_456_789, 3_145_728, 6_291_456, 1_234_567_890),
             "allocation": counts(452, 1_401, 812_345, 301, 702, 400_123),
             "active": counts(452, 1_401, 812_345, 301, 702, 400_123),
             "segment": counts(63, 66, 80, 7, 8, 10),
             "inactive_split": counts(21, 140, 301_234, 9, 40, 100_234),
         },
         oversize={"oversize_allocations": {"current": 0, "peak": 0, "allocated": 0, "freed": 0},
                   "oversize_segments": {"current": 0, "peak": 0, "allocated": 0, "freed": 0}}),
    # A tiny abbreviated summary on device 1 after an out-of-memory error (B and KiB units).
    dict(name="tiny-abbreviated-oom", device=1, abbreviated=True, num_ooms=1, num_alloc_retries=3,
         metrics={
             "allocated_bytes": sizes(4_608, 700_000, 9_437_184, 512, 2_048, 1_048_576),
             "active_bytes": sizes(4_608, 700_000, 9_437_184, 512, 2_048, 1_048_576),
             "requested_bytes": sizes(4_100, 699_000, 9_400_000, 500, 2_000, 1_000_000),
             "reserved_bytes": sizes(2_097_152, 2_097_152, 4_194_304, 2_097_152, 2_097_152, 4_194_304),
             "inactive_split_bytes": sizes(1_044_480, 1_600_000, 5_000_000, 1_044_480, 1_600_000, 5_000_000),
             "allocation": counts(3, 12, 1_000, 3, 12, 1_000),
             "active": counts(3, 12, 1_000, 3, 12, 1_000),
             "segment": counts(1, 1, 2, 1, 1, 2),
             "inactive_split": counts(1, 4, 300, 1, 4, 300),
         }, oversize=NO_OVERSIZE),
]


def shown(value):
    """What `_format_size(value, value)` shows, back in bytes, and the unit it rounds to."""
    unit = 1
    pref = value
    for _ in ["KiB", "MiB", "GiB", "TiB", "PiB"]:
        if pref < 768 * 1024:
            break
        unit *= 1024
        pref /= 1024
    return (value // unit) * unit, unit


def main():
    os.makedirs(OUT, exist_ok=True)
    real = cuda_memory.memory_stats
    try:
        for s in SAMPLES:
            stats = stats_dict(s["metrics"], s["oversize"], s["num_ooms"], s["num_alloc_retries"])
            cuda_memory.memory_stats = lambda device=None, _s=stats: _s
            text = torch.cuda.memory_summary(device=s["device"], abbreviated=s["abbreviated"])
            expected, resolution = {}, {}
            for key, metric in [("allocated_peak", "allocated_bytes"), ("reserved_peak", "reserved_bytes"),
                                ("non_releasable_peak", "inactive_split_bytes")]:
                expected[key], resolution[key] = shown(stats[f"{metric}.all.peak"])
            with open(os.path.join(OUT, s["name"] + ".txt"), "w") as f:
                f.write(text)
            with open(os.path.join(OUT, s["name"] + ".json"), "w") as f:
                json.dump({"generator": "tests/measure/memory_summary_samples.py", "torch": torch.__version__,
                           "call": f"torch.cuda.memory_summary(device={s['device']}, abbreviated={s['abbreviated']})",
                           "expected": expected, "resolution": resolution,
                           "true_peaks": {"allocated_bytes": stats["allocated_bytes.all.peak"],
                                          "reserved_bytes": stats["reserved_bytes.all.peak"],
                                          "inactive_split_bytes": stats["inactive_split_bytes.all.peak"]},
                           "stats": stats}, f, indent=1)
                f.write("\n")
            print(s["name"], expected)
    finally:
        cuda_memory.memory_stats = real


if __name__ == "__main__":
    main()
