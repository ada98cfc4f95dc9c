//! What autograd keeps for backward, op by op: a forward of a diffusion transformer is written
//! as the sequence of torch ops its diffusers module runs, over tensors that carry only their
//! size, element type, storage and whether they require grad. Each op saves what its
//! `derivatives.yaml` formula needs (PyTorch `tools/autograd/derivatives.yaml`):
//! - `linear` (`addmm`/`mm`): the input when the weight requires grad; the weight (a parameter,
//!   not counted) when the input does. Under CUDA autocast (`autocast_mode.cpp`: `linear` is on
//!   the lower-precision list) a fp32 input is cast to 16 bits by every linear that reads it, and
//!   a fp32 weight's cast copy is kept when the input requires grad ([`Saved`] "autocast weight
//!   copies"). A 3-D input whose rows are not contiguous (a slice of a longer sequence with a
//!   batch above 1) is copied by `reshape` before the matmul.
//! - PEFT LoRA (`peft/tuners/lora/layer.py` `Linear.forward`): the frozen base saves nothing for
//!   its weight; `lora_A` saves its input (cast again under autocast), `lora_B` the rank-wide
//!   `lora_A` output; fp32 adapters cast a 16-bit input per adapter, and under autocast keep
//!   their cast weight copies; `lora_dropout` keeps a boolean mask and the dropped copy per
//!   adapter.
//! - `native_layer_norm`: input, mean and rstd (fp32); autocast runs it in fp32 (`layer_norm` is
//!   on the fp32 list: a 16-bit input is copied up first, and the copy is what is saved).
//! - `_fused_rms_norm` (`torch.nn.RMSNorm`): input and rstd (fp32); fp32 under autocast likewise.
//! - `mul`: each operand is saved when the other requires grad; `add`, `cat`, views: nothing.
//! - `gelu`/`silu`: their input.
//! - `scaled_dot_product_attention` on CUDA (`sdp_utils.cpp` kernel choice): flash for 16-bit
//!   q/k/v (saves q, k, v, the output, a fp32 logsumexp of b × heads × s and two RNG words),
//!   memory-efficient in fp32 (logsumexp padded to a multiple of 32, two int64 seeds); autocast
//!   casts fp32 q/k/v to 16 bits first (the copies are saved).
//! - `torch.utils.checkpoint` (non-reentrant, diffusers' `enable_gradient_checkpointing`): a
//!   checkpointed block saves nothing inside; its tensor inputs are held until backward.
//!
//! Every saved storage is counted once (views share their base's storage), as
//! `tests/measure/common.py` `SavedTensorRecorder` counts them.
//!
//! Each op that makes a tensor needing a gradient is also recorded in a [`Graph`] (its inputs,
//! the gradients its backward makes, the parameter gradients it makes first, when its saved
//! tensors go), which `backward_walk.rs` walks back to find the backward's working set.

use std::collections::HashSet;

use super::backward_walk::{Graph, Input, Walk};

use crate::model::diffusion::{LoraRun, Run, Saved};
use crate::model::precision::Precision;

/// How the forward runs: fp32, pure 16-bit weights and activations, or autocast over fp32 weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Fp32,
    Half,
    Autocast,
}

impl Mode {
    pub(crate) fn of(p: Precision) -> Mode {
        match p {
            Precision::Fp32 => Mode::Fp32,
            Precision::Bf16 => Mode::Half,
            Precision::Bf16Mixed | Precision::Fp16Mixed | Precision::Fp8Mixed => Mode::Autocast,
        }
    }
}

/// A tensor of the simulated forward.
#[derive(Clone, Copy, Debug)]
pub(crate) struct T {
    id: u32,
    /// Elements of this view.
    pub(crate) elems: f64,
    /// Bytes per element.
    pub(crate) bytes: f64,
    /// Bytes of its storage (a view's base).
    store: f64,
    pub(crate) grad: bool,
    /// A piece of `chunk`/`split`: its gradient is its own size, gathered with the other
    /// pieces' by `SplitBackward` (not a zero-filled base per piece).
    piece: bool,
}

