//! A ResNet as Hugging Face's `ResNetConfig` describes it, and its parameter tensors
//! (He et al. 2016, Table 1; identical counts to torchvision's resnet18/50/101, e.g.
//! 25,557,032 for ResNet-50).

use serde::{Deserialize, Serialize};

use super::param::{check_dim, ParamTensor, Scope, TpSplit};
use crate::error::InputError;

/// A ResNet: stem, stages of basic or bottleneck blocks, classifier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResNetArch {
    /// Channels after the 7×7 stem.
    pub stem_width: u64,
    /// Output channels of each stage.
    pub widths: Vec<u64>,
    /// Blocks per stage.
    pub depths: Vec<u64>,
    /// Bottleneck blocks (ResNet-50 and up) or basic blocks (ResNet-18/34).
    pub bottleneck: bool,
    pub channels: u64,
    pub classes: u64,
    /// Resolution the model is usually trained at (the default input size).
    pub image_size: u64,
}

impl Default for ResNetArch {
    fn default() -> Self {
        ResNetArch { stem_width: 64, widths: vec![256, 512, 1024, 2048], depths: vec![3, 4, 6, 3], bottleneck: true, channels: 3, classes: 1000, image_size: 224 }
    }
}

impl ResNetArch {
    pub(super) fn check(&self) -> Result<(), InputError> {
        check_dim("stem_width", self.stem_width)?;
        check_dim("channels", self.channels)?;
        check_dim("classes", self.classes)?;
        check_dim("image_size", self.image_size)?;
        if self.widths.is_empty() || self.widths.len() != self.depths.len() || self.widths.len() > 64 {
            return Err(InputError::new("depths", "needs 1 to 64 stages, as many as widths"));
        }
        for (&w, &d) in self.widths.iter().zip(&self.depths) {
            check_dim("widths", w)?;
            if d > 1024 {
                return Err(InputError::new("depths", format!("{d} blocks in one stage is too many")));
            }
        }
        Ok(())
    }

    /// Parameter tensors of transformers' `ResNetForImageClassification`.
    pub(super) fn param_tensors(&self) -> Vec<ParamTensor> {
        let mut out = Vec::new();
        conv_bn(&mut out, "embedder.conv", self.stem_width, self.channels, 7);
        for block in resnet_blocks(self) {
            if block.shortcut {
                conv_bn(&mut out, "shortcut.conv", block.c_out, block.c_in, 1);
            }
            if self.bottleneck {
                conv_bn(&mut out, "conv1x1a", block.mid, block.c_in, 1);
                conv_bn(&mut out, "conv3x3", block.mid, block.mid, 3);
                conv_bn(&mut out, "conv1x1b", block.c_out, block.mid, 1);
            } else {
                conv_bn(&mut out, "conv3x3a", block.c_out, block.c_in, 3);
                conv_bn(&mut out, "conv3x3b", block.c_out, block.c_out, 3);
            }
        }
        let last = self.widths.last().copied().unwrap_or(self.stem_width);
        out.push(ParamTensor::new("classifier", &[self.classes, last], Scope::Output, TpSplit::Replicated));
        out.push(ParamTensor::vector("classifier.bias", self.classes, Scope::Output, TpSplit::Replicated));
        out
    }
}

/// One convolution's weight (no bias: HF `ResNetConvLayer` uses `bias=False`) and its
/// BatchNorm's weight and bias (running statistics are buffers, not parameters).
fn conv_bn(out: &mut Vec<ParamTensor>, name: &'static str, c_out: u64, c_in: u64, k: u64) {
    out.push(ParamTensor::new(name, &[c_out, c_in, k, k], Scope::Input, TpSplit::Replicated));
    out.push(ParamTensor::vector("batchnorm", c_out, Scope::Input, TpSplit::Replicated));
    out.push(ParamTensor::vector("batchnorm", c_out, Scope::Input, TpSplit::Replicated));
}

/// One residual block of a ResNet, with the downsampling factor of its output relative to
/// the stem output (after the max-pool).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResNetBlock {
    pub c_in: u64,
    pub mid: u64,
    pub c_out: u64,
    /// Spatial stride of this block (2 in the first block of stages 2..).
    pub stride: u64,
    /// Downsampling of the block's output relative to the input image (4, 8, 16, 32).
    pub out_reduction: u64,
    pub shortcut: bool,
}

/// The blocks of a ResNet in order (HF `ResNetEncoder`: stage 0 keeps stride 1, the first
/// block of every later stage has stride 2; bottleneck reduction 4).
pub fn resnet_blocks(r: &ResNetArch) -> Vec<ResNetBlock> {
    let mut blocks = Vec::new();
    let mut c_in = r.stem_width;
    let mut reduction = 4;
    for (stage, (&width, &depth)) in r.widths.iter().zip(&r.depths).enumerate() {
        for i in 0..depth {
            let stride = if stage > 0 && i == 0 { 2 } else { 1 };
            reduction *= stride;
            let mid = if r.bottleneck { width / 4 } else { width };
            blocks.push(ResNetBlock { c_in, mid, c_out: width, stride, out_reduction: reduction, shortcut: c_in != width || stride != 1 });
            c_in = width;
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::super::Architecture;
    use super::*;

    #[test]
    fn resnet50_matches_torchvision() {
        assert_eq!(Architecture::Resnet(ResNetArch::default()).param_count(), 25_557_032.0);
    }
}
