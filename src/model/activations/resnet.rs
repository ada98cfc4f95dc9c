//! Tensors a ResNet (transformers' `ResNetForImageClassification`, same graph as
//! torchvision's resnet18/50/101) saves for backward, for one micro-batch, stage by stage.
//!
//! Per op, as PyTorch autograd saves it: a convolution saves its input; BatchNorm in
//! training saves its input and fp32 `save_mean`/`save_invstd` per channel; ReLU saves its
//! output (which is also the next convolution's input, counted once); max-pool saves int64
//! indices; the residual add saves nothing. Under autocast the convolutions run in 16-bit
//! and BatchNorm keeps their dtype, so only the first convolution's input is a fresh
//! 16-bit copy of the fp32 image. Feature-map sizes follow the convolution arithmetic
//! ⌊(n + 2p − k)/s⌋ + 1 (He et al. 2016, Table 1).

use super::term::{ActTerm, Place, Split};
use crate::model::arch::{resnet_blocks, ResNetArch};
use crate::model::dtype::{F32, HALF, INT64};
use crate::model::inputs::Training;
use crate::model::precision::Precision;

/// Output side of a k×k convolution or pool with stride s and padding p.
fn conv_out(n: u64, k: u64, s: u64, p: u64) -> u64 {
    ((n + 2 * p).saturating_sub(k)) / s + 1
}

/// Term names per residual stage (BatchNorm inputs and ReLU outputs of its blocks).
const STAGE_NAMES: [&str; 5] = ["stage 1 feature maps", "stage 2 feature maps", "stage 3 feature maps", "stage 4 feature maps", "later stages' feature maps"];

pub fn terms(r: &ResNetArch, training: &Training) -> Vec<ActTerm> {
    let b = training.micro_batch.max(1) as f64;
    let image = training.image_size.unwrap_or(r.image_size).max(8);
    let x = if training.precision == Precision::Fp32 { F32 } else { HALF };
    let pixel = if training.precision == Precision::Fp32 { F32 } else { HALF };
    let mut out = Vec::new();
    let mut push = |name: &'static str, bytes: f64| {
        out.push(ActTerm { name, bytes, split: Split::Sequence, place: Place::Input, attention_core: false, input_gradient_only: false });
    };
    // BatchNorm input plus its per-channel fp32 statistics.
    let bn = |channels: u64, side: u64| x * b * channels as f64 * (side * side) as f64 + 2.0 * F32 * channels as f64;
    let map = |channels: u64, side: u64| x * b * channels as f64 * (side * side) as f64;

    push("input image", pixel * b * r.channels as f64 * (image * image) as f64);
    let stem = conv_out(image, 7, 2, 3);
    push("stem BatchNorm input", bn(r.stem_width, stem));
    push("stem ReLU output", map(r.stem_width, stem));
    let mut side = conv_out(stem, 3, 2, 1);
    push("max-pool indices (int64)", INT64 * b * r.stem_width as f64 * (side * side) as f64);
    push("max-pool output (first block input)", map(r.stem_width, side));

    let mut stage_bytes = 0.0;
    let mut stage = 0;
    let blocks = resnet_blocks(r);
    for (i, block) in blocks.iter().enumerate() {
        let out_side = if block.stride > 1 { conv_out(side, 3, block.stride, 1) } else { side };
        if r.bottleneck {
            stage_bytes += bn(block.mid, side) + map(block.mid, side); // 1×1 reduce: BN input, ReLU output
            stage_bytes += bn(block.mid, out_side) + map(block.mid, out_side); // 3×3 (strided)
            stage_bytes += bn(block.c_out, out_side); // 1×1 expand: BN input
        } else {
            stage_bytes += bn(block.c_out, out_side) + map(block.c_out, out_side); // first 3×3
            stage_bytes += bn(block.c_out, out_side); // second 3×3: BN input
        }
        if block.shortcut {
            stage_bytes += bn(block.c_out, out_side); // projection shortcut BN input
        }
        stage_bytes += map(block.c_out, out_side); // ReLU after the residual add
        side = out_side;
        let stage_ends = blocks.get(i + 1).is_none_or(|next| next.stride > 1);
        if stage_ends {
            push(STAGE_NAMES[stage.min(STAGE_NAMES.len() - 1)], stage_bytes);
            stage += 1;
            stage_bytes = 0.0;
        }
    }
    let last = r.widths.last().copied().unwrap_or(r.stem_width) as f64;
    push("classifier input and log-softmax", x * b * last + F32 * b * r.classes as f64);
    out
}
