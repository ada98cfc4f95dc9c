//! Fuzz a pasted config.json as the page reads it: the size is checked before parsing
//! (`input_limits::CONFIG_BYTES`), then the config decoder runs; a refusal is one line naming
//! `config.json` and never panics. The input is repeated to reach the size limit now and then.
#![no_main]

use headroom::input_limits::{check_size, CONFIG_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&repeat, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest).repeat(if repeat == 255 { CONFIG_BYTES / rest.len().max(1) + 1 } else { 1 });
    let outcome = check_size("config.json", "a config", text.len(), CONFIG_BYTES).map_err(|e| e.to_string()).and_then(|()| {
        let raw: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        headroom::scenario::ModelSpec::from_hf_config(raw).map_err(|e| e.within("config.json").to_string())
    });
    if let Err(message) = outcome {
        assert!(!message.contains('\n'), "{message:?}");
    }
});