/// A linear layer's weight in this run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum W {
    /// Trained (full fine-tuning).
    Trained,
    /// Frozen, no adapter.
    Frozen,
    /// Frozen with a PEFT LoRA adapter of this rank.
    Lora(u64),
}

/// The simulated forward and what it has saved so far.
pub(crate) struct Tape {
    pub(crate) mode: Mode,
    pub(crate) batch: f64,
    lora: Option<LoraRun>,
    next: u32,
    kept: HashSet<u32>,
    /// Inside a checkpointed block: what the block would save, had it not been checkpointed
    /// (its recomputation in backward saves it again), and the storages counted in it.
    block: Option<(f64, HashSet<u32>)>,
    groups: Vec<Saved>,
    /// The ops recorded for the backward walk, and the last one's output (the prediction).
    graph: Graph,
    last: Option<T>,
    /// Tensors the running block's Python function keeps bound until it returns ([`Self::hold`]).
    held: Vec<u32>,
    /// Forward FLOPs so far: 2 per multiply-add of every matmul (LoRA's too) and of the two
    /// attention products (q·kᵀ and p·v).
    pub(crate) flops: f64,
}

impl Tape {
    pub(crate) fn new(run: &Run) -> Tape {
        Tape {
            mode: Mode::of(run.precision),
            batch: run.batch as f64,
            lora: run.lora.clone(),
            next: 0,
            kept: HashSet::new(),
            block: None,
            groups: Vec::new(),
            graph: Graph::default(),
            last: None,
            held: Vec::new(),
            flops: 0.0,
        }
    }

    /// Bytes of an activation in the stream (fp32, or 16 bits in pure 16-bit and for
    /// autocast's matmul outputs).
    pub(crate) fn act(&self) -> f64 {
        if self.mode == Mode::Fp32 {
            4.0
        } else {
            2.0
        }
    }

    /// Bytes of the model's inputs (latents, text embeddings): 16-bit in a pure 16-bit run and in
    /// the LoRA scripts, which cast them to `weight_dtype` (`train_dreambooth_lora_flux.py`:
    /// `model_input.to(dtype=weight_dtype)`), else fp32.
    pub(crate) fn input_bytes(&self) -> f64 {
        if self.mode == Mode::Half || (self.mode == Mode::Autocast && self.lora.is_some()) {
            2.0
        } else {
            4.0
        }
    }

    /// The weight of a linear whose LoRA kind is `kind` (None: not a LoRA target).
    pub(crate) fn weight(&self, kind: Option<crate::model::arch::param::LinearKind>) -> W {
        match (&self.lora, kind) {
            (None, _) => W::Trained,
            (Some(l), Some(k)) if l.targets.contains(&k) => W::Lora(l.rank),
            (Some(_), _) => W::Frozen,
        }
    }

    /// Whether parameters outside the LoRA targets are trained (a norm's weight, a table).
    pub(crate) fn full(&self) -> bool {
        self.lora.is_none()
    }

    /// A new tensor of `elems` elements of `bytes` each.
    pub(crate) fn new_tensor(&mut self, elems: f64, bytes: f64, grad: bool) -> T {
        self.next += 1;
        self.graph.made(self.next, elems * bytes);
        T { id: self.next, elems, bytes, store: elems * bytes, grad, piece: false }
    }

    /// Bytes of a parameter's gradient: the parameter's type (fp32 masters under autocast).
    fn param_bytes(&self) -> f64 {
        if self.mode == Mode::Half {
            2.0
        } else {
            4.0
        }
    }

