//! A measured run beside the plan: the parsers of `headroom::measured` on PyTorch's real
//! `memory_summary()` layout (fixtures made by `tests/measure/memory_summary_samples.py`),
//! nvidia-smi CSV and the measurement JSON; bad input names its line; `compare` splits the
//! plan like the allocator; and `headroom check` end to end.

mod common;
use common::run;

use std::path::{Path, PathBuf};

use headroom::measured::{compare, parse_measurement, parse_measurement_bytes, side_of, Category, Format, Measured, PYTHON_SNIPPET};
use headroom::{estimate, Scenario};

const SAMPLES: [&str; 3] = ["llama-1b-bf16-h100", "gpt2-fp32-a100", "tiny-abbreviated-oom"];
const MIB: u64 = 1 << 20;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/measured_runs").join(name)
}

fn sample(name: &str) -> (String, serde_json::Value) {
    let text = std::fs::read_to_string(fixture(&format!("{name}.txt"))).expect("sample text");
    let meta = std::fs::read_to_string(fixture(&format!("{name}.json"))).expect("sample json");
    (text, serde_json::from_str(&meta).expect("sample metadata"))
}

fn ok(text: &str) -> Measured {
    parse_measurement(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn err_line(text: &str) -> (usize, String) {
    let e = parse_measurement(text).expect_err(text);
    assert!(!e.to_string().contains('\n'), "one line: {e}");
    assert!(e.line >= 1 && e.line <= text.lines().count().max(1), "line {} of {}: {e}", e.line, text.lines().count());
    (e.line, e.to_string())
}

// ---------------------------------------------------------------- memory_summary()

#[test]
fn memory_summary_samples_read_to_the_byte() {
    for name in SAMPLES {
        let (text, meta) = sample(name);
        let m = ok(&text);
        assert_eq!(m.format, Format::MemorySummary, "{name}");
        let expected = &meta["expected"];
        assert_eq!(m.allocated_peak, expected["allocated_peak"].as_u64(), "{name}");
        assert_eq!(m.reserved_peak, expected["reserved_peak"].as_u64(), "{name}");
        assert_eq!(m.non_releasable_peak, expected["non_releasable_peak"].as_u64(), "{name}");
        assert_eq!((m.used, m.total), (None, None));
        // Rounded down to the printed unit: within one unit of the true peak.
        for (key, got) in [("allocated_bytes", m.allocated_peak), ("reserved_bytes", m.reserved_peak), ("inactive_split_bytes", m.non_releasable_peak)] {
            let truth = meta["true_peaks"][key].as_u64().expect("true peak");
            let got = got.expect("parsed");
            assert!(got <= truth && truth - got < 1 << 20, "{name} {key}: {got} vs {truth}");
        }
    }
}

#[test]
fn memory_summary_exact_values() {
    let (text, _) = sample("llama-1b-bf16-h100");
    let m = ok(&text);
    assert_eq!(m.allocated_peak, Some(19180 * MIB));
    assert_eq!(m.reserved_peak, Some(21962 * MIB));
    assert_eq!(m.non_releasable_peak, Some(2970 * MIB));
    let (text, _) = sample("gpt2-fp32-a100");
    let m = ok(&text);
    assert_eq!((m.allocated_peak, m.reserved_peak, m.non_releasable_peak), (Some(3296 * MIB), Some(3982 * MIB), Some(716_800 * 1024)));
    assert!(m.notes.iter().any(|n| n.contains("2 cudaMalloc retries")), "{:?}", m.notes);
    let (text, _) = sample("tiny-abbreviated-oom");
    let m = ok(&text);
    assert_eq!((m.allocated_peak, m.reserved_peak, m.non_releasable_peak), (Some(700_000), Some(2048 * 1024), Some(1562 * 1024)));
    assert!(m.notes.iter().any(|n| n.contains("device 1")), "{:?}", m.notes);
    assert!(m.notes.iter().any(|n| n.contains("1 CUDA out-of-memory")), "{:?}", m.notes);
}

#[test]
fn memory_summary_in_a_log_with_crlf_and_a_second_summary() {
    let (text, _) = sample("gpt2-fp32-a100");
    let (other, _) = sample("llama-1b-bf16-h100");
    let log = format!("step 100 loss 2.31\nINFO memory:\n{}\n{other}", text.replace('\n', "\r\n"));
    let m = ok(&log);
    assert_eq!((m.allocated_peak, m.reserved_peak), (Some(3296 * MIB), Some(3982 * MIB)));
    assert!(m.notes.iter().any(|n| n.contains("more than one memory_summary")), "{:?}", m.notes);
}

#[test]
fn every_prefix_of_a_summary_is_an_error_naming_a_line_or_the_same_peaks() {
    for name in SAMPLES {
        let (text, _) = sample(name);
        let full = ok(&text);
        let mut errors = 0;
        for cut in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
            let prefix = &text[..cut];
            match parse_measurement(prefix) {
                Ok(m) => assert_eq!((m.allocated_peak, m.reserved_peak), (full.allocated_peak, full.reserved_peak), "{name} cut at {cut}"),
                Err(e) => {
                    errors += 1;
                    assert!(e.line >= 1 && e.line <= prefix.lines().count().max(1), "{name} cut at {cut}: {e}");
                    assert!(!e.message.contains('\n'));
                }
            }
        }
        assert!(errors > text.len() / 3, "{name}: {errors}");
    }
}

#[test]
fn truncated_summary_names_its_last_line() {
    let (text, _) = sample("gpt2-fp32-a100");
    let first_12: String = text.lines().take(12).map(|l| format!("{l}\n")).collect();
    let (line, message) = err_line(&first_12);
    assert_eq!(line, 12);
    assert!(message.contains("\"GPU reserved memory\"") && message.contains("truncated"), "{message}");
    // Cut inside the Allocated memory row's Peak Usage cell.
    let row = text.lines().position(|l| l.starts_with("| Allocated memory")).expect("row");
    let cut: String = text.lines().take(row).map(|l| format!("{l}\n")).collect::<String>() + "| Allocated memory      |   1908 MiB |   32";
    let (line, message) = err_line(&cut);
    assert_eq!(line, row + 1);
    assert!(message.contains("cut short"), "{message}");
}

#[test]
fn bad_units_and_negative_numbers_name_the_row() {
    let (text, _) = sample("gpt2-fp32-a100");
    let row = text.lines().position(|l| l.starts_with("| Allocated memory")).expect("row") + 1;
    let (line, message) = err_line(&text.replacen("3296 MiB", "3296 MB ", 1));
    assert_eq!(line, row);
    assert!(message.contains("unknown unit \"MB\"") && message.contains("Peak Usage"), "{message}");
    let (line, message) = err_line(&text.replacen("  3296 MiB", " -3296 MiB", 1));
    assert_eq!(line, row);
    assert!(message.contains("negative"), "{message}");
    let reserved = text.lines().position(|l| l.starts_with("| GPU reserved memory")).expect("row") + 1;
    let (line, message) = err_line(&text.replacen("6000 MiB", "6e3 MiB ", 1));
    assert_eq!(line, reserved);
    assert!(message.contains("Tot Alloc"), "{message}");
    let (line, message) = err_line(&text.replacen("3982 MiB", "  lots  ", 1));
    assert_eq!(line, reserved);
    assert!(message.contains("GPU reserved memory, Peak Usage"), "{message}");
}

// ---------------------------------------------------------------- nvidia-smi

#[test]
fn nvidia_smi_with_and_without_header_and_units() {
    for text in [
        "memory.used [MiB], memory.total [MiB]\n10240 MiB, 81559 MiB\n",
        "memory.used [MiB], memory.total [MiB]\n10240, 81559\n",
        "10240 MiB, 81559 MiB\n",
        "10240, 81559",
        "\r\n  memory.total [MiB], memory.used [MiB]\r\n81559 MiB, 10240 MiB\r\n",
        "index, name, memory.used [MiB], memory.total [MiB]\n0, NVIDIA H100 80GB HBM3, 10240 MiB, 81559 MiB\n",
    ] {
        let m = ok(text);
        assert_eq!(m.format, Format::NvidiaSmi, "{text}");
        assert_eq!((m.used, m.total), (Some(10240 * MIB), Some(81559 * MIB)), "{text}");
        assert_eq!((m.allocated_peak, m.reserved_peak), (None, None));
    }
    let m = ok("memory.used [MiB]\n512 MiB\n");
    assert_eq!((m.used, m.total), (Some(512 * MIB), None));
    let m = ok("777\n");
    assert_eq!((m.used, m.total), (Some(777 * MIB), None));
}

#[test]
fn nvidia_smi_several_gpus_reads_the_first_and_says_so() {
    let m = ok("memory.used [MiB], memory.total [MiB]\n10240 MiB, 81559 MiB\n20480 MiB, 81559 MiB\n1 MiB, 81559 MiB\n");
    assert_eq!(m.used, Some(10240 * MIB));
    assert!(m.notes.iter().any(|n| n.contains("3 GPUs") && n.contains("first")), "{:?}", m.notes);
}

#[test]
fn nvidia_smi_errors_name_the_line() {
    for (text, line, needle) in [
        ("memory.used [MiB], memory.total [MiB]\n10240 MiB, 81559 MiB\n-5 MiB, 81559 MiB\n", 3, "negative"),
        ("memory.used [MiB], memory.total [MiB]\n10240 MiB, 815", 2, "lacks a unit"),
        ("memory.used [MiB], memory.total [MiB]\n10240 MiB\n", 2, "1 of 2 columns"),
        ("memory.used [MiB], memory.total [MiB]\n10240 MB, 81559 MB\n", 2, "unknown unit"),
        ("memory.used [MiB], memory.total [MiB]\n[N/A], [N/A]\n", 2, "not available"),
        ("memory.used [MiB], memory.total [MiB]\n", 1, "no GPU rows"),
        ("81559, 10240\n", 1, "larger than memory.total"),
        ("1, 2, 3\n", 1, "without a header"),
        ("memory.free [MiB]\n3 MiB\n", 1, "neither memory.used nor memory.total"),
        ("10240 MiB, 81559 MiB\n10240, 81559\n", 2, "lacks a unit"),
    ] {
        let (l, message) = err_line(text);
        assert_eq!(l, line, "{text:?}: {message}");
        assert!(message.contains(needle), "{text:?}: {message}");
    }
}

// ---------------------------------------------------------------- JSON

#[test]
fn measurement_json_full_and_partial() {
    let m = ok(r#"{"max_memory_allocated": 20112345088, "max_memory_reserved": 23028826112, "used": 24410390528, "total": 85045346304}"#);
    assert_eq!(m.format, Format::Json);
    assert_eq!((m.allocated_peak, m.reserved_peak, m.used, m.total), (Some(20_112_345_088), Some(23_028_826_112), Some(24_410_390_528), Some(85_045_346_304)));
    let m = ok("{\"max_memory_allocated\": 5, \"used\": null, \"device\": \"H100\"}");
    assert_eq!((m.allocated_peak, m.reserved_peak, m.used), (Some(5), None, None));
    assert!(m.notes.iter().any(|n| n.contains("\"device\"")), "{:?}", m.notes);
}

#[test]
fn measurement_json_errors_name_the_line() {
    for (text, line, needle) in [
        ("{\n  \"max_memory_allocated\": 1,\n  \"max_memory_reserved\": -2\n}", 3, "expected a whole, non-negative number"),
        ("{\n  \"max_memory_allocated\": 1.5e9\n}", 2, "floating point"),
        ("{\n  \"max_memory_allocated\": 1,\n  \"max_memory_res", 3, "truncated"),
        ("{\"max_memory_allocated\": \"10 GiB\"}", 1, "string"),
        ("{\"something\": 1}", 1, "none of"),
        ("[1, 2]", 1, "invalid type"),
        ("{\n\"used\": 9, \"total\": 5}", 2, "larger than total"),
    ] {
        let (l, message) = err_line(text);
        assert_eq!(l, line, "{text:?}: {message}");
        assert!(message.contains(needle), "{text:?}: {message}");
    }
}

// ---------------------------------------------------------------- anything else

#[test]
fn empty_binary_and_unknown_inputs_name_a_line() {
    for text in ["", "\n\n   \n", "hello\nworld"] {
        let (line, message) = err_line(text);
        assert_eq!(line, 1, "{text:?}");
        assert!(message.contains("expected torch.cuda.memory_summary()"), "{message}");
    }
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    let e = parse_measurement_bytes(png).expect_err("binary");
    assert_eq!(e.line, 1, "{e}");
    let e = parse_measurement_bytes(b"10, 20\nab\0cd\n").expect_err("NUL");
    assert_eq!(e.line, 2, "{e}");
    assert!(e.to_string().starts_with("line 2: binary"), "{e}");
}

// ---------------------------------------------------------------- compare

fn breakdown(json: &str) -> headroom::Breakdown {
    let decoded = Scenario::from_json(json).expect("scenario");
    estimate(&decoded.scenario)
}

#[test]
fn predicted_quantities_nest_and_terms_fall_on_their_side() {
    let b = breakdown(r#"{"model": {"preset": "llama-3.2-1b"}, "training": {"micro_batch": 1, "seq_len": 2048}, "parallel": {"dp": 2}}"#);
    let m = ok(r#"{"max_memory_allocated": 20000000000, "max_memory_reserved": 22000000000, "used": 25000000000, "total": 85520809984}"#);
    let c = compare(&m, &b);
    let p = &c.predicted;
    assert_eq!(p.used, b.total);
    let side = |cat| p.overhead_terms.iter().filter(|t| t.side == cat).map(|t| t.bytes).sum::<u64>();
    assert!(p.overhead_terms.iter().any(|t| t.name.contains("NCCL") && t.side == Category::ContextAndLibraries), "{:?}", p.overhead_terms);
    assert!(p.overhead_terms.iter().any(|t| t.name.contains("cuBLAS") && t.side == Category::Allocated), "{:?}", p.overhead_terms);
    assert_eq!(p.used - p.reserved_peak, side(Category::ContextAndLibraries));
    assert_eq!(p.reserved_peak - p.allocated_peak, side(Category::AllocatorCache));
    assert!(side(Category::AllocatorCache) > 0 && side(Category::ContextAndLibraries) > 1_900_000_000);
    let cats: Vec<Category> = c.differences.iter().map(|d| d.category).collect();
    assert_eq!(cats, [Category::Allocated, Category::AllocatorCache, Category::ContextAndLibraries]);
    let d = &c.differences;
    assert_eq!((d[0].measured, d[1].measured, d[2].measured), (20_000_000_000, 2_000_000_000, 3_000_000_000));
    assert_eq!((d[0].predicted, d[1].predicted, d[2].predicted), (p.allocated_peak, p.reserved_peak - p.allocated_peak, p.used - p.reserved_peak));
    for x in d {
        assert_eq!(x.difference, x.measured as i64 - x.predicted as i64);
        assert!(x.sentence.contains("measured") && x.sentence.contains("predicted") && !x.sentence.contains('\n'), "{}", x.sentence);
    }
    assert!(c.notes.iter().any(|n| n.contains("2-GPU job")), "{:?}", c.notes);
    assert_eq!(side_of("CUDA context"), Category::ContextAndLibraries);
}

#[test]
fn differences_only_for_what_was_measured() {
    let b = breakdown(r#"{"model": {"preset": "gpt2"}}"#);
    let smi = compare(&ok("memory.used [MiB], memory.total [MiB]\n10240 MiB, 81559 MiB\n"), &b);
    assert_eq!(smi.differences.len(), 1);
    assert_eq!(smi.differences[0].category, Category::Used);
    assert_eq!(smi.differences[0].predicted, b.total);
    let (text, _) = sample("gpt2-fp32-a100");
    let summary = compare(&ok(&text), &b);
    let cats: Vec<Category> = summary.differences.iter().map(|d| d.category).collect();
    assert_eq!(cats, [Category::Allocated, Category::AllocatorCache]);
    assert!(summary.differences[1].sentence.contains("Non-releasable memory peaked at"), "{}", summary.differences[1].sentence);
    let only_allocated = compare(&ok("{\"max_memory_allocated\": 1000}"), &b);
    assert_eq!(only_allocated.differences.len(), 1);
    assert!(only_allocated.differences[0].sentence.contains("less than predicted"));
    // Readings that do not nest are left out with a note, not reported as negative.
    let odd = compare(&ok("{\"max_memory_allocated\": 10, \"max_memory_reserved\": 5, \"used\": 1}"), &b);
    assert_eq!(odd.differences.len(), 1);
    assert_eq!(odd.notes.len(), 2, "{:?}", odd.notes);
    // A measurement from another device is flagged.
    let other = compare(&ok("{\"used\": 1, \"total\": 25769803776}"), &b);
    assert!(other.notes.iter().any(|n| n.contains("another device")), "{:?}", other.notes);
}

#[test]
fn comparison_json_has_the_documented_shape() {
    let b = breakdown("{}");
    let c = compare(&ok(r#"{"max_memory_allocated": 1, "max_memory_reserved": 2, "used": 3, "total": 4}"#), &b);
    let v = serde_json::to_value(&c).expect("serialize");
    for key in ["allocated_peak", "reserved_peak", "used", "total"] {
        assert!(v["measured"].get(key).is_some(), "measured.{key}");
    }
    for key in ["allocated_peak", "reserved_peak", "used"] {
        assert!(v["predicted"][key].as_u64().is_some(), "predicted.{key}");
    }
    let cats: Vec<&str> = v["differences"].as_array().expect("differences").iter().map(|d| d["category"].as_str().expect("category")).collect();
    assert_eq!(cats, ["allocated", "allocator cache and fragmentation", "CUDA context and libraries"]);
    for d in v["differences"].as_array().expect("differences") {
        for key in ["measured", "predicted", "difference", "sentence"] {
            assert!(d.get(key).is_some(), "{key}");
        }
    }
}

#[test]
fn python_snippet_prints_the_json_keys() {
    assert!(PYTHON_SNIPPET.lines().count() <= 25);
    for key in ["max_memory_allocated", "max_memory_reserved", "\"used\"", "\"total\"", "mem_get_info", "reset_peak_memory_stats"] {
        assert!(PYTHON_SNIPPET.contains(key), "{key}");
    }
}

// ---------------------------------------------------------------- the CLI

fn temp(name: &str, contents: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("headroom-check-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).expect("write");
    path
}

const LLAMA_1B: &str = r#"{"model": {"preset": "llama-3.2-1b"}, "training": {"micro_batch": 1, "seq_len": 2048, "precision": "bf16-mixed"}}"#;

#[test]
fn check_prints_the_comparison_json() {
    let run_file = fixture("llama-1b-bf16-h100.txt");
    let (code, out, err) = run(&["check", "-", "--measured", run_file.to_str().expect("utf-8")], LLAMA_1B);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    assert_eq!(v["measured"]["format"], "memory_summary");
    assert_eq!(v["measured"]["allocated_peak"], 19180 * MIB);
    assert_eq!(v["measured"]["reserved_peak"], 21962 * MIB);
    assert!(v["predicted"]["allocated_peak"].as_u64().is_some_and(|a| a > 0));
    let cats: Vec<&str> = v["differences"].as_array().expect("differences").iter().map(|d| d["category"].as_str().expect("category")).collect();
    assert_eq!(cats, ["allocated", "allocator cache and fragmentation"]);
}

#[test]
fn check_reads_json_from_a_file_and_prints_markdown() {
    let scenario = temp("scenario.json", LLAMA_1B.as_bytes());
    let (code, out, err) = run(
        &["check", scenario.to_str().expect("utf-8"), "--measured", "-", "--format", "markdown"],
        r#"{"max_memory_allocated": 20112345088, "max_memory_reserved": 23028826112, "used": 24410390528, "total": 85045346304}"#,
    );
    let _ = std::fs::remove_file(&scenario);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("| allocated peak |") && out.contains("| CUDA context and libraries |"), "{out}");
}

#[test]
fn check_bad_measurement_is_one_line_naming_the_line() {
    let (text, _) = sample("gpt2-fp32-a100");
    let truncated: String = text.lines().take(12).map(|l| format!("{l}\n")).collect();
    for (name, contents, needle) in [
        ("truncated.txt", truncated.into_bytes(), "line 12:"),
        ("units.csv", b"memory.used [MiB], memory.total [MiB]\n10 MB, 20 MB\n".to_vec(), "line 2: memory.used: unknown unit"),
        ("empty.txt", Vec::new(), "line 1: the input is empty"),
        ("binary.bin", b"\x89PNG\r\n\x1a\n\0\0".to_vec(), "line 1: not text"),
    ] {
        let path = temp(name, &contents);
        let (code, out, err) = run(&["check", "--measured", path.to_str().expect("utf-8")], "{}");
        let _ = std::fs::remove_file(&path);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(out.is_empty(), "{name}: {out}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(needle) && err.contains(name), "{name}: {err}");
    }
}

#[test]
fn check_usage_errors() {
    let (code, _, err) = run(&["check"], "{}");
    assert_eq!(code, 2);
    assert!(err.contains("required arguments were not provided") && err.contains("--measured <RUN>"), "{err}");
    let (code, _, err) = run(&["check", "--measured", "-"], "{}");
    assert_eq!(code, 2);
    assert!(err.contains("scenario must come from a file"), "{err}");
    let (code, _, err) = run(&["check", "--measured", "/nonexistent/run.txt"], "{}");
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/run.txt"), "{err}");
    let run_file = fixture("gpt2-fp32-a100.txt");
    let (code, _, err) = run(&["check", "--measured", run_file.to_str().expect("utf-8"), "--format", "xml"], "{}");
    assert_eq!(code, 2);
    assert!(err.contains("--format"), "{err}");
    let (code, _, err) = run(&["check", "--measured", run_file.to_str().expect("utf-8")], r#"{"parallel": {"tp": 3}}"#);
    assert_eq!(code, 2);
    assert!(err.contains("parallel.tp"), "{err}");
}

// ---------------------------------------------------------------- mutations (the fuzz target's checks)

mod mutations {
    use super::*;
    use proptest::prelude::*;

    fn seeds() -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = SAMPLES.iter().map(|n| sample(n).0.into_bytes()).collect();
        v.push(b"memory.used [MiB], memory.total [MiB]\n10240 MiB, 81559 MiB\n20480 MiB, 81559 MiB\n".to_vec());
        v.push(br#"{"max_memory_allocated": 20112345088, "max_memory_reserved": 23028826112, "used": 24410390528, "total": 85045346304}"#.to_vec());
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn spliced_inputs_are_read_or_name_a_line(seed in 0usize..5, at in any::<prop::sample::Index>(), cut in 0usize..24, junk in prop::collection::vec(any::<u8>(), 0..24)) {
            let mut data = seeds().swap_remove(seed);
            let i = at.index(data.len() + 1);
            let end = (i + cut).min(data.len());
            data.splice(i..end, junk);
            match parse_measurement_bytes(&data) {
                Ok(m) => {
                    let c = compare(&m, &breakdown("{}"));
                    prop_assert!(c.predicted.allocated_peak <= c.predicted.reserved_peak && c.predicted.reserved_peak <= c.predicted.used);
                    prop_assert!(serde_json::to_string(&c).is_ok());
                }
                Err(e) => {
                    let lines = data.split(|&b| b == b'\n').count();
                    prop_assert!(e.line >= 1 && e.line <= lines, "line {} of {}: {}", e.line, lines, e);
                    prop_assert!(!e.to_string().contains('\n'));
                }
            }
        }
    }
}

/// A bare 14-digit number (found by the fuzzer) reads as nvidia-smi MiB: 10 EiB, more than any
/// GPU has: an error naming line 1, not an overflowing difference.
#[test]
fn absurd_sizes_are_refused() {
    let err = headroom::measured::parse_measurement("10811091551099\n").unwrap_err();
    assert_eq!(err.line, 1, "{err}");
    let err = headroom::measured::parse_measurement("{\"max_memory_allocated\": 18446744073709551615}").unwrap_err();
    assert!(err.to_string().contains("more memory than any GPU"), "{err}");
}
