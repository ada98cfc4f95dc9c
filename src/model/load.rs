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
//!   16-bit weight beside its quantisation's fp32 statistics.
//!
//! Both are measured on CPU by `tests/measure/load.py` (`tests/fixtures/measured/load.json`).
//! What the NF4 load leaves reserved in the caching allocator above these allocations is
//! `nf4_load.rs`'s.

use super::arch::ParamTensor;
use super::breakdown::{Component, Lifetime};
use super::dtype::{F32, HALF};
use super::inputs::{FsdpLoad, LoraBase, Parallel, Training};
use super::layout::Layout;
use super::ledger::Ledger;
use super::states::StatesSummary;

const FSDP1_FORMULA: &str = "2 × the largest FSDP unit unsharded (a block, or the root: embeddings, final norm, head), in the sharded weights' dtype: the unit moved to the GPU and its flattened copy, before its shard is cloned and the originals freed — torch 2.15 fsdp/_init_utils.py `_init_param_handle_from_module` (563–660: `_move_module_to_device`, `_sync_module_params_and_buffers` broadcasting in 250 MiB buckets, then the FlatParamHandle's `torch.cat` and `shard`); measured in load.json";

const FSDP2_UNIT_FORMULA: &str = "the largest FSDP unit unsharded (a block, or the root: embeddings, final norm, head), in the sharded weights' dtype: `fully_shard` moves the unit's parameters to the GPU whole (`_move_states_to_device`, torch 2.15 fsdp/_fully_shard/_fsdp_init.py 369–401, called at 567) before `FSDPParam._init_sharded_param` cuts this rank's shard (_fsdp_param.py 262–380), and drops them when it returns; measured in load.json with the move emulated on CPU";

const FSDP2_TENSOR_FORMULA: &str = "the largest single parameter tensor unsharded, in the sharded weights' dtype: a meta-device model filled from a full state dict receives every tensor whole before keeping its shard, one tensor at a time (torch 2.15 distributed/_state_dict_utils.py `_broadcast_state_dict` 640–697, \"Broadcast every tensor to avoid OOM\"; torchtune `training/_distributed.py` `load_from_full_model_state_dict`); measured in load.json on rank 1";

const NF4_FORMULA: &str = "the largest 4-bit linear's 16-bit weight (2 B per weight) while it is quantised, plus with double quantisation its fp32 absmax and `absmax − offset` (2 × 4 B per 64 weights) — bitsandbytes 0.50.2 `Params4bit._quantize` (nn/modules.py 381–395) → `quantize_4bit` (functional.py 929–941); measured in load.json";

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
        let largest = tensors.iter().filter(|t| t.is_quantized_linear()).map(|t| t.numel() / layout.tp.max(1.0)).fold(0.0, f64::max);
        let statistics = if lora.double_quant { 2.0 * F32 / 64.0 } else { 0.0 };
        ledger.add(Component::Temporary, "16-bit weight being quantised to NF4 at load (one linear)", largest * (HALF + statistics), NF4_FORMULA, Lifetime::Load);
    }
}