    /// Record the op that made `out` from `inputs` (those needing a gradient get a fresh one:
    /// a slice's is its whole base, `slice_backward`), making `params` bytes of parameter
    /// gradients and `scratch` bytes beside them in its backward. Nothing when `out` needs no
    /// gradient (the op is not in the graph).
    fn record(&mut self, out: T, inputs: &[T], params: f64, scratch: f64) {
        let ins = inputs.iter().filter(|x| x.grad).map(|&x| Input { id: x.id, cost: grad_bytes(x), keep: grad_bytes(x), piece: x.piece }).collect();
        self.record_inputs(out, inputs, ins, params, scratch);
    }

    /// Record the op that made `out` from `all` (its tensor inputs), whose backward makes the
    /// gradients `inputs`.
    fn record_inputs(&mut self, out: T, all: &[T], inputs: Vec<Input>, params: f64, scratch: f64) {
        self.graph.lives.op(out.id, all.iter().map(|t| t.id));
        if out.grad {
            self.graph.op(out.id, out.elems * out.bytes, inputs, params, scratch);
            self.last = Some(out);
        }
    }

    /// An op of `x` alone whose result has `x`'s size and type (an elementwise op, a copy, a
    /// constant added), its backward making `x`'s gradient and `scratch` bytes beside it.
    pub(crate) fn derived(&mut self, x: T, scratch: f64) -> T {
        self.map(x, x.elems, scratch)
    }

    /// An op of `x` alone that saves nothing and makes `elems` elements of `x`'s type (a
    /// nearest up-sampling), its backward making `x`'s gradient and `scratch` bytes beside it.
    pub(crate) fn map(&mut self, x: T, elems: f64, scratch: f64) -> T {
        let y = self.new_tensor(elems, x.bytes, x.grad);
        self.record(y, &[x], 0.0, scratch);
        y
    }

    /// A `k × k` convolution `cin → cout` whose output has `spatial` times the input's positions
    /// (1, or ¼ for a stride-2 down-sampling): `ConvolutionBackward0` keeps the input whenever
    /// the input or the weight needs a gradient.
    pub(crate) fn conv(&mut self, x: T, cin: u64, cout: u64, k: u64, spatial: f64, w: W) -> T {
        let trained = w == W::Trained;
        let xin = if self.mode == Mode::Autocast && x.bytes == 4.0 { self.cast(x, 2.0) } else { x };
        if trained || x.grad {
            self.save("linear inputs", xin);
        }
        let act = self.act();
        let y = self.new_tensor(x.elems / cin as f64 * cout as f64 * spatial, act, x.grad || trained);
        let params = if trained { (cin * cout * k * k) as f64 * self.param_bytes() } else { 0.0 };
        self.record(y, &[xin], params, 0.0);
        y
    }

    /// `GroupNorm(groups, channels)` with its affine weight and bias: `native_group_norm` keeps
    /// the input and a mean and rstd per (sample, group).
    pub(crate) fn group_norm(&mut self, x: T, channels: u64, groups: u64) -> T {
        let x = T { grad: x.grad || self.full(), ..x };
        let width = (x.elems / (self.batch * groups as f64)).max(1.0) as u64;
        let params = if self.full() { 2.0 * channels as f64 * self.param_bytes() } else { 0.0 };
        self.layer_norm_params(x, width, params)
    }

    /// A view of `t` with `elems` elements (same storage).
    pub(crate) fn view(t: T, elems: f64) -> T {
        T { elems, ..t }
    }

    /// One of the pieces of `t.chunk(..)` with `elems` elements (same storage).
    pub(crate) fn chunk(t: T, elems: f64) -> T {
        T { elems, piece: true, ..t }
    }

    pub(crate) fn save(&mut self, name: &'static str, t: T) {
        if let Some((bytes, kept)) = self.block.as_mut() {
            self.graph.lives.block_save(self.next);
            // The block's inputs are held already; the rest it saves again when recomputed.
            if !self.kept.contains(&t.id) && kept.insert(t.id) {
                *bytes += t.store;
                self.graph.saved(t.store);
                self.graph.lives.saved(t.id, self.next, true);
            }
        } else if self.kept.insert(t.id) {
            self.add(name, t.store);
            self.graph.lives.saved(t.id, self.next, false);
        }
    }

