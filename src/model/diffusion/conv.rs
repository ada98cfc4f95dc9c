//! Parameter tensors of the convolution and normalisation layers the video VAEs are built
//! from, in [`Scope::Vae`]: an `nn.Conv2d`/`nn.Conv3d` weight is `[out, in / groups, *kernel]`
//! with an `out`-wide bias when `bias=True` (PyTorch `torch/nn/modules/conv.py`,
//! `_ConvNd.__init__`); a 3-D kernel's time and height sides are folded into one dimension
//! (the count is the same).

use crate::model::arch::param::{ParamTensor, Scope, TpSplit};

/// A convolution of `kernel` (1, 2 or 3 sides) from `cin` to `cout` channels in `groups`.
pub fn conv(out: &mut Vec<ParamTensor>, name: &'static str, cout: u64, cin: u64, kernel: &[u64], groups: u64, bias: bool) {
    let per_group = cin / groups.max(1);
    let dims: Vec<u64> = match kernel {
        [t, h, w] => vec![cout, per_group, t * h, *w],
        [h, w] => vec![cout, per_group, *h, *w],
        [k] => vec![cout, per_group, *k],
        _ => vec![cout, per_group],
    };
    out.push(ParamTensor::new(name, &dims, Scope::Vae, TpSplit::Replicated));
    if bias {
        out.push(ParamTensor::vector(name, cout, Scope::Vae, TpSplit::Replicated));
    }
}

/// A `c`-wide per-channel vector (a norm's weight or bias, an RMS norm's `gamma`).
pub fn vector(out: &mut Vec<ParamTensor>, name: &'static str, c: u64) {
    out.push(ParamTensor::vector(name, c, Scope::Vae, TpSplit::Replicated));
}

/// An `nn.Linear(cin, cout)` with or without bias.
pub fn linear(out: &mut Vec<ParamTensor>, name: &'static str, cout: u64, cin: u64, bias: bool) {
    out.push(ParamTensor::new(name, &[cout, cin], Scope::Vae, TpSplit::Replicated));
    if bias {
        vector(out, name, cout);
    }
}
