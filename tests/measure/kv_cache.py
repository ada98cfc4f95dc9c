#!/usr/bin/env python3
"""KV-cache sizes of tiny real models after one prefill forward (-> tests/fixtures/measured/kv_cache.json).

For each case a small config (2-6 layers, narrow widths) of one architecture family is built
with transformers on the CPU, cast to bfloat16 (seed 0, eval mode, no grad), and run once over a
random prompt of `seq` tokens with use_cache=True (T5: `encoder_seq` tokens into the encoder and
`seq` decoder tokens). The cache returned by the model (`outputs.cache`, called past_key_values
before transformers 5.x: a DynamicCache, or an EncoderDecoderCache for T5) is then inspected layer
by layer: every layer's `keys` and `values` tensors (T5: self-attention layers, then cross-attention
layers).

Recorded per case:
* hf_config: exactly the dict the model was built from (AutoConfig.for_model(**hf_config)), so
  the Rust side can import the same config; resolved: the attention-relevant values transformers
  derived from it (layer_types, sliding_window, kv heads, head dims).
* cache_bytes = sum over layers of keys.numel()*itemsize + values.numel()*itemsize (the logical
  size of the tensors the cache holds; what a formula over shapes predicts).
* cache_storage_bytes = the bytes of the distinct untyped storages behind those tensors. It can be
  larger: transformers' DynamicSlidingWindowLayer keeps only the last sliding_window - 1 tokens as
  a *view* (full_key_states[:, :, -w+1:, :]) of the concatenated prompt-length tensor, so right
  after a prefill longer than the window, the whole prompt's K/V storage is still held for the
  sliding layers (it is released at the next update, which concatenates into a new tensor).
* layers: per layer, the layer class, key/value shapes and dtype, logical bytes.
* formula_bytes: the size predicted from the config by the simple rule in `formula`, asserted equal
  to cache_bytes (the script fails otherwise).
* For MLA (deepseek_v2 / deepseek_v3): transformers 5.x (measured with 5.24) caches the
  *compressed* latent, like vLLM / SGLang: DeepseekV2Attention.forward / DeepseekV3Attention.forward
  call cache.update(k_nope, k_pe) with the kv_a_layernorm-ed latent viewed as one head
  [batch, 1, seq, kv_lora_rank] in the cache layer's `keys` slot and the rotated shared RoPE key
  [batch, 1, seq, qk_rope_head_dim] in its `values` slot, and re-expand K/V with kv_b_proj after
  every cache read. cache_bytes therefore equals
  mla_compressed_latent_bytes = layers * batch * seq * (kv_lora_rank + qk_rope_head_dim) * bytes,
  which is also computed from the config with its citation (MLA_CITATION). transformers 4.x
  cached the decompressed per-head K [.., num_heads, seq, qk_nope + qk_rope] and V [.., v_head_dim]
  instead: that size is given, computed (not measured), as mla_decompressed_kv_bytes.

Deterministic (seed 0); a few seconds on a CPU. Nothing is downloaded.
"""
import json
import os

import torch
import transformers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "measured", "kv_cache.json")
DTYPE = torch.bfloat16
BATCH = 2
SEQ = 32          # prompt length; every sliding window below is 8 < SEQ
ENC_SEQ = 20      # T5 encoder length
VOCAB = 128

MLA_CITATION = (
    "DeepSeek-V2 paper (arXiv:2405.04434) §2.1.2-2.1.3 and Table 1: MLA caches only the compressed KV latent "
    "c_t^KV (d_c = kv_lora_rank) and the decoupled RoPE key k_t^R shared by all heads (d_h^R = qk_rope_head_dim), "
    "i.e. (d_c + d_h^R) elements per token per layer. vLLM stores exactly that: "
    "vllm/v1/attention/backends/mla/common.py, MLACommonBackend.get_kv_cache_shape -> (num_blocks, block_size, "
    "head_size) with num_kv_heads assumed 1 and head_size = kv_lora_rank + qk_rope_head_dim (576 for DeepSeek-V2/V3)."
)

BASE_DECODER = {"vocab_size": VOCAB, "max_position_embeddings": 256, "tie_word_embeddings": False}