    fn add(&mut self, name: &'static str, bytes: f64) {
        self.graph.saved(bytes);
        if let Some((block, _)) = self.block.as_mut() {
            *block += bytes;
            return;
        }
        match self.groups.iter_mut().find(|g| g.name == name) {
            Some(g) => g.bytes += bytes,
            None => self.groups.push(Saved { name, bytes }),
        }
    }

    /// `x.to(bytes)`: itself when already of that type.
    pub(crate) fn cast(&mut self, x: T, bytes: f64) -> T {
        if x.bytes == bytes {
            x
        } else {
            let y = self.new_tensor(x.elems, bytes, x.grad);
            self.record(y, &[x], 0.0, 0.0);
            y
        }
    }

    /// The input a matmul reads: autocast's 16-bit copy of a fp32 input, or `reshape`'s copy of
    /// a non-contiguous slice (`strided`), else the tensor itself.
    fn matmul_input(&mut self, x: T, strided: bool) -> T {
        if self.mode == Mode::Autocast && x.bytes == 4.0 {
            self.cast(x, 2.0)
        } else if strided && self.batch > 1.0 {
            self.derived(x, 0.0)
        } else {
            x
        }
    }

    /// `nn.Linear(inp → out)` on `x` (its last dimension `inp`); `strided`: `x` is a slice of a
    /// longer sequence.
    pub(crate) fn linear_strided(&mut self, x: T, inp: u64, out: u64, w: W, strided: bool) -> T {
        let rows = x.elems / inp as f64;
        self.flops += 2.0 * rows * (inp * out) as f64;
        let xin = self.matmul_input(x, strided);
        if w == W::Trained {
            self.save("linear inputs", xin);
            if self.mode == Mode::Autocast && x.grad {
                self.add("weight copies", (inp * out) as f64 * 2.0);
            }
        }
        let act = self.act();
        let y = self.new_tensor(rows * out as f64, act, x.grad || w != W::Frozen);
        let mut params = if w == W::Trained { (inp * out) as f64 * self.param_bytes() } else { 0.0 };
        let mut scratch = 0.0;
        if let W::Lora(r) = w {
            self.flops += 2.0 * rows * (r * (inp + out)) as f64;
            let fp32 = self.lora.as_ref().is_some_and(|l| l.fp32);
            // PEFT casts the input to the adapter's dtype first (`_cast_input_dtype`,
            // `tuners_utils.py` lines 2220–2235): a 16-bit input of fp32 adapters becomes a
            // per-adapter fp32 copy, which autocast casts back to 16 bits (again per adapter)
            let dropout = self.lora.as_ref().is_some_and(|l| l.dropout);
            let a_in = if dropout {
                // `lora_dropout` (`nn.Dropout` on the cast input, per adapter): its boolean mask is
                // kept when the input needs a gradient, and `lora_A` reads (and keeps) the dropped copy, cast by autocast
                let xc = if fp32 && x.bytes == 2.0 { 4.0 } else { x.bytes };
                if x.grad {
                    let mask = self.new_tensor(x.elems, 1.0, false);
                    self.save("LoRA adapter inputs", mask);
                }
                let dropped = self.new_tensor(x.elems, xc, x.grad);
                self.matmul_input(dropped, false)
            } else if fp32 && x.bytes == 2.0 {
                let bytes = if self.mode == Mode::Autocast { 2.0 } else { 4.0 };
                self.new_tensor(x.elems, bytes, x.grad)
            } else {
                self.matmul_input(x, strided)
            };
            self.save("LoRA adapter inputs", a_in);
            let a_bytes = if self.mode == Mode::Fp32 || (self.mode == Mode::Half && fp32) { 4.0 } else { 2.0 };
            let a_out = self.new_tensor(rows * r as f64, a_bytes, true);
            self.save("LoRA adapter inputs", a_out);
            // backward: `lora_B`'s input gradient (rank-wide), then, when the input needs one,
            // `lora_A`'s (the cast input's size and type) and its cast back, accumulated into the
            // base's; the adapters' own gradients in their type
            scratch = rows * r as f64 * a_bytes + if x.grad { x.elems * (a_in.bytes + x.bytes) } else { 0.0 };
            params = r as f64 * (inp + out) as f64 * if fp32 { 4.0 } else { self.param_bytes() };
            if self.mode == Mode::Autocast && fp32 {
                let copies = if x.grad { inp + out } else { out } as f64 * r as f64 * 2.0;
                self.add("weight copies", copies);
            }
        }
        self.record(y, &[xin], params, scratch);
        y
    }

