//! Bytes per weight of llama.cpp's GGUF quantisation types, and which tensors a "mixed" type
//! (`Q4_K_M`, `Q5_K_M`) stores in more bits.
//!
//! Block sizes from ggml `ggml/src/ggml-common.h` (`block_q8_0`: fp16 scale + 32 int8 = 34 B
//! per 32 weights; `block_q4_0`: fp16 scale + 16 B = 18 B per 32; `block_q4_K`: 144 B per 256;
//! `block_q5_K`: 176 B per 256; `block_q6_K`: 210 B per 256). The choice per tensor follows
//! llama.cpp `src/llama-quant.cpp` `llama_tensor_get_type`: the output head goes to `Q6_K`
//! (unless the file is `Q8_0`); for `Q4_K_M` / `Q5_K_M` the `attn_v` and `ffn_down` matrices
//! of the layers `use_more_bits` picks (the first and last eighth, and every third layer in
//! between) go to `Q6_K`; one-dimensional tensors (norms, biases) stay fp32.

use super::inputs::WeightFormat;

/// Bytes per weight of one block type.
const Q8_0: f64 = 34.0 / 32.0;
const Q4_0: f64 = 18.0 / 32.0;
const Q4_K: f64 = 144.0 / 256.0;
const Q5_K: f64 = 176.0 / 256.0;
const Q6_K: f64 = 210.0 / 256.0;

/// The role of a tensor, as far as the GGUF type choice goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GgufRole {
    /// The output head (or a tied embedding, which serves as the head).
    Output,
    /// A per-layer `attn_v` or `ffn_down` matrix.
    MoreBitsCandidate,
    /// Any other matrix or embedding table.
    Matrix,
    /// A one-dimensional tensor (norm weight, bias).
    Vector,
}

/// `use_more_bits(i, n)` of `llama-quant.cpp`: the first and last eighth of the layers and
/// every third one in between.
fn use_more_bits(i: u64, n: u64) -> bool {
    i < n / 8 || i >= 7 * n / 8 || (i.saturating_sub(n / 8)) % 3 == 2
}

/// Share of `n` layers whose `attn_v` / `ffn_down` get more bits.
pub fn more_bits_share(n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    (0..n.min(100_000)).filter(|&i| use_more_bits(i, n)).count() as f64 / n.min(100_000) as f64
}

/// Bytes per weight of a tensor of `role` in a GGUF file of type `format`, averaged over the
/// model's `layers` for the per-layer choices; `None` for a format that is not GGUF.
pub fn bytes_per_weight(format: WeightFormat, role: GgufRole, layers: u64) -> Option<f64> {
    let base = match format {
        WeightFormat::GgufQ8_0 => Q8_0,
        WeightFormat::GgufQ6K => Q6_K,
        WeightFormat::GgufQ5KM => Q5_K,
        WeightFormat::GgufQ4KM => Q4_K,
        WeightFormat::GgufQ4_0 => Q4_0,
        _ => return None,
    };
    Some(match role {
        GgufRole::Vector => 4.0,
        GgufRole::Output if format == WeightFormat::GgufQ8_0 => Q8_0,
        GgufRole::Output => Q6_K,
        GgufRole::MoreBitsCandidate if matches!(format, WeightFormat::GgufQ4KM | WeightFormat::GgufQ5KM) => {
            let share = more_bits_share(layers);
            share * Q6_K + (1.0 - share) * base
        }
        _ => base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 32 layers (Llama-3-8B): layers 0–3 and 28–31, then 6, 9, …, 27 → 8 + 8 = 16 of 32.
    #[test]
    fn use_more_bits_picks_half_of_32_layers() {
        let picked: Vec<u64> = (0..32).filter(|&i| use_more_bits(i, 32)).collect();
        assert_eq!(picked, vec![0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]);
        assert_eq!(more_bits_share(32), 0.5);
    }

    #[test]
    fn block_sizes_match_ggml() {
        assert_eq!(bytes_per_weight(WeightFormat::GgufQ4_0, GgufRole::Matrix, 32), Some(0.5625));
        assert_eq!(bytes_per_weight(WeightFormat::GgufQ8_0, GgufRole::Output, 32), Some(1.0625));
        assert_eq!(bytes_per_weight(WeightFormat::GgufQ4KM, GgufRole::Output, 32), Some(210.0 / 256.0));
        assert_eq!(bytes_per_weight(WeightFormat::GgufQ4KM, GgufRole::Vector, 32), Some(4.0));
        assert_eq!(bytes_per_weight(WeightFormat::Fp8, GgufRole::Matrix, 32), None);
    }
}
