//! `headroom rent` and `headroom launch` as scripts call them, and the "what to rent" ranking
//! on three jobs: a 7B LoRA, a 70B full fine-tune and 70B FP8 serving on vLLM
//! (`tests/fixtures/launch/*.json`).

mod common;
use common::run;

use headroom::plan::rent::{rent, PriceBook, RentRow};
use headroom::plan::run::run_at_price;
use headroom::Scenario;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/launch/");

fn fixture(name: &str) -> Scenario {
    let text = std::fs::read_to_string(format!("{FIXTURES}{name}.json")).unwrap();
    Scenario::from_json(&text).unwrap().scenario
}

/// The ranking's invariants: fitting rows with a cost first, by cost; the cheapest is the first
/// row; the fastest has the fewest hours; every fitting row's cost is its hours × GPUs × price,
/// and its hours those of its own plan.
fn check_ranking(name: &str, rows: &[RentRow]) {
    let priced: Vec<&RentRow> = rows.iter().take_while(|r| r.fits && r.cost.is_some()).collect();
    assert!(!priced.is_empty(), "{name}: nothing fits");
    assert!(priced.windows(2).all(|w| w[0].cost <= w[1].cost), "{name}: not sorted by cost");
    assert!(rows[0].cheapest && rows.iter().filter(|r| r.cheapest).count() == 1, "{name}");
    let fastest = rows.iter().find(|r| r.fastest).unwrap();
    assert!(rows.iter().filter_map(|r| r.hours).all(|h| h >= fastest.hours.unwrap()), "{name}");
    let mut seen_unfit = false;
    for r in rows {
        seen_unfit |= !r.fits;
        assert!(!(seen_unfit && r.fits), "{name}: a fitting row after one that does not fit");
        if let (Some(hours), Some(cost), Some(price)) = (r.hours, r.cost, &r.price) {
            assert!((cost - hours * r.gpus as f64 * price.per_gpu_hour).abs() < 1e-6 * cost.max(1.0), "{name}: {} × {}", r.gpus, r.device);
            let s = r.scenario.as_ref().unwrap();
            assert_eq!(s.parallel.world_size(), r.gpus, "{name}: {} plan uses other GPUs", r.device);
            let run = run_at_price(s, &headroom::estimate(s), Some(price.clone()));
            assert!((run.hours - hours).abs() < 1e-9 * hours, "{name}: hours of {} × {}", r.gpus, r.device);
        }
        if !r.fits {
            assert!(r.layout.is_none() && r.hours.is_none() && r.cost.is_none());
        }
    }
}

fn find<'a>(rows: &'a [RentRow], device: &str, gpus: u64) -> &'a RentRow {
    rows.iter().find(|r| r.device == device && r.gpus == gpus).unwrap()
}

#[test]
fn seven_b_lora_ranking() {
    let rows = rent(&fixture("lora-7b"), 8, &PriceBook::default());
    check_ranking("7B LoRA", &rows);
    // 7B in bf16 (13.5 GB) with rank-16 adapters fits one 24 GB card; 4 × 10⁸ tokens on one
    // 4090 takes longer than on eight.
    assert!(find(&rows, "rtx-4090-24gb", 1).fits);
    let (one, eight) = (find(&rows, "h100-sxm-80gb", 1), find(&rows, "h100-sxm-80gb", 8));
    assert!(eight.hours.unwrap() < one.hours.unwrap() / 4.0, "8 H100s are more than 4× faster than one: {:?} {:?}", eight.hours, one.hours);
}

#[test]
fn seventy_b_full_fine_tune_ranking() {
    let rows = rent(&fixture("full-70b"), 64, &PriceBook::default());
    check_ranking("70B full", &rows);
    // 16 bytes per parameter of AdamW states alone is 1.1 TB: no single GPU of the catalogue
    // holds it, and 80 GB GPUs need at least 16 with ZeRO-3 (70.6e9 × 16 / 16 = 70.6 GB, with
    // offload fewer).
    assert!(rows.iter().filter(|r| r.gpus == 1).all(|r| !r.fits));
    assert!(!find(&rows, "rtx-4090-24gb", 8).fits);
    assert!(find(&rows, "h100-sxm-80gb", 64).fits);
    // Twice the H100s, about half the hours (communication keeps it from exactly half).
    let (a, b) = (find(&rows, "h100-sxm-80gb", 32), find(&rows, "h100-sxm-80gb", 64));
    let ratio = a.hours.unwrap() / b.hours.unwrap();
    assert!(ratio > 1.5 && ratio < 2.2, "32 → 64 H100s: {ratio}");
}