    pub(crate) fn linear(&mut self, x: T, inp: u64, out: u64, w: W) -> T {
        self.linear_strided(x, inp, out, w, false)
    }

    /// A linear over a transposed view (rows not contiguous for any batch, Sana's stream after
    /// `flatten(2).transpose(1, 2)`): `reshape` copies it before the matmul.
    pub(crate) fn linear_transposed(&mut self, x: T, inp: u64, out: u64, w: W) -> T {
        let copy = if self.mode == Mode::Autocast && x.bytes == 4.0 { x } else { self.derived(x, 0.0) };
        self.linear_strided(copy, inp, out, w, false)
    }

    /// A depthwise `k × k` convolution over `channels` (GLUMBConv's `conv_depth`): keeps its
    /// input (and the cast weight under autocast).
    pub(crate) fn depthwise(&mut self, x: T, channels: u64, k: u64) -> T {
        self.flops += 2.0 * x.elems * (k * k) as f64;
        let xin = if self.mode == Mode::Autocast && x.bytes == 4.0 { self.cast(x, 2.0) } else { x };
        if self.full() || x.grad {
            self.save("linear inputs", xin);
        }
        if self.full() && self.mode == Mode::Autocast {
            self.add("weight copies", (channels * k * k) as f64 * 2.0);
        }
        let act = self.act();
        let y = self.new_tensor(x.elems, act, x.grad || self.full());
        let params = if self.full() { (channels * k * k) as f64 * self.param_bytes() } else { 0.0 };
        self.record(y, &[xin], params, 0.0);
        y
    }

    /// A convolution whose kernel equals its stride (a patch embedding, a 1×1 conv) over `x`,
    /// seen as a linear over patches of `inp` = channels × patch volume:
    /// `convolution_backward` keeps the input and the (cast) weight whenever either needs a
    /// gradient.
    pub(crate) fn patch_conv(&mut self, x: T, inp: u64, out: u64, w: W) -> T {
        if w == W::Trained && self.mode == Mode::Autocast && !x.grad {
            self.add("weight copies", (inp * out) as f64 * 2.0);
        }
        if w == W::Frozen && x.grad {
            // unlike `mm`, `ConvolutionBackward0` keeps its input even for a frozen weight
            let xin = if self.mode == Mode::Autocast && x.bytes == 4.0 { self.new_tensor(x.elems, 2.0, x.grad) } else { x };
            self.save("linear inputs", xin);
        }
        self.linear(x, inp, out, w)
    }

    /// `native_layer_norm` over the last dimension (`width`), without affine parameters.
    pub(crate) fn layer_norm(&mut self, x: T, width: u64) -> T {
        self.layer_norm_params(x, width, 0.0)
    }

    /// `native_layer_norm` whose affine parameters make `params` bytes of gradients.
    fn layer_norm_params(&mut self, x: T, width: u64, params: f64) -> T {
        let x = if self.mode == Mode::Autocast { self.cast(x, 4.0) } else { x };
        if x.grad {
            self.save("norm inputs and statistics", x);
            let rows = x.elems / width as f64;
            let mean = self.new_tensor(rows, 4.0, false);
            let rstd = self.new_tensor(rows, 4.0, false);
            self.save("norm inputs and statistics", mean);
            self.save("norm inputs and statistics", rstd);
        }
        let y = self.new_tensor(x.elems, x.bytes, x.grad);
        self.record(y, &[x], params, 0.0);
        y
    }

