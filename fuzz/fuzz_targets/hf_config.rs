//! Fuzz the Hugging Face config.json importer and plan the architectures it accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    if let Ok(model) = headroom::scenario::ModelSpec::from_hf_config(value) {
        let scenario = headroom::Scenario {
            model,
            ..headroom::Scenario::default()
        };
        let _ = scenario.validate();
        let b = headroom::estimate(&scenario);
        let sum = [b.parameters, b.gradients, b.optimizer_states, b.activations, b.temporary, b.overhead]
            .iter()
            .fold(0u64, |a, &x| a.saturating_add(x));
        assert_eq!(sum, b.total);
    }
});