#[test]
fn seventy_b_fp8_serving_ranking() {
    let rows = rent(&fixture("serve-70b-fp8"), 8, &PriceBook::default());
    check_ranking("70B FP8 serving", &rows);
    // FP8 weights are 70.6 GB: one 80 GB H100 cannot also cache 64 sequences of 8,192 tokens,
    // two can; one 141 GB H200 can.
    assert!(!find(&rows, "h100-sxm-80gb", 1).fits);
    assert!(find(&rows, "h100-sxm-80gb", 2).fits);
    assert!(find(&rows, "h200-141gb", 1).fits);
    assert!(rows.iter().filter(|r| r.fits).all(|r| r.layout.as_deref().is_some_and(|l| l.starts_with("tp "))));
}

#[test]
fn rent_cli_prints_rows_sorted_by_cost_with_the_contract_keys() {
    let path = format!("{FIXTURES}lora-7b.json");
    let (code, out, err) = run(&["rent", &path, "--tokens", "1000000", "--budget-gpus", "4"], "");
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    for key in ["device", "gpus", "layout", "hours", "cost", "fits"] {
        assert!(rows.iter().all(|r| r.get(key).is_some()), "missing {key}");
    }
    let costs: Vec<f64> = rows.iter().filter_map(|r| r["cost"].as_f64()).collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]));
    // --sort time: fastest first, the same rows.
    let (_, out, _) = run(&["rent", &path, "--tokens", "1000000", "--budget-gpus", "4", "--sort", "time"], "");
    let by_time: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(by_time.len(), rows.len());
    assert_eq!(by_time[0]["fastest"], true);
    let hours: Vec<f64> = by_time.iter().filter_map(|r| r["hours"].as_f64()).collect();
    assert!(hours.windows(2).all(|w| w[0] <= w[1]));
    // A prices file replaces the examples, and names a bad entry.
    let prices = std::env::temp_dir().join("headroom-prices-test.json");
    std::fs::write(&prices, r#"{"rtx-4090-24gb": 0.0001}"#).unwrap();
    let (_, out, _) = run(&["rent", &path, "--budget-gpus", "2", "--prices", prices.to_str().unwrap()], "");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    // At a hundredth of a cent per GPU-hour the 4090 (on which the plan fits) is the cheapest.
    assert_eq!((rows[0]["device"].as_str(), rows[0]["cheapest"].as_bool()), (Some("rtx-4090-24gb"), Some(true)), "{}", rows[0]);
    assert_eq!(rows[0]["price"]["source"], "your prices file");
    std::fs::write(&prices, r#"{"no-such-gpu": 1}"#).unwrap();
    let (code, _, err) = run(&["rent", &path, "--budget-gpus", "2", "--prices", prices.to_str().unwrap()], "");
    assert_eq!(code, 2);
    assert!(err.contains("prices.no-such-gpu"), "{err}");
}

#[test]
fn launch_cli_prints_the_file_or_names_the_field() {
    let (code, out, err) = run(&["launch", &format!("{FIXTURES}lora-7b.json"), "--for", "torchtune"], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("tune run --nproc_per_node 2 lora_finetune_distributed"), "{out}");
    let (code, out, err) = run(&["launch", &format!("{FIXTURES}lora-7b.json"), "--for", "deepspeed"], "");
    assert_eq!(code, 2);
    assert!(out.is_empty() && err.contains("training.lora"), "{err}");
    let (code, _, err) = run(&["launch", &format!("{FIXTURES}lora-7b.json"), "--for", "nemo"], "");
    assert_eq!(code, 2);
    assert!(err.contains("deepspeed") && err.contains("sglang"), "{err}");
}