    /// A LayerNorm with weight and bias: besides the input and statistics, `native_layer_norm`
    /// keeps the weight and bias it ran with, so fp32 copies of 16-bit ones are kept: always for
    /// `FP32LayerNorm` (`fp32_module`; `normalization.py` lines 78–93 `.float()` them), under
    /// autocast for `nn.LayerNorm` (a LoRA run's 16-bit base; `layer_norm` runs in fp32).
    pub(crate) fn layer_norm_affine(&mut self, x: T, width: u64, fp32_module: bool) -> T {
        let sixteen = self.mode == Mode::Half || (self.mode == Mode::Autocast && !self.full());
        let weight16 = if fp32_module { sixteen } else { self.mode == Mode::Autocast && !self.full() };
        if weight16 && (x.grad || self.full()) {
            self.add("weight copies", 2.0 * width as f64 * 4.0);
        }
        let grad = x.grad || self.full();
        let x = T { grad, ..x };
        let params = if self.full() { 2.0 * width as f64 * self.param_bytes() } else { 0.0 };
        self.layer_norm_params(x, width, params)
    }

    /// `torch.nn.RMSNorm(width)` with a weight (trained in full fine-tuning).
    pub(crate) fn rms_norm(&mut self, x: T, width: u64) -> T {
        let x = if self.mode == Mode::Autocast { self.cast(x, 4.0) } else { x };
        let grad = x.grad || self.full();
        if grad {
            // a LoRA run's frozen base is 16-bit (the scripts cast it to `weight_dtype`): the fp32
            // kernel's copy of the norm weight is kept too
            if self.mode == Mode::Autocast && !self.full() {
                self.add("weight copies", width as f64 * 4.0);
            }
            self.save("norm inputs and statistics", x);
            let rstd = self.new_tensor(x.elems / width as f64, 4.0, false);
            self.save("norm inputs and statistics", rstd);
        }
        let y = self.new_tensor(x.elems, x.bytes, grad);
        let params = if self.full() { width as f64 * self.param_bytes() } else { 0.0 };
        self.record(y, &[x], params, 0.0);
        y
    }

    /// diffusers' own `RMSNorm(width)` with a weight (`normalization.py` lines 541–568, SD3.5's
    /// q/k norms): `x.to(float32).pow(2).mean(-1)` (pow keeps the fp32 input), `rsqrt` (keeps
    /// its output), `x * rstd` (keeps `x`), then a 16-bit weight casts the product back and
    /// `* weight` keeps the product when the weight is trained.
    pub(crate) fn rms_norm_diffusers(&mut self, x: T, width: u64) -> T {
        self.rms_norm_diffusers_with(x, width, true)
    }

    /// diffusers' `RMSNorm(width)`, with or without its weight (`elementwise_affine=False`:
    /// the product is cast back to the input's type, LTX-Video's block norms).
    pub(crate) fn rms_norm_diffusers_with(&mut self, x: T, width: u64, weight: bool) -> T {
        let x32 = self.cast(x, 4.0);
        let r = self.new_tensor(x.elems / width as f64, 4.0, x.grad);
        if x.grad {
            self.save("norm inputs and statistics", x32);
            self.save("norm inputs and statistics", r);
            self.save("norm inputs and statistics", x);
        }
        // backward of `x32 * rstd`: the fp32 product's gradient and the reduction over `x32²`
        let hs = self.new_tensor(x.elems, 4.0, x.grad);
        self.record(hs, &[x32], 0.0, x.elems * 4.0);
        if !weight {
            return self.cast(hs, x.bytes);
        }
        let weight16 = self.mode == Mode::Half || (self.mode == Mode::Autocast && !self.full());
        let hs = if weight16 { self.cast(hs, 2.0) } else { hs };
        if self.full() {
            self.save("norm inputs and statistics", hs);
        }
        let y = self.new_tensor(hs.elems, hs.bytes, hs.grad || self.full());
        let params = if self.full() { width as f64 * self.param_bytes() } else { 0.0 };
        self.record(y, &[hs], params, 0.0);
        y
    }

