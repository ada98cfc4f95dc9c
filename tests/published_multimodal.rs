//! Published fine-tuning peaks of vision-language and hybrid models, each with the setup its
//! source documents (`tests/fixtures/published/multimodal_hybrid.json`, which quotes each
//! source's line and says which figure it is).
//!
//! Every row's scenario is run through `headroom::estimate` and compared with the figure the
//! source printed: `max_memory_reserved` (ms-swift's `memory(GiB)`, `swift/utils/torch_utils.py`
//! `get_max_reserved_memory`: the largest device's reserved peak, GiB) with the plan's
//! reserved peak (its total less the CUDA context and libraries), `max_memory_allocated` with
//! the allocated peak, and nvidia-smi with the whole total. Each row is held to the tolerance
//! its own uncertainty allows and, where Headroom misses by more, the gap the fixture's
//! `headroom_note` explains or names as unexplained; the median |error| over the rows to 25 %
//! (what it is now, 22.9 %: the gaps are named, not closed).
//! Where the source prints PEFT's trainable count (the Unsloth notebooks), Headroom's must equal
//! it: the adapters' targets are the run's. `cargo test --test published_multimodal --
//! --nocapture` prints the table.
//!
//! As of this commit: ms-swift's Qwen2.5-VL-7B LoRA −26 %, its Qwen2.5-VL-7B full fine-tuning
//! of video under ZeRO-3 −23 % (checkpointed; it read −4 % while a trained tower's blocks were
//! counted without checkpointing, see the row) and −24 % (not checkpointed), its
//! Qwen3-Next-80B-A3B LoRA −26 % (what its adapters were is not certain, see the row);
//! the Jamba-1.5-Mini card's LoRA −11 %; Unsloth's notebooks: Qwen2.5-VL-7B QLoRA +10 %,
//! Qwen3-VL-8B QLoRA −10 %, Gemma 3 4B QLoRA −33 % (in the weights, unexplained), LFM2-1.2B
//! LoRA −2 %; median 23 %. The runs the scenario cannot express (per-part checkpointing, a
//! fully trained tower beside LoRA, configs or image sizes not found) are listed under
//! `not_expressible` with the reason, and not run.

use headroom::measured::predicted;
use headroom::{estimate, Scenario};
use serde_json::Value;

const GIB: f64 = (1u64 << 30) as f64;

fn published() -> Value {
    serde_json::from_str(include_str!("fixtures/published/multimodal_hybrid.json")).expect("fixture JSON")
}

/// The plan's figure of the kind the source printed, in GiB, and its trainable parameters.
fn figure(row: &Value) -> (f64, u64) {
    let decoded = Scenario::from_json(&row["scenario"].to_string()).unwrap_or_else(|e| panic!("{}: {e}", row["id"]));
    assert!(decoded.warnings.is_empty(), "{}: {:?}", row["id"], decoded.warnings);
    let b = estimate(&decoded.scenario);
    let p = predicted(&b);
    let bytes = match row["figure"].as_str().expect("figure") {
        "reserved" => p.reserved_peak,
        "allocated" => p.allocated_peak,
        "nvidia-smi" => p.used,
        other => panic!("{}: unknown figure kind {other}", row["id"]),
    };
    (bytes as f64 / GIB, b.trainable_params)
}

#[test]
fn published_multimodal_and_hybrid_runs() {
    let p = published();
    let rows = p["rows"].as_array().expect("rows");
    let mut errors = Vec::new();
    let mut failures = Vec::new();
    println!("{:<50} {:>10} {:>9} {:>9} {:>8} {:>6}", "row", "figure", "published", "headroom", "error", "bound");
    for row in rows {
        let id = row["id"].as_str().expect("id");
        let published = row["published_gib"].as_f64().expect("published_gib");
        let (predicted, trainable) = figure(row);
        if let Some(published) = row["published_trainable_params"].as_u64() {
            // The notebook's own count of PEFT's adapters: the targets as the run made them.
            assert_eq!(trainable, published, "{id}: trainable parameters");
        }
        let error = predicted / published - 1.0;
        let bound = row["tolerance"].as_f64().expect("tolerance");
        println!("{id:<50} {:>10} {published:>9.1} {predicted:>9.1} {:>+7.1}% {:>5.0}%", row["figure"].as_str().unwrap(), 100.0 * error, 100.0 * bound);
        errors.push(error.abs());
        if error.abs() > bound {
            failures.push(format!("{id}: published {published:.1} GiB, Headroom {predicted:.1} GiB ({:+.1} %, bound {:.0} %)", 100.0 * error, 100.0 * bound));
        }
    }
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    println!("median |error| {:.1} % over {} rows", 100.0 * median, errors.len());
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(median <= 0.25, "median |error| {:.1} %", 100.0 * median);
}
