//! Pieces the diffusion transformers share: the parameter tensors of diffusers' common modules
//! (`nn.Linear` with its bias; `TimestepEmbedding` and `PixArtAlphaTextProjection` in
//! `embeddings.py`; `FeedForward` in `attention.py` lines 1682–1760; one attention stream's
//! q/k/v/out), the ops their forwards share over a [`Tape`] (adaLN modulation, gated
//! residuals, feed-forward, RoPE) and the activation width of a no-grad forward.

use crate::model::arch::param::{LinearKind, ParamTensor, Scope, TpSplit};
use crate::model::diffusion::Run;
use crate::model::precision::Precision;

const S: Scope = Scope::Layer;
const R: TpSplit = TpSplit::Replicated;

/// A `nn.Linear(inp, out)` with its bias: weight `[out, inp]` and bias `[out]`.
pub(crate) fn linear(out: &mut Vec<ParamTensor>, name: &'static str, kinds: Option<&'static [LinearKind]>, o: u64, i: u64) {
    out.push(match kinds {
        Some(k) => ParamTensor::linear(name, k, o, i, S),
        None => ParamTensor::new(name, &[o, i], S, R),
    });
    out.push(ParamTensor::vector(name, o, S, R));
}

/// A LoRA-targetable projection `inp → out` of `kind`, with its bias when the module has one
/// (`Attention`'s `bias` / `out_bias`).
pub(crate) fn projection(out: &mut Vec<ParamTensor>, name: &'static str, kind: &'static [LinearKind], o: u64, i: u64, bias: bool) {
    out.push(ParamTensor::linear(name, kind, o, i, S));
    if bias {
        out.push(ParamTensor::vector(name, o, S, R));
    }
}

/// diffusers' `TimestepEmbedding(in, h)` / `PixArtAlphaTextProjection(in, h)`: two linears
/// (`embeddings.py`).
pub(crate) fn embedder(out: &mut Vec<ParamTensor>, name: &'static str, inp: u64, h: u64) {
    linear(out, name, None, h, inp);
    linear(out, name, None, h, h);
}

/// diffusers' `FeedForward(dim, inner)` with a GELU projection (`attention.py`): `net.0.proj`, `net.2`.
pub(crate) fn feed_forward(out: &mut Vec<ParamTensor>, h: u64, inner: u64) {
    linear(out, "feed-forward up (ff.net.0.proj)", Some(&[LinearKind::Up]), inner, h);
    linear(out, "feed-forward down (ff.net.2)", Some(&[LinearKind::Down]), h, inner);
}

/// q/k/v/out of one attention stream (`to_q/to_k/to_v/to_out.0`, or the context stream's
/// `add_q_proj/add_k_proj/add_v_proj/to_add_out`), with biases.
pub(crate) fn attention(out: &mut Vec<ParamTensor>, h: u64, with_out: bool, text: bool) {
    let [q, k, v, o] = kinds(text);
    linear(out, "attention q (to_q)", Some(q), h, h);
    linear(out, "attention k (to_k)", Some(k), h, h);
    linear(out, "attention v (to_v)", Some(v), h, h);
    if with_out {
        linear(out, "attention out (to_out.0)", Some(o), h, h);
    }
}

/// The LoRA kinds of one stream's q, k, v and out projections: the image stream's
/// `to_q/to_k/to_v/to_out.0`, or (`text`) the text stream's `add_q_proj/add_k_proj/
/// add_v_proj/to_add_out`.
pub(crate) fn kinds(text: bool) -> [&'static [LinearKind]; 4] {
    if text {
        [&[LinearKind::AddQ], &[LinearKind::AddK], &[LinearKind::AddV], &[LinearKind::AddO]]
    } else {
        [&[LinearKind::Q], &[LinearKind::K], &[LinearKind::V], &[LinearKind::O]]
    }
}

/// The pieces of a forward the diffusion-transformer simulations share (over `autograd.rs`'s
/// [`Tape`]).
pub(crate) mod ops {
    use crate::model::arch::param::LinearKind;
    use crate::model::diffusion::autograd::{Tape, T, W};