    /// Elementwise `a * b` (broadcasting: the result has `a`'s size).
    pub(crate) fn mul(&mut self, a: T, b: T) -> T {
        if a.grad {
            self.save("elementwise products", b);
        }
        if b.grad {
            self.save("elementwise products", a);
        }
        let y = self.new_tensor(a.elems.max(b.elems), a.bytes.max(b.bytes), a.grad || b.grad);
        // a broadcast operand's gradient is the full product, then summed down
        let scratch = [a, b].iter().filter(|t| t.grad && t.elems < y.elems).map(|_| y.elems * y.bytes).sum();
        self.record(y, &[a, b], 0.0, scratch);
        y
    }

    /// Elementwise `a + b`. `AddBackward` hands the output's gradient itself to each operand of
    /// the output's size (one storage: it is held by the operand made first, whose producer runs
    /// last) and sums it down for a broadcast one.
    pub(crate) fn add2(&mut self, a: T, b: T) -> T {
        let y = self.new_tensor(a.elems.max(b.elems), a.bytes.max(b.bytes), a.grad || b.grad);
        let (first, second) = if a.id <= b.id { (a, b) } else { (b, a) };
        let mut handed = false;
        let inputs = [first, second]
            .iter()
            .filter(|t| t.grad)
            .map(|t| {
                if t.elems < y.elems {
                    Input { id: t.id, cost: grad_bytes(*t), keep: grad_bytes(*t), piece: t.piece }
                } else if !handed {
                    handed = true;
                    Input { id: t.id, cost: 0.0, keep: y.elems * y.bytes, piece: false }
                } else {
                    Input { id: t.id, cost: 0.0, keep: 0.0, piece: false }
                }
            })
            .collect();
        self.record_inputs(y, &[a, b], inputs, 0.0, 0.0);
        y
    }

    /// GELU / SiLU: their input.
    pub(crate) fn activation(&mut self, x: T) -> T {
        if x.grad {
            self.save("activation inputs", x);
        }
        let y = self.new_tensor(x.elems, x.bytes, x.grad);
        self.record(y, &[x], 0.0, 0.0);
        y
    }

    /// ReLU: its output (`threshold_backward` reads the result).
    pub(crate) fn activation_result(&mut self, x: T) -> T {
        let y = self.new_tensor(x.elems, x.bytes, x.grad);
        if x.grad {
            self.save("activation inputs", y);
        }
        self.record(y, &[x], 0.0, 0.0);
        y
    }

    /// `torch.cat` of the parts.
    pub(crate) fn cat(&mut self, parts: &[T]) -> T {
        let elems = parts.iter().map(|t| t.elems).sum();
        let bytes = parts.iter().map(|t| t.bytes).fold(0.0, f64::max);
        let y = self.new_tensor(elems, bytes, parts.iter().any(|t| t.grad));
        // `CatBackward` hands out views of the output's gradient: nothing new
        let inputs = parts.iter().filter(|t| t.grad).map(|t| Input { id: t.id, cost: 0.0, keep: t.elems * t.bytes, piece: false }).collect();
        self.record_inputs(y, parts, inputs, 0.0, 0.0);
        y
    }

    /// `scaled_dot_product_attention` of `heads` heads, `s` query tokens; returns the output.
    pub(crate) fn attention(&mut self, q: T, k: T, v: T, heads: u64, s: u64) -> T {
        self.attention_masked(q, k, v, heads, s, None)
    }