CASES = [
    {
        "name": "llama-gqa",
        "hf_class": "LlamaForCausalLM",
        "hf_config": dict(BASE_DECODER, model_type="llama", hidden_size=128, intermediate_size=256,
                          num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=2),
        "notes": "GQA 8 query heads / 2 KV heads, head_dim 16.",
    },
    {
        "name": "mistral-sliding-window",
        "hf_class": "MistralForCausalLM",
        "hf_config": dict(BASE_DECODER, model_type="mistral", hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, sliding_window=8),
        "notes": "sliding_window 8 < seq 32: every layer is a DynamicSlidingWindowLayer holding the last "
                 "sliding_window - 1 = 7 tokens.",
    },
    {
        "name": "gemma2-alternating",
        "hf_class": "Gemma2ForCausalLM",
        "hf_config": dict(BASE_DECODER, model_type="gemma2", hidden_size=64, intermediate_size=128,
                          num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                          query_pre_attn_scalar=32, sliding_window=8),
        "notes": "Gemma 2 alternates sliding (even layer index) and global attention (layer_types derived by "
                 "transformers).",
    },
    {
        "name": "gemma3-text-pattern",
        "hf_class": "Gemma3ForCausalLM",
        "hf_config": dict(BASE_DECODER, model_type="gemma3_text", hidden_size=64, intermediate_size=128,
                          num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=1, head_dim=32,
                          query_pre_attn_scalar=32, sliding_window=8, sliding_window_pattern=3),
        "notes": "Hub-style sliding_window_pattern (no layer_types): layer i is full attention iff "
                 "(i + 1) % pattern == 0, so pattern 3 over 4 layers gives sliding, sliding, full, sliding.",
    },
    {
        "name": "gpt-oss-alternating",
        "hf_class": "GptOssForCausalLM",
        "hf_config": dict(BASE_DECODER, model_type="gpt_oss", hidden_size=64, intermediate_size=64,
                          num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                          num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                          max_position_embeddings=131072,
                          layer_types=["sliding_attention", "full_attention"] * 2),
        "notes": "gpt-oss alternates sliding (128 in the real models, 8 here) and full attention; attention sinks "
                 "are parameters, not cached.",
    },
    {
        "name": "deepseek-v2-mla",
        "hf_class": "DeepseekV2ForCausalLM",
        "hf_config": dict(BASE_DECODER, model_type="deepseek_v2", hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                          q_lora_rank=None, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
                          v_head_dim=16, first_k_dense_replace=1, n_routed_experts=4, num_experts_per_tok=2,
                          n_shared_experts=1, moe_intermediate_size=32, n_group=1, topk_group=1),
        "notes": "MLA as in DeepSeek-V2-Lite (q_lora_rank null).",
    },
    {
        "name": "deepseek-v3-mla",
        "hf_class": "DeepseekV3ForCausalLM",
        "hf_config": dict(BASE_DECODER, model_type="deepseek_v3", hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                          q_lora_rank=24, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
                          v_head_dim=16, first_k_dense_replace=1, n_routed_experts=8, num_experts_per_tok=2,
                          n_shared_experts=1, moe_intermediate_size=32, n_group=2, topk_group=1),
        "notes": "MLA with a low-rank query (q_lora_rank 24) as in DeepSeek-V3.",
    },
    {
        "name": "qwen3-head-dim",
        "hf_class": "Qwen3ForCausalLM",
        "hf_config": dict(BASE_DECODER, model_type="qwen3", hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=32),
        "notes": "head_dim 32 != hidden_size / num_attention_heads (16), as in the real Qwen3 models.",
    },
    {
        "name": "t5-encoder-decoder",
        "hf_class": "T5ForConditionalGeneration",
        "hf_config": {"model_type": "t5", "vocab_size": VOCAB, "d_model": 64, "d_kv": 16, "d_ff": 128,
                      "num_heads": 4, "num_layers": 2, "num_decoder_layers": 3},
        "notes": "EncoderDecoderCache: decoder self-attention K/V over the seq decoder tokens plus "
                 "cross-attention K/V over the encoder_seq encoder tokens, per decoder layer (the encoder "
                 "caches nothing).",
    },
    {
        "name": "falcon-mqa",
        "hf_class": "FalconForCausalLM",
        "hf_config": {"model_type": "falcon", "vocab_size": VOCAB, "hidden_size": 64, "num_hidden_layers": 2,
                      "num_attention_heads": 4, "multi_query": True, "new_decoder_architecture": False,
                      "parallel_attn": True, "bias": False, "alibi": False},
        "notes": "falcon-7b style multi-query attention: one K/V head.",
    },
    {
        "name": "falcon-new-arch-gqa",
        "hf_class": "FalconForCausalLM",
        "hf_config": {"model_type": "falcon", "vocab_size": VOCAB, "hidden_size": 64, "num_hidden_layers": 2,
                      "num_attention_heads": 8, "num_kv_heads": 2, "new_decoder_architecture": True,
                      "parallel_attn": True, "bias": False, "alibi": False},
        "notes": "falcon-40b style new_decoder_architecture with num_kv_heads = 2 KV groups. Measured: transformers "
                 "caches K/V already broadcast to all 8 query heads (modeling_falcon.py FalconAttention: _split_heads "
                 "broadcasts key/value to the query shape, then num_kv_heads = self.num_heads if "
                 "new_decoder_architecture), i.e. 4x what an engine storing the 2 groups holds "
                 "(grouped_kv_bytes, computed).",
    },
]


