//! The shape checks every KL-style VAE config shares (`AutoencoderKL`,
//! `AutoencoderKLCogVideoX`, `AutoencoderKLHunyuanVideo`): positive channel counts, a bounded
//! block count per level, 1 to 8 levels, and GroupNorm groups that divide every level's width
//! (`torch.nn.GroupNorm` refuses `num_channels % num_groups != 0`).

use crate::error::InputError;
use crate::model::arch::param::check_dim;

/// The config's channel counts, blocks per level and levels (`block_out_channels`), checked
/// against its `norm_num_groups`; a level whose width the groups do not divide names
/// `norm_num_groups`.
pub(crate) fn check_levels(in_channels: u64, out_channels: u64, latent_channels: u64, layers_per_block: u64, channels: &[u64], norm_num_groups: u64) -> Result<(), InputError> {
    check_dim("in_channels", in_channels)?;
    check_dim("out_channels", out_channels)?;
    check_dim("latent_channels", latent_channels)?;
    check_dim("layers_per_block", layers_per_block)?;
    super::check_blocks("layers_per_block", layers_per_block)?;
    check_dim("norm_num_groups", norm_num_groups)?;
    if channels.is_empty() || channels.len() > 8 {
        return Err(InputError::new("block_out_channels", "needs 1 to 8 levels"));
    }
    for &c in channels {
        check_dim("block_out_channels", c)?;
        if !c.is_multiple_of(norm_num_groups) {
            return Err(InputError::new("norm_num_groups", format!("must divide every block_out_channels entry, {c} is not a multiple of {norm_num_groups}")));
        }
    }
    Ok(())
}
