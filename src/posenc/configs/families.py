"""What a model family's code adds to its config.json: the rules no field spells out.

A Hugging Face ``config.json`` does not say everything about position. Some of it lives in
the family's modelling code in ``transformers`` (``models/<model_type>/``): the default
``rope_theta`` when the field is absent, which layers skip RoPE, which layers get which
rotary parameters, whether the head has learned attention sinks. :data:`FAMILIES` holds
these rules for the families the course reads, keyed by ``model_type``.

Each rule names the Hugging Face code it transcribes (transformers 5.x,
``configuration_<family>.py`` / ``modeling_<family>.py``):

================  =========================================================================
``model_type``    rule
================  =========================================================================
gemma3_text       ``sliding_attention`` layers rotate with ``rope_local_base_freq`` (default
                  1e4) and no scaling; ``full_attention`` layers with ``rope_theta``
                  (default 1e6) and ``rope_scaling``; ``layer_types`` from
                  ``sliding_window_pattern`` (default 6: five local, one global)
olmo3             ``rope_scaling`` on ``full_attention`` layers only; ``sliding_attention``
                  layers keep plain RoPE with the same ``rope_theta`` (default 5e5);
                  default ``layer_types``: three sliding, one full
exaone4           the ``full_attention`` layers apply no RoPE when a ``sliding_window`` is
                  set (``Exaone4Attention``); ``layer_types`` from ``sliding_window_pattern``
                  (an int, or a string such as ``"LLLG"``)
smollm3, llama4   ``no_rope_layers`` (1 = RoPE, 0 = NoPE), else a NoPE layer every
_text             ``no_rope_layer_interval`` (default 4) layers; Llama 4's RoPE layers use
                  chunked attention (``attention_chunk_size``) and its NoPE layers get the
                  attention temperature (``attn_temperature_tuning``, ``floor_scale``,
                  ``attn_scale``); default ``rope_theta`` 2e6 (SmolLM3), 5e5 (Llama 4)
gpt_oss           learned attention sinks on every layer (``GptOssAttention.sinks``, no
                  config field); default ``layer_types`` alternate sliding and full;
                  default ``rope_theta`` 1.5e5
qwen2, qwen3      a sliding window only with ``use_sliding_window`` and only on layers
                  ``>= max_window_layers`` (default 28)
qwen3_next,       ``linear_attention`` (no RoPE) except every ``full_attention_interval``-th
qwen3_5_text      layer (default 4); ``mrope_section`` / ``mrope_interleaved`` allowed in the
                  rope parameters (text positions rotate as plain partial RoPE)
ministral3,       ``llama_4_scaling_beta`` in the rope parameters: a query temperature on
mistral4          every layer, ``1 + beta ln(1 + floor(p / original_max_position_embeddings))``
deepseek_v2,      multi-head latent attention: only ``qk_rope_head_dim`` features per head
deepseek_v3,      rotate; with a ``mscale_all_dim`` the softmax scale is multiplied by
deepseek_v32      ``yarn_mscale(factor, mscale_all_dim) ** 2`` (``yarn_apply_mscale``)
deepseek_v32      every layer ``indexed_attention``: full attention restricted to the top
                  ``index_topk`` keys its indexer picks; the indexer (``DeepseekV32Indexer``)
                  rotates the first ``qk_rope_head_dim`` of its ``index_head_dim`` features
                  with the model's frequencies in the half (``rotate_half``) layout, while the
                  latent attention rotates interleaved pairs (``apply_rotary_pos_emb_interleave``)
gemma4_text       ``rope_parameters`` keyed by layer type (default: ``sliding_attention`` plain
                  RoPE base 1e4, ``full_attention`` ``proportional`` p = 0.25 base 1e6); the
                  ``full_attention`` layers have a head of their own, ``global_head_dim``
                  (default 512, ``Gemma4TextConfig.per_layer_config``), which their rotary
                  frequencies and KV cache use
kimi_linear       ``linear_attention`` layers (Kimi Delta Attention, order from its recurrence
                  and short convolution) and ``full_attention`` layers of multi-head latent
                  attention with no RoPE at all: ``KimiLinearModel`` builds no rotary
                  embedding, and its key is the latent plus an unrotated ``k_rot``; default
                  ``layer_types``: a full layer at every index ``i > 0`` with ``i % 4 == 0``
phi3, qwen2,      no ``head_dim`` of their own in Hugging Face's config class: the head is
smollm3, olmo3,   ``hidden_size / num_attention_heads``, and a ``head_dim`` that disagrees is
exaone4           a contradiction
gemma2            ``layer_types`` default: sliding at even indices, full at odd ones
                  (``Gemma2Config.__post_init__``); default ``rope_theta`` 1e4
cohere2           ``layer_types`` from ``sliding_window_pattern`` (default 4: three sliding,
                  one full); the full layers apply no RoPE (``Cohere2Attention.forward``
                  rotates only when ``self.sliding_window`` is set); interleaved pairs
cohere, glm,      interleaved pairs (``(x0, x1), (x2, x3), ...``): Cohere's rotary repeats
glm4, gptj,       each frequency (``repeat_interleave``), GLM's and ERNIE 4.5's
ernie4_5,         ``apply_rotary_pos_emb`` interleave cos and sin, GPT-J's
llama4_text,      ``rotate_every_two``, Llama 4's and DeepSeek-V2's complex product;
deepseek_v2,      DeepSeek-V3 and Kimi K2 by ``rope_interleave`` (default true)
deepseek_v3
modernbert        an encoder: ``layer_types`` full at every ``global_attn_every_n_layers``-th
                  layer from 0 (default 3), sliding elsewhere with a window of
                  ``local_attention // 2`` tokens each side; ``global_rope_theta`` (default
                  1.6e5) and ``local_rope_theta`` (default 1e4) per layer type
minimax_m2,       ``rotary_dim`` rotated features of ``head_dim`` (``partial_rotary_factor =
minimax, gptj     rotary_dim / head_dim``); MiniMax-Text-01's ``linear_attention`` layers
                  (lightning attention) carry order by their recurrence
phimoe            LongRoPE with ``short_mscale`` / ``long_mscale``: the cos/sin multiplier
                  (``PhimoeRotaryEmbedding.forward``) instead of the attention factor
hunyuan_v1_dense, ``dynamic`` with ``alpha``: a fixed NTK base ``theta * alpha ** (d / (d - 2))``
hunyuan_v1_moe    (``compute_ntk_alpha_rope_parameters``), not recomputed with the length
gpt_neox          ``rotary_pct`` and ``rotary_emb_base`` (older names of
                  ``partial_rotary_factor`` and ``rope_theta``); ``n_layer``-style names are
                  read for every family
bloom, mpt,       ALiBi instead of RoPE: per-head slopes (BLOOM's ``build_alibi_tensor``;
falcon            MPT's ``build_alibi_bias`` with ``alibi_bias_max``; Falcon when ``alibi``
                  is true)
qwen2_vl,         M-RoPE: ``mrope_section`` splits the pairs among time, height and width;
qwen2_5_vl        text positions rotate as plain RoPE (all three ids equal)
jamba             attention every ``attn_layer_period``-th layer from ``attn_layer_offset``,
                  Mamba elsewhere; no positional encoding at all (``JambaAttention``)
nemotron_h        ``hybrid_override_pattern`` (``M`` Mamba-2, ``*`` attention, ``-`` MLP,
                  ``E`` mixture of experts); the attention applies no RoPE
bamba,            Mamba-2 layers beside attention layers that rotate (Bamba's
granitemoehybrid  ``attn_layer_indices``, half of the head: ``BambaConfig`` sets
                  ``partial_rotary_factor = 0.5``; Granite 4's ``layer_types``, RoPE only
                  with ``position_embedding_type: "rope"``)
falcon_h1,        every layer attention and Mamba-2 side by side (Falcon-H1) or a shared
zamba2            attention block on the ``hybrid`` layers (Zamba2, RoPE with
                  ``use_mem_rope``)
lfm2              short-convolution layers (``conv``) and full-attention layers
                  (``full_attn_idxs``)
================  =========================================================================

A family's rules are data, checked when this module loads: :class:`Family` refuses a rule
name it does not know (``Family(layer_rule="gema3")`` raises ``ValueError``), and
``layers.py`` derives layer types by the names in :data:`LAYER_RULES`, no other.

A ``model_type`` that is not in :data:`FAMILIES` is read with :data:`GENERIC` only where the
config's own fields settle every layer (:func:`unread_fields`); otherwise
:func:`posenc.configs.read_config` refuses it, naming the fields it cannot read, or, with
``strict=False``, warns and reads it as a Llama-style decoder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Family", "FAMILIES", "GENERIC", "get_family", "LAYER_RULES", "NOPE_RULES",
           "ROPE_BY_LAYER_TYPE", "TEMPERATURES", "LAYOUTS", "POSITIONS", "ATTENTION_FACTORS",
           "RECURRENT_TYPES",
           "GENERIC_FIELDS", "unread_fields"]

#: How ``layer_types`` are derived when a config lists none (one function each in
#: ``layers.py``).
LAYER_RULES = ("generic", "gemma3", "gemma2", "olmo3", "gpt_oss", "exaone4", "qwen2",
               "full_attention_interval", "kimi_linear", "llama4", "smollm3", "cohere2",
               "modernbert", "jamba", "nemotron_h", "bamba", "lfm2", "falcon_h1", "minimax",
               "granitemoehybrid", "zamba2")
#: Which layers skip RoPE: by ``no_rope_layers``, EXAONE 4's global layers, none at all
#: (``"all"``), the full-attention layers (Cohere 2), or by ``position_embedding_type``.
NOPE_RULES = (None, "no_rope_layers", "exaone4", "all", "full_attention",
              "position_embedding_type", "use_mem_rope")
#: Families whose one rope dict covers only some layer types.
ROPE_BY_LAYER_TYPE = (None, "gemma3", "olmo3", "modernbert")
#: Query temperatures (:class:`posenc.configs.Temperature`).
TEMPERATURES = (None, "llama4", "llama_4_scaling_beta")
#: How the rotated features pair up: ``"half"`` (``rotate_half``, GPT-NeoX style: feature
#: ``i`` with ``i + d/2``) or ``"interleaved"`` (GPT-J / Meta style: ``2i`` with ``2i + 1``).
LAYOUTS = ("half", "interleaved")
#: What carries position in the attention layers (``"alibi_field"``: ALiBi when the
#: config's ``alibi`` is true, else RoPE: Falcon).
POSITIONS = ("rope", "alibi", "none", "alibi_field")
#: Where the cos/sin multiplier comes from: the rope type's own rule, or Phi-3.5-MoE's
#: ``short_mscale`` / ``long_mscale``.
ATTENTION_FACTORS = ("rope_type", "mscale_short_long")
#: What a family's ``linear_attention`` layers are: linear attention (Gated DeltaNet, KDA,
#: lightning), or Mamba state-space layers, which transformers' hybrids also call that.
RECURRENT_TYPES = ("linear_attention", "mamba")

_CHOICES = {"layer_rule": LAYER_RULES, "nope_rule": NOPE_RULES,
            "rope_by_layer_type": ROPE_BY_LAYER_TYPE, "temperature": TEMPERATURES,
            "layout": LAYOUTS, "position": POSITIONS, "attention_factor": ATTENTION_FACTORS,
            "recurrent_type": RECURRENT_TYPES}


@dataclass(frozen=True)
class Family:
    """The position rules of one ``model_type`` (see the module docstring).

    ``default_theta``: the ``rope_theta`` when a config has none (a float, or
    ``{"full_attention": ..., "sliding_attention": ...}``). ``rope_by_layer_type``: one of
    :data:`ROPE_BY_LAYER_TYPE`. ``layer_rule``: how ``layer_types`` are derived when the
    config lists none (:data:`LAYER_RULES`). ``nope_rule``: which layers skip RoPE
    (:data:`NOPE_RULES`). ``extra_rope_keys``: keys the family stores inside its rope
    parameters beyond Hugging Face's standard ones. ``derived_head_dim``: the head is
    ``hidden_size // num_attention_heads``, and a given ``head_dim`` must agree. ``sinks``:
    learned attention sinks on every layer. ``temperature``: :data:`TEMPERATURES`.
    ``latent``: DeepSeek's multi-head latent attention (``qk_rope_head_dim``). ``indexer``:
    DeepSeek Sparse Attention's indexer, with a rotary part of its own (``qk_rope_head_dim``
    of ``index_head_dim``; its layout is the family's: half for DeepSeek-V3.2, interleaved
    for GLM-5, :data:`posenc.configs.sparse.SIDE_ROPE`). ``global_head_dim``: Gemma 4's
    full-attention head. ``layout``: :data:`LAYOUTS` (a config's ``rope_interleave``
    overrides it). ``position``: :data:`POSITIONS`. ``attention_factor``:
    :data:`ATTENTION_FACTORS`. ``ntk_alpha``: a ``dynamic`` block with ``alpha`` is a fixed
    NTK base (Hunyuan). ``fields``: config fields the family's code reads beyond
    :data:`GENERIC_FIELDS` (documentation, and what :func:`unread_fields` allows).
    ``fixed_partial_rotary_factor``: the rotated share whatever the config says (Bamba's
    configuration class sets 0.5). ``recurrent_type``: :data:`RECURRENT_TYPES`, the layer
    type a listed ``linear_attention`` layer is reported as.

    Every rule name is checked when the family is made: an unknown one raises
    ``ValueError`` naming the field and the accepted names.
    """

    default_theta: float | dict = 10000.0
    rope_by_layer_type: str | None = None
    layer_rule: str = "generic"
    nope_rule: str | None = None
    default_nope_interval: int | None = None
    extra_rope_keys: frozenset = field(default_factory=frozenset)
    derived_head_dim: bool = False
    sinks: bool = False
    temperature: str | None = None
    latent: bool = False
    indexer: bool = False
    global_head_dim: int | None = None
    layout: str = "half"
    position: str = "rope"
    attention_factor: str = "rope_type"
    ntk_alpha: bool = False
    fields: frozenset = field(default_factory=frozenset)
    fixed_partial_rotary_factor: float | None = None
    recurrent_type: str = "linear_attention"

    def __post_init__(self):
        for name, accepted in _CHOICES.items():
            value = getattr(self, name)
            if value not in accepted:
                raise ValueError(f"Family.{name} must be one of "
                                 f"{', '.join(map(repr, accepted))}; got {value!r}")
        for name in ("extra_rope_keys", "fields"):
            value = getattr(self, name)
            if not isinstance(value, frozenset) or not all(isinstance(k, str) for k in value):
                raise TypeError(f"Family.{name} must be a frozenset of field names, got "
                                f"{value!r}")
        theta = self.default_theta
        thetas = theta.values() if isinstance(theta, dict) else [theta]
        if not all(isinstance(t, int | float) and not isinstance(t, bool) and t > 1
                   for t in thetas):
            raise ValueError(f"Family.default_theta must be a number > 1 or a dict of them "
                             f"by layer type, got {theta!r}")
        partial = self.fixed_partial_rotary_factor
        if partial is not None and not (isinstance(partial, float) and 0 < partial <= 1):
            raise ValueError(f"Family.fixed_partial_rotary_factor must be None or a float in "
                             f"(0, 1], got {partial!r}")
        for name in ("default_nope_interval", "global_head_dim"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise ValueError(f"Family.{name} must be None or an integer >= 1, got "
                                 f"{value!r}")


#: The fields the generic reading understands (every family reads them). A field that
#: looks like a position setting (:data:`_POSITION_LIKE`) and is in neither this set nor
#: the family's ``fields`` is one the reading would silently ignore.
GENERIC_FIELDS = frozenset({
    "model_type", "num_hidden_layers", "n_layer", "n_layers", "num_layers",
    "hidden_size", "n_embd", "d_model", "num_attention_heads", "n_head", "n_heads",
    "head_dim", "num_key_value_heads", "max_position_embeddings", "n_positions",
    "max_seq_len", "rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor",
    "rotary_dim", "rotary_pct", "rotary_emb_base", "rope_interleave", "layer_types",
    "sliding_window", "use_sliding_window", "attention_chunk_size", "no_rope_layers",
    "no_rope_layer_interval", "original_max_position_embeddings", "text_config",
    "qk_rope_head_dim", "qk_nope_head_dim", "kv_lora_rank", "q_lora_rank", "v_head_dim",
    "max_window_layers",
})

#: Field names that say something about position or the layer pattern.
_POSITION_LIKE = re.compile(r"rope|rotary|position|alibi|window|sliding|chunk|local|global|"
                            r"nope|layer_types|pattern|attn_layer|block_type|interleave|"
                            r"attn_idx|hybrid|mrope|temperature", re.IGNORECASE)


def unread_fields(config: Mapping, family: Family) -> list[str]:
    """The position-looking fields of ``config`` that neither the generic reading nor
    ``family`` reads (sorted): where a config holds one, reading it by rules that ignore it
    could answer wrong. A ``sliding_window`` with no ``layer_types`` counts too (which
    layers slide is a family's rule: every layer for Mistral, every other for Gemma 2)."""
    known = GENERIC_FIELDS | family.fields
    out = sorted(k for k, v in config.items()
                 if _POSITION_LIKE.search(str(k)) and k not in known and v is not None
                 and not str(k).startswith("_"))
    if (family is GENERIC and config.get("sliding_window") is not None
            and config.get("layer_types") is None and config.get("use_sliding_window", True)):
        out.append("sliding_window (without layer_types)")
    return out


#: The rules of a config with no ``model_type``, and (with ``strict=False``) of one whose
#: ``model_type`` is not in :data:`FAMILIES`: the plain Llama-style decoder.
GENERIC = Family()

_MROPE = frozenset({"mrope_section", "mrope_interleaved"})
_LLAMA4_BETA = frozenset({"llama_4_scaling_beta", "max_position_embeddings"})
_GEMMA3 = frozenset({"sliding_window_pattern", "rope_local_base_freq", "query_pre_attn_scalar"})
_HYBRID = frozenset({"attn_layer_indices", "layers_block_type", "mamba_n_heads",
                     "mamba_d_head", "mamba_d_state", "mamba_chunk_size", "mamba_d_conv",
                     "mamba_expand", "mamba_n_groups", "mamba_conv_bias", "mamba_proj_bias"})
_HUNYUAN = frozenset({"beta_fast", "beta_slow", "mscale", "mscale_all_dim"})
_LLAMA_LIKE = Family()
_QWEN2_LIKE = Family(layer_rule="qwen2")

#: The families whose rules :func:`posenc.configs.read_config` knows, by ``model_type``.
FAMILIES: dict[str, Family] = {
    "llama": _LLAMA_LIKE,
    "mistral": Family(extra_rope_keys=_LLAMA4_BETA),
    "mixtral": _LLAMA_LIKE,
    "qwen2": Family(layer_rule="qwen2", derived_head_dim=True),
    "qwen3": _QWEN2_LIKE,
    "qwen3_moe": _QWEN2_LIKE,
    "phi3": Family(derived_head_dim=True),
    "phi": Family(derived_head_dim=True),
    "stablelm": Family(derived_head_dim=True),
    "granite": _LLAMA_LIKE,
    "olmo2": _LLAMA_LIKE,
    "starcoder2": _LLAMA_LIKE,
    "internlm3": _LLAMA_LIKE,
    "ernie4_5": Family(layout="interleaved"),
    "ernie4_5_moe": Family(layout="interleaved"),
    "seed_oss": _LLAMA_LIKE,
    "apertus": _LLAMA_LIKE,
    "smollm3": Family(default_theta=2_000_000.0, layer_rule="smollm3", nope_rule="no_rope_layers",
                      default_nope_interval=4, derived_head_dim=True),
    "llama4_text": Family(default_theta=500_000.0, layer_rule="llama4",
                          nope_rule="no_rope_layers", default_nope_interval=4,
                          temperature="llama4", layout="interleaved",
                          fields=frozenset({"attn_temperature_tuning", "floor_scale",
                                            "attn_scale", "interleave_moe_layer_step"})),
    "olmo3": Family(default_theta=500_000.0, rope_by_layer_type="olmo3", layer_rule="olmo3",
                    derived_head_dim=True),
    "exaone4": Family(layer_rule="exaone4", nope_rule="exaone4", derived_head_dim=True,
                      fields=frozenset({"sliding_window_pattern"})),
    "gemma2": Family(layer_rule="gemma2", fields=frozenset({"query_pre_attn_scalar"})),
    "gemma3_text": Family(default_theta={"full_attention": 1_000_000.0,
                                         "sliding_attention": 10_000.0},
                          rope_by_layer_type="gemma3", layer_rule="gemma3", fields=_GEMMA3),
    "gpt_oss": Family(default_theta=150_000.0, layer_rule="gpt_oss", sinks=True),
    "qwen3_next": Family(layer_rule="full_attention_interval", extra_rope_keys=_MROPE,
                         fields=frozenset({"full_attention_interval"})),
    "qwen3_5_text": Family(layer_rule="full_attention_interval", extra_rope_keys=_MROPE,
                           fields=frozenset({"full_attention_interval"})),
    "qwen2_vl": Family(layer_rule="qwen2", extra_rope_keys=_MROPE),
    "qwen2_5_vl": Family(layer_rule="qwen2", extra_rope_keys=_MROPE),
    "ministral3": Family(extra_rope_keys=_LLAMA4_BETA, temperature="llama_4_scaling_beta"),
    "mistral4": Family(extra_rope_keys=_LLAMA4_BETA, temperature="llama_4_scaling_beta"),
    "deepseek_v2": Family(latent=True, layout="interleaved"),
    "deepseek_v3": Family(latent=True, layout="interleaved"),
    "deepseek_v32": Family(latent=True, indexer=True, layout="interleaved",
                           fields=frozenset({"index_head_dim", "index_topk",
                                             "index_n_heads"})),
    "kimi_k2": Family(latent=True, layout="interleaved"),
    "gemma4_text": Family(layer_rule="gemma3", global_head_dim=512, fields=frozenset(
        {"sliding_window_pattern", "global_head_dim"})),
    "kimi_linear": Family(latent=True, nope_rule="all", layer_rule="kimi_linear",
                          fields=frozenset({"linear_attn_config"})),
    "cohere": Family(layout="interleaved"),
    "cohere2": Family(layer_rule="cohere2", nope_rule="full_attention", layout="interleaved",
                      fields=frozenset({"sliding_window_pattern"})),
    "glm4": Family(layout="interleaved"),
    "glm4_moe": _LLAMA_LIKE,
    "gptj": Family(layout="interleaved"),
    "gpt_neox": _LLAMA_LIKE,
    "modernbert": Family(default_theta={"full_attention": 160_000.0,
                                        "sliding_attention": 10_000.0},
                         rope_by_layer_type="modernbert", layer_rule="modernbert",
                         fields=frozenset({"global_rope_theta", "local_rope_theta",
                                           "local_attention", "global_attn_every_n_layers",
                                           "position_embedding_type"})),
    "minimax_m2": _LLAMA_LIKE,
    "minimax": Family(layer_rule="minimax", fields=frozenset({"layernorm_full_attention_alpha",
                                                                 "layernorm_linear_attention_alpha",
                                                                 "full_attn_alpha_factor",
                                                                 "linear_attn_alpha_factor"})),
    "phimoe": Family(attention_factor="mscale_short_long",
                     extra_rope_keys=frozenset({"short_mscale", "long_mscale"})),
    "hunyuan_v1_dense": Family(ntk_alpha=True, extra_rope_keys=_HUNYUAN),
    "hunyuan_v1_moe": Family(ntk_alpha=True, extra_rope_keys=_HUNYUAN),
    "bloom": Family(position="alibi"),
    "mpt": Family(position="alibi", fields=frozenset({"attn_config", "max_seq_len"})),
    "falcon": Family(position="alibi_field",
                     fields=frozenset({"alibi", "new_decoder_architecture"})),
    "jamba": Family(layer_rule="jamba", recurrent_type="mamba", position="none",
                    fields=frozenset({"attn_layer_period", "attn_layer_offset"}) | _HYBRID),
    "nemotron_h": Family(layer_rule="nemotron_h", recurrent_type="mamba", position="none",
                         fields=frozenset({"hybrid_override_pattern"}) | _HYBRID),
    "bamba": Family(layer_rule="bamba", recurrent_type="mamba", fields=_HYBRID,
                    fixed_partial_rotary_factor=0.5),
    "granitemoehybrid": Family(layer_rule="granitemoehybrid", recurrent_type="mamba",
                               nope_rule="position_embedding_type",
                               fields=frozenset({"position_embedding_type"}) | _HYBRID),
    "falcon_h1": Family(layer_rule="falcon_h1", fields=_HYBRID),
    "zamba2": Family(layer_rule="zamba2", recurrent_type="mamba", nope_rule="use_mem_rope",
                     fields=frozenset({"use_mem_rope", "hybrid_layer_ids"}) | _HYBRID),
    "lfm2": Family(layer_rule="lfm2", fields=frozenset({"full_attn_idxs"})),
}



def get_family(model_type) -> Family:
    """The rules of ``model_type``: its entry in :data:`FAMILIES`, else :data:`GENERIC`
    (whether that reading may stand is :func:`posenc.configs.read_config`'s decision)."""
    return FAMILIES.get(model_type, GENERIC) if isinstance(model_type, str) else GENERIC