def resolved(config):
    keys = ["layer_types", "sliding_window", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
            "num_kv_heads", "head_dim", "multi_query", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
            "v_head_dim", "num_layers", "num_decoder_layers", "num_heads", "d_kv"]
    return {k: getattr(config, k) for k in keys if getattr(config, k, None) is not None}


def layer_records(cache, kind, storages):
    recs = []
    for i, layer in enumerate(cache.layers):
        k, v = layer.keys, layer.values
        b = k.numel() * k.element_size() + v.numel() * v.element_size()
        for t in (k, v):
            st = t.untyped_storage()
            storages[st.data_ptr()] = st.nbytes()
        recs.append({"index": i, "attention": kind, "layer_class": type(layer).__name__,
                     "sliding_window": getattr(layer, "sliding_window", None),
                     "key_shape": list(k.shape), "value_shape": list(v.shape), "dtype": str(k.dtype).replace("torch.", ""),
                     "bytes": b})
    return recs


def formula(case, config):
    """Bytes predicted from the config; returns (bytes, rule)."""
    el = torch.finfo(DTYPE).bits // 8
    mt = config.model_type
    if mt == "t5":
        per = 2 * BATCH * config.num_heads * config.d_kv * el
        n = config.num_decoder_layers
        return (n * per * SEQ + n * per * ENC_SEQ,
                "num_decoder_layers * 2 * batch * num_heads * d_kv * (seq + encoder_seq) * bytes")
    if mt in ("deepseek_v2", "deepseek_v3"):
        return (config.num_hidden_layers * BATCH * SEQ * (config.kv_lora_rank + config.qk_rope_head_dim) * el,
                "layers * batch * seq * (kv_lora_rank + qk_rope_head_dim) * bytes (transformers 5.x caches the "
                "compressed MLA latent: keys slot [batch, 1, seq, kv_lora_rank], values slot [batch, 1, seq, "
                "qk_rope_head_dim])")
    if mt == "falcon":
        # HF Falcon (new_decoder_architecture) broadcasts its num_kv_heads K/V groups to all query heads
        # *before* cache.update (FalconAttention._split_heads + `num_kv_heads = self.num_heads if
        # self.new_decoder_architecture`), so the cache holds num_attention_heads heads.
        kv = config.num_attention_heads if config.new_decoder_architecture else (
            1 if config.multi_query else config.num_attention_heads)
        hd = config.hidden_size // config.num_attention_heads
        return (config.num_hidden_layers * 2 * BATCH * kv * SEQ * hd * el,
                "layers * 2 * batch * cached_heads * seq * head_dim * bytes; cached_heads = num_attention_heads if "
                "new_decoder_architecture (HF broadcasts the num_kv_heads groups to every query head before caching), "
                "else 1 if multi_query else num_attention_heads")
    hd = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    kv = config.num_key_value_heads
    types = getattr(config, "layer_types", None) or (
        ["sliding_attention" if getattr(config, "sliding_window", None) else "full_attention"]
        * config.num_hidden_layers)
    total = 0
    for t in types:
        tokens = min(SEQ, config.sliding_window - 1) if t == "sliding_attention" else SEQ
        total += 2 * BATCH * kv * tokens * hd * el
    return (total, "sum over layers of 2 * batch * num_key_value_heads * tokens * head_dim * bytes; tokens = "
                   "min(seq, sliding_window - 1) for sliding_attention layers, seq otherwise")