    /// `scaled_dot_product_attention` with a float mask (`attn_mask`): the flash kernel takes
    /// none, so the memory-efficient kernel runs (logsumexp padded to 32, two seeds) and keeps
    /// the mask.
    pub(crate) fn attention_masked(&mut self, q: T, k: T, v: T, heads: u64, s: u64, mask: Option<T>) -> T {
        // q·kᵀ and p·v: 2 × 2 × s × (keys × width) per batch row = 4 × s × k's elements
        self.flops += 4.0 * s as f64 * k.elems;
        let auto = self.mode == Mode::Autocast;
        let (q, k, v) = if auto { (self.cast(q, 2.0), self.cast(k, 2.0), self.cast(v, 2.0)) } else { (q, k, v) };
        let grad = q.grad || k.grad || v.grad;
        let o = self.new_tensor(q.elems, q.bytes, grad);
        if grad {
            let name = "attention q, k, v, output, logsumexp";
            for t in [q, k, v, o] {
                self.save(name, t);
            }
            if let Some(m) = mask {
                self.save(name, m);
            }
            let flash = q.bytes == 2.0 && mask.is_none();
            let s_lse = if flash { s as f64 } else { (s as f64 / 32.0).ceil() * 32.0 };
            let lse = self.new_tensor(self.batch * heads as f64 * s_lse, 4.0, false);
            self.save(name, lse);
            self.add(name, if flash { 24.0 } else { 16.0 });
        }
        // the kernel's backward makes q's, k's and v's gradients, each its own size
        let inputs = [q, k, v].iter().filter(|t| t.grad).map(|t| Input { id: t.id, cost: t.elems * t.bytes, keep: t.elems * t.bytes, piece: t.piece }).collect();
        self.record_inputs(o, &[q, k, v], inputs, 0.0, 0.0);
        o
    }

    /// Run `block` under `torch.utils.checkpoint` when `on`: its `inputs` are held, nothing
    /// inside is saved.
    pub(crate) fn checkpoint<R>(&mut self, on: bool, inputs: &[T], block: impl FnOnce(&mut Tape) -> R) -> R {
        if !on {
            let r = block(self);
            self.release_held();
            return r;
        }
        for &t in inputs {
            self.save("checkpointed block inputs", t);
        }
        // Nothing inside is kept now; what it saves is counted as the block's, for its
        // recomputation in backward.
        self.block = Some((0.0, HashSet::new()));
        let (start, first) = (self.graph.len(), self.next + 1);
        let r = block(self);
        self.release_held();
        if let Some((bytes, _)) = self.block.take() {
            self.graph.block(start, bytes, first);
        }
        r
    }

    /// `x` stays bound to a local of the running block's function (a `hidden_states` not yet
    /// rebound, an `attn_output`) until the block returns: alive in the forward until then.
    pub(crate) fn hold(&mut self, x: T) {
        self.held.push(x.id);
    }

    /// The running block returned: its held locals live until its last tensor.
    fn release_held(&mut self) {
        for id in std::mem::take(&mut self.held) {
            self.graph.lives.hold(id, self.next);
        }
    }

    pub(crate) fn finish(self) -> Vec<Saved> {
        self.groups
    }

    /// The backward after this forward and diffusers' MSE loss on its last output
    /// (`backward_walk.rs`): the most it holds at once beyond the forward's saved tensors.
    pub(crate) fn backward(&self) -> Walk {
        let saved = self.groups.iter().map(|g| g.bytes).sum();
        match self.last {
            Some(p) => self.graph.walk(p.id, p.elems, p.bytes, saved),
            None => Walk::default(),
        }
    }
}

/// Bytes of `t`'s gradient: its own size, or its whole base's when it is a slice of a longer
/// storage (`slice_backward` makes a zero-filled base-sized gradient).
fn grad_bytes(t: T) -> f64 {
    if t.piece {
        t.elems * t.bytes
    } else {
        (t.elems * t.bytes).max(t.store)
    }
}
