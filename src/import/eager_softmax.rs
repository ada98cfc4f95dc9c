//! The families whose eager attention keeps its softmax in another dtype than Headroom's rule
//! says (fp32 with rotary positions, the model dtype without: `AttentionPart::eager_softmax_fp32`),
//! as measured in a pure bf16 run of transformers 5.25's own modelling code
//! (`tests/measure/eager_softmax.py` → `tests/fixtures/measured/eager_softmax.json`, checked for
//! every family by `tests/eager_softmax.rs`). Not for what the page draws: only the saved
//! attention probabilities of eager attention depend on it.

/// `(model_type, softmax in fp32)`: the measured exceptions to the rotary rule.
const MEASURED: [(&str, bool); 13] = [
    // `softmax(attn_weights, dim=-1)` in the model dtype, rotary or not.
    ("biogpt", false),
    ("llama4", false),
    ("llama4_text", false),
    ("mimo_v2_flash", false),
    // No rotary positions (ALiBi, learned), but the softmax upcast to fp32.
    ("bloom", true),
    ("gpt_bigcode", true),
    ("mpt", true),
    ("opt", true),
    // No positions at all (its Mamba layers order the sequence), the softmax measured in fp32
    // (read since the hybrids landed; refused before, so not checked until then).
    ("jamba", true),
    // Zamba2's shared attention without rotary positions (`use_mem_rope` false by default),
    // the softmax measured in fp32 (read since zamba2 configs are; refused before).
    ("zamba2", true),
    // Zamba's shared attention has no positions at all, its softmax measured in fp32 (read
    // since zamba configs are; refused before).
    ("zamba", true),
    // Learned sinks as a sigmoid of the logsumexp, the softmax in fp32 (gpt-oss's stays in
    // the model dtype).
    ("granite_swa", true),
    ("granitemoe_swa", true),
];

/// The family's measured eager softmax dtype where it is an exception, else `None`.
pub fn eager_softmax_fp32(model_type: &str) -> Option<bool> {
    MEASURED.iter().find(|(ty, _)| *ty == model_type).map(|(_, fp32)| *fp32)
}
