//! Transients of loading the model, before the first step: the load phase
//! ([`Lifetime::Load`]). Real runs' `max_memory_allocated` includes them, so a load that
//! outweighs the step is the run's peak.
//!
//! - FSDP1 (`FullyShardedDataParallel`, `parallel.fsdp_version` 1) wraps unit by unit, each
//!   time moving the unit's parameters to the GPU unsharded, flattening them into one more
//!   unsharded copy, and cloning this rank's shard out of it before the originals are freed.
//! - FSDP2 (`fully_shard`, `parallel.fsdp_version` 2) holds, per [`FsdpLoad`], one unit
//!   unsharded (a host model moved unit by unit), one tensor unsharded (a meta model filled
//!   from a broadcast full state dict), or nothing (a sharded checkpoint read shard by shard).
//! - A 4-bit (NF4) base quantised at load (`training.lora.quantize_at_load`) holds one layer's
//!   16-bit weight beside its quantisation's fp32 statistics (bitsandbytes), or beside torchao's
//!   scaled copy, index buffer and chunked comparisons (`training.lora.quantizer`: torchao,
//!   torchtune's; [`super::torchao_nf4`]).
//!
//! Both are measured on CPU by `tests/measure/load.py` (`tests/fixtures/measured/load.json`).
//! What the NF4 load leaves reserved in the caching allocator above these allocations is
//! `nf4_load.rs`'s.

use super::arch::ParamTensor;
use super::breakdown::{Component, Lifetime};
use super::dtype::{F32, HALF};
use super::inputs::{FsdpLoad, LoraBase, Nf4Quantizer, Parallel, Training};
use super::layout::Layout;
use super::ledger::Ledger;
use super::lora_reach::quantized;
use super::states::StatesSummary;

const FSDP1_FORMULA: &str = "2 × the largest FSDP unit unsharded (a block, or the root: embeddings, final norm, head), in the sharded weights' dtype: the unit moved to the GPU and its flattened copy, before its shard is cloned and the originals freed — torch 2.15 fsdp/_init_utils.py `_init_param_handle_from_module` (563–660: `_move_module_to_device`, `_sync_module_params_and_buffers` broadcasting in 250 MiB buckets, then the FlatParamHandle's `torch.cat` and `shard`); measured in load.json";

const FSDP2_UNIT_FORMULA: &str = "the largest FSDP unit unsharded (a block, or the root: embeddings, final norm, head), in the sharded weights' dtype: `fully_shard` moves the unit's parameters to the GPU whole (`_move_states_to_device`, torch 2.15 fsdp/_fully_shard/_fsdp_init.py 369–401, called at 567) before `FSDPParam._init_sharded_param` cuts this rank's shard (_fsdp_param.py 262–380), and drops them when it returns; measured in load.json with the move emulated on CPU";

const FSDP2_TENSOR_FORMULA: &str = "the largest single parameter tensor unsharded, in the sharded weights' dtype: a meta-device model filled from a full state dict receives every tensor whole before keeping its shard, one tensor at a time (torch 2.15 distributed/_state_dict_utils.py `_broadcast_state_dict` 640–697, \"Broadcast every tensor to avoid OOM\"; torchtune `training/_distributed.py` `load_from_full_model_state_dict`); measured in load.json on rank 1";

const NF4_FORMULA: &str = "the largest 4-bit linear's 16-bit weight (2 B per weight) while it is quantised, plus with double quantisation its fp32 absmax and `absmax − offset` (2 × 4 B per 64 weights) — bitsandbytes 0.50.2 `Params4bit._quantize` (nn/modules.py 381–395) → `quantize_4bit` (functional.py 929–941); measured in load.json";

const TORCHAO_FORMULA: &str = "the largest 4-bit linear's checkpoint tensor moved to the GPU in bf16 (2 B per weight) while torchao quantises it into a new NF4 tensor, plus that quantisation's peak: the scaled weight (2 B), one uint8 index per weight, and the comparison of 2^20 weights at a time with the 16 NF4 values (32 B each, twice) — torchao 0.18 nf4_tensor.py `copy_` (435–465) → `from_tensor` → `convert_to_norm_float_weight` (816–853), as torchtune's `load_state_dict` runs it; measured step by step in torchao_nf4_sequence.json";

/// Records the load's transients (none when nothing of the above applies).
pub fn load_transients(tensors: &[ParamTensor], training: &Training, parallel: &Parallel, layout: &Layout, states: &StatesSummary, ledger: &mut Ledger) {
    if layout.fsdp2() {
        // Frozen weights keep their own format (NF4 under QLoRA), as the sharded ones do.
        let st = states;
        let unit = (st.block_params_local - st.block_frozen_elements()) * st.weight_bytes + st.block_frozen_bytes_local;
        let root = (st.edge_params_local - st.edge_frozen_elements()) * st.weight_bytes + st.edge_frozen_bytes_local;
        let largest_unit = unit.max(root);
        match (parallel.fsdp_version, parallel.fsdp_load) {
            (1, _) => ledger.add(Component::Temporary, "FSDP1 unit unsharded at load (moved and flattened)", 2.0 * largest_unit, FSDP1_FORMULA, Lifetime::Load),
            (_, FsdpLoad::Unit) => ledger.add(Component::Temporary, "FSDP2 unit unsharded at load (moved before sharding)", largest_unit, FSDP2_UNIT_FORMULA, Lifetime::Load),
            (_, FsdpLoad::Tensor) => {
                let largest = tensors.iter().map(ParamTensor::numel).fold(0.0, f64::max);
                ledger.add(Component::Temporary, "FSDP2 tensor unsharded at load (broadcast before sharding)", largest * st.weight_bytes, FSDP2_TENSOR_FORMULA, Lifetime::Load);
            }
            (_, FsdpLoad::Sharded) => {}
        }
    }
    if let Some(lora) = training.lora.as_ref().filter(|l| l.base == LoraBase::Nf4 && l.quantize_at_load) {
        // The 4-bit weights are the blocks' linears (`ParamTensor::linear`); a tensor-parallel
        // rank quantises its own shard.
        let largest = tensors.iter().filter(|t| quantized(t, lora)).map(|t| t.numel() / layout.tp.max(1.0)).fold(0.0, f64::max);
        match lora.quantizer {
            Nf4Quantizer::Bitsandbytes => {
                let statistics = if lora.double_quant { 2.0 * F32 / 64.0 } else { 0.0 };
                ledger.add(Component::Temporary, "16-bit weight being quantised to NF4 at load (one linear)", largest * (HALF + statistics), NF4_FORMULA, Lifetime::Load);
            }
            Nf4Quantizer::Torchao => {
                let n = largest.ceil() as u64;
                let quantising = super::torchao_nf4::peak_bytes(&super::torchao_nf4::to_nf4_steps(n, super::torchao_nf4::Chunks::Distinct));
                ledger.add(Component::Temporary, "16-bit weight being quantised to NF4 at load (one linear)", largest * HALF + quantising as f64, TORCHAO_FORMULA, Lifetime::Load);
            }
        }
    }
}