def run(case):
    torch.manual_seed(0)
    hf = dict(case["hf_config"])
    config = transformers.AutoConfig.for_model(hf.pop("model_type"), **hf)
    model = getattr(transformers, case["hf_class"])(config).to(DTYPE).eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        if config.model_type == "t5":
            enc = torch.randint(2, VOCAB, (BATCH, ENC_SEQ), generator=g)
            dec = torch.randint(2, VOCAB, (BATCH, SEQ), generator=g)
            out = model(input_ids=enc, decoder_input_ids=dec, use_cache=True)
        else:
            ids = torch.randint(2, VOCAB, (BATCH, SEQ), generator=g)
            out = model(input_ids=ids, use_cache=True)
    cache = out["cache"] if "cache" in out else out["past_key_values"]
    storages = {}
    if isinstance(cache, transformers.EncoderDecoderCache):
        layers = (layer_records(cache.self_attention_cache, "self", storages)
                  + layer_records(cache.cross_attention_cache, "cross", storages))
        sub = {"self_attention_cache": type(cache.self_attention_cache).__name__,
               "cross_attention_cache": type(cache.cross_attention_cache).__name__}
    else:
        layers = layer_records(cache, "self", storages)
        sub = None
    cache_bytes = sum(r["bytes"] for r in layers)
    fbytes, rule = formula(case, config)
    assert fbytes == cache_bytes, (case["name"], fbytes, cache_bytes)
    rec = {
        "name": case["name"],
        "model_type": config.model_type,
        "hf_class": case["hf_class"],
        "hf_config": case["hf_config"],
        "resolved": resolved(config),
        "attn_implementation": model.config._attn_implementation,
        "batch": BATCH,
        "seq": SEQ,
        "encoder_seq": ENC_SEQ if config.model_type == "t5" else None,
        "dtype": str(DTYPE).replace("torch.", ""),
        "cache_class": type(cache).__name__,
        "sub_caches": sub,
        "layer_classes": sorted({r["layer_class"] for r in layers}),
        "cache_bytes": cache_bytes,
        "cache_storage_bytes": sum(storages.values()),
        "formula_bytes": fbytes,
        "formula": rule,
        "layers": layers,
        "notes": case["notes"],
    }
    if config.model_type == "t5":
        rec["self_attention_bytes"] = sum(r["bytes"] for r in layers if r["attention"] == "self")
        rec["cross_attention_bytes"] = sum(r["bytes"] for r in layers if r["attention"] == "cross")
    if config.model_type in ("deepseek_v2", "deepseek_v3"):
        el = torch.finfo(DTYPE).bits // 8
        latent = config.num_hidden_layers * BATCH * SEQ * (config.kv_lora_rank + config.qk_rope_head_dim) * el
        h = config.num_attention_heads
        decompressed = (config.num_hidden_layers * BATCH * SEQ * h
                        * (config.qk_nope_head_dim + config.qk_rope_head_dim + config.v_head_dim) * el)
        rec["hf_caches"] = ("compressed latent: per layer, the cache layer's keys slot holds the kv_a_layernorm-ed "
                            "c_KV [batch, 1, seq, kv_lora_rank] and its values slot the rotated shared k_pe "
                            "[batch, 1, seq, qk_rope_head_dim] (transformers 5.x; K/V are re-expanded with kv_b_proj "
                            "after each cache read). transformers 4.x cached decompressed per-head K and V instead.")
        rec["mla_compressed_latent_bytes"] = latent
        rec["mla_compressed_latent_formula"] = ("layers * batch * seq * (kv_lora_rank + qk_rope_head_dim) * bytes "
                                                "(computed from the config; what vLLM / SGLang store; here equal to "
                                                "the measured cache_bytes)")
        rec["mla_decompressed_kv_bytes"] = decompressed
        rec["mla_decompressed_kv_formula"] = ("layers * batch * seq * num_attention_heads * (qk_nope_head_dim + "
                                              "qk_rope_head_dim + v_head_dim) * bytes (computed, not measured: what "
                                              "transformers 4.x cached)")
        assert latent == cache_bytes, (case["name"], latent, cache_bytes)
        rec["mla_compressed_latent_citation"] = MLA_CITATION
    if config.model_type == "falcon" and config.new_decoder_architecture:
        rec["grouped_kv_bytes"] = (config.num_hidden_layers * 2 * BATCH * config.num_kv_heads * SEQ
                                   * (config.hidden_size // config.num_attention_heads) * (torch.finfo(DTYPE).bits // 8))
        rec["grouped_kv_formula"] = ("layers * 2 * batch * num_kv_heads * seq * head_dim * bytes (computed, not "
                                     "measured: K/V stored per KV group, as vLLM does)")
    if rec["cache_storage_bytes"] != cache_bytes:
        rec["storage_note"] = ("cache_storage_bytes > cache_bytes: the sliding-window layers' keys/values are views "
                               "of the full prompt-length tensors (DynamicSlidingWindowLayer.update slices "
                               "full_key_states[:, :, -sliding_window + 1:, :]), so the prompt's K/V storage stays "
                               "alive until the next update.")
    return rec


def main():
    cases = []
    for case in CASES:
        rec = run(case)
        print(f"{rec['name']:24s} {rec['cache_class']:20s} bytes {rec['cache_bytes']:>8,} storage "
              f"{rec['cache_storage_bytes']:>8,} {rec['layer_classes']}"
              + (f" latent {rec['mla_compressed_latent_bytes']:,}" if 'mla_compressed_latent_bytes' in rec else ""))
        cases.append(rec)
    out = {
        "generator": "tests/measure/kv_cache.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "method": ("tiny config built on CPU in bfloat16 (seed 0, eval, no grad); one forward with use_cache=True "
                   "over a prompt of `seq` tokens (T5: encoder_seq encoder tokens, seq decoder tokens); cache_bytes "
                   "= sum of numel * itemsize of every layer's keys and values in the returned cache "
                   "(DynamicCache / EncoderDecoderCache); cache_storage_bytes = distinct storages behind them"),
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