    /// `TimestepEmbedding` / `PixArtAlphaTextProjection` (`embeddings.py`): linear → SiLU/GELU →
    /// linear on a `b × inp` input.
    pub(crate) fn embedder(tape: &mut Tape, x: T, inp: u64, h: u64) -> T {
        let w = tape.weight(None);
        let y = tape.linear(x, inp, h, w);
        let y = tape.activation(y);
        tape.linear(y, h, h, w)
    }

    /// An adaLN modulation `linear(silu(temb))` of `chunks × h` (`AdaLayerNormZero*`,
    /// `AdaLayerNormContinuous`).
    pub(crate) fn modulation(tape: &mut Tape, temb: T, h: u64, chunks: u64) -> T {
        if temb.grad {
            tape.save("activation inputs", temb);
        }
        let s = tape.new_tensor(temb.elems, temb.bytes, temb.grad);
        let w = tape.weight(None);
        tape.linear(s, h, chunks * h, w)
    }

    /// `norm(x) * (1 + scale[:, None]) + shift[:, None]` with `emb`'s chunk as scale: returns
    /// (the layer-norm output, the modulated input).
    pub(crate) fn modulate(tape: &mut Tape, x: T, emb: T, h: u64) -> (T, T) {
        let n = tape.layer_norm(x, h);
        let one_plus = tape.new_tensor(tape.batch * h as f64, emb.bytes, emb.grad);
        let m = tape.mul(n, one_plus);
        let shift = Tape::view(emb, tape.batch * h as f64);
        (n, tape.add2(m, shift))
    }

    /// `gate[:, None] * y` with the gate a chunk of `emb`.
    pub(crate) fn gated(tape: &mut Tape, emb: T, y: T, h: u64) -> T {
        let gate = Tape::view(emb, tape.batch * h as f64);
        tape.mul(gate, y)
    }

    /// diffusers' `FeedForward(h, inner)` with a GELU(tanh) projection (`ff.net.0.proj`, `ff.net.2`).
    pub(crate) fn feed_forward(tape: &mut Tape, x: T, h: u64, inner: u64) -> T {
        let w_up = tape.weight(Some(LinearKind::Up));
        let up = tape.linear(x, h, inner, w_up);
        let act = tape.activation(up);
        let w_down = tape.weight(Some(LinearKind::Down));
        tape.linear(act, inner, h, w_down)
    }

    /// q, k, v projections of one stream (`text`: the text stream's `add_*_proj`).
    pub(crate) fn qkv(tape: &mut Tape, x: T, h: u64, text: bool) -> (T, T, T) {
        let [q, k, v, _] = super::kinds(text);
        let (wq, wk, wv) = (tape.weight(Some(q[0])), tape.weight(Some(k[0])), tape.weight(Some(v[0])));
        (tape.linear(x, h, h, wq), tape.linear(x, h, h, wk), tape.linear(x, h, h, wv))
    }

    /// `apply_rotary_emb(x, (cos, sin))` (`embeddings.py` lines 960–1000): `(x.float() * cos +
    /// rotated.float() * sin).to(x.dtype)`; the products by the constant tables save only them.
    pub(crate) fn rotary(tape: &mut Tape, x: T, cos: T, sin: T) -> T {
        if x.grad {
            tape.save("rotary tables", cos);
            tape.save("rotary tables", sin);
        }
        tape.new_tensor(x.elems, x.bytes, x.grad)
    }

    /// RoPE written in place into (part of) `x` (`x[..] = apply_rotary_emb(x[..], …)`): keeps
    /// the tables; `x` keeps its storage.
    pub(crate) fn rotary_in_place(tape: &mut Tape, x: T, cos: T, sin: T) -> T {
        if x.grad {
            tape.save("rotary tables", cos);
            tape.save("rotary tables", sin);
        }
        x
    }

    /// `W` of an out projection (`to_out.0`, or `text`: `to_add_out`).
    pub(crate) fn w_out(tape: &Tape, text: bool) -> W {
        tape.weight(Some(super::kinds(text)[3][0]))
    }
}

/// Bytes of an activation in a no-grad forward: fp32, else the 16-bit weights' type (pipelines
/// run the denoiser in `torch_dtype=torch.bfloat16`).
pub(crate) fn act_bytes(run: &Run) -> f64 {
    if run.precision == Precision::Fp32 {
        4.0
    } else {
        2.0
    }
}
