"""Hugging Face's own answer to "how does each layer of this model handle position?".

Shared by tests/test_configs.py (the bundled configs) and tests/test_configs_real.py (the
real-model configs in tests/data/hf_configs/). The reference is Hugging Face's code, not a
re-derivation: a config dict is built by its family's ``PretrainedConfig`` subclass
(``transformers.CONFIG_MAPPING[model_type]``), the family's rotary module gives
``inv_freq`` and ``attention_scaling`` per layer type, and its attention modules (built on
the meta device, no weights) say which layers rotate, how far they see and whether they
have sinks. Where a family's layer kinds are not attention modules (Mamba, short
convolutions, MLP-only blocks) the kind is read from the config class, as the family's
decoder builds its layers from it.

Precision: Hugging Face computes the frequencies in float32. To compare at a relative
tolerance of 1e-12 the same functions are run with float64 as their float type
(:func:`hf_float64`): the ``torch`` their modules see is ``torch`` with ``torch.float`` and
``torch.float32`` meaning ``torch.float64``, and ``Tensor.float()`` meaning ``.double()``.

Two entry points:

* :func:`hf_reference` (unchanged from issue 35): per layer ``(inv_freq or None,
  attention_scaling, window, sinks, attention module)``, for the bundled configs;
* :func:`hf_layers`: per layer one :class:`HFLayer` record, for every family in
  tests/data/hf_configs/ (layer kind in posenc's names, layout, ALiBi slopes, M-RoPE
  sections as well).

``python tests/hf_configs_report.py`` prints, per real config, whether posenc agrees.
"""

from __future__ import annotations

import importlib
import types
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np


def _float64_torch(torch):
    """``torch`` as a module, except that its float type names mean float64."""
    shim = types.ModuleType("torch")
    shim.__getattr__ = lambda name: getattr(torch, name)
    shim.float = shim.float32 = torch.float64
    return shim


@contextmanager
def hf_float64(modules):
    """Run Hugging Face's rope code in float64: ``torch.float``/``torch.float32`` read as
    float64 in ``modules`` and ``Tensor.float()`` as ``.double()``, for the duration."""
    import torch

    shim = _float64_torch(torch)
    saved = [(m, m.torch) for m in modules]
    saved_float = torch.Tensor.float
    try:
        for m in modules:
            m.torch = shim
        torch.Tensor.float = torch.Tensor.double
        yield
    finally:
        torch.Tensor.float = saved_float
        for m, t in saved:
            m.torch = t


@contextmanager
def _default_float64():
    """``torch.get_default_dtype()`` float64 for the duration (GPT-J's sinusoid table divides
    an int64 ``arange`` by an int, which gives the default float type)."""
    import torch

    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


@contextmanager
def _nothing():
    yield


# Hub ``model_type`` values that transformers 5.23 has no class for, read as the class the
# checkpoint's own remote code subclasses. Kimi K2's repository ships
# ``configuration_deepseek.py`` (``DeepseekV3Config``, model_type overridden to
# "kimi_k2") and ``modeling_deepseek.py`` (``DeepseekV3ForCausalLM`` in ``architectures``);
# transformers' ``deepseek_v3`` is that architecture.
MODEL_TYPE_ALIASES = {"kimi_k2": "deepseek_v3"}

_MODULE_NAMES = {"gemma3_text": "gemma3", "llama4_text": "llama4", "qwen3_5_text": "qwen3_5",
                 "gemma4_text": "gemma4", "qwen2_vl_text": "qwen2_vl",
                 "qwen2_5_vl_text": "qwen2_5_vl",
                 # transformers 5.23 ships InternLM3 as a configuration and a *modular* file
                 # only; modular_internlm3.py builds it from Llama's classes
                 # (InternLM3RotaryEmbedding(LlamaRotaryEmbedding), attention likewise)
                 "internlm3": "llama"}


def _family_module(hf, model_type):
    name = _MODULE_NAMES.get(model_type, model_type)
    return importlib.import_module(f"transformers.models.{name}.modeling_{name}")


def _one(module, suffix):
    """The family's one text class named ``*<suffix>`` (``Llama4TextAttention``, not
    ``Llama4VisionAttention``)."""
    found = [c for n, c in vars(module).items() if isinstance(c, type) and n.endswith(suffix)
             and "Vision" not in n and c.__module__ == module.__name__]
    if len(found) > 1:  # the text model's, else the plain one (KimiLinearAttention, not
        # KimiLinearDeltaAttention)
        found = ([c for c in found if "Text" in c.__name__]
                 or [min(found, key=lambda c: len(c.__name__))])
    assert len(found) == 1, (module.__name__, suffix, found)
    return found[0]


def _has_rotary(module) -> bool:
    """Whether the family's modelling code has a rotary embedding at all (Kimi Linear has
    none: its latent attention applies no RoPE)."""
    return any(n.endswith("RotaryEmbedding") for n in vars(module))


def hf_config(hf, config: dict):
    """The family's PretrainedConfig built from a config.json dict (text part); keys
    starting with ``_`` (this project's metadata) are left out."""
    text = config.get("text_config", config)
    fields = {k: v for k, v in text.items() if not k.startswith("_")}
    model_type = MODEL_TYPE_ALIASES.get(fields["model_type"], fields["model_type"])
    fields["model_type"] = model_type
    cfg = hf.CONFIG_MAPPING[model_type](**fields)
    # a multimodal config built from a flat file (Qwen2-VL) keeps the text model's fields in
    # its text_config, which is what the text model is built from
    if getattr(cfg, "num_hidden_layers", None) is None and hasattr(cfg, "get_text_config"):
        cfg = cfg.get_text_config()
    return cfg


def hf_reference(hf, config: dict, *, float64: bool = True):
    """Per layer, Hugging Face's ``(inv_freq or None, attention_scaling, window, sinks)``."""
    import torch
    from transformers import modeling_rope_utils

    cfg = hf_config(hf, config)
    module = _family_module(hf, cfg.model_type)
    rotary_cls = _one(module, "RotaryEmbedding") if _has_rotary(module) else None
    attention_cls = _one(module, "Attention")
    ctx = hf_float64([modeling_rope_utils, module]) if float64 else _nothing()
    with ctx:
        rotary = rotary_cls(config=cfg) if rotary_cls is not None else None
    layer_types = getattr(cfg, "layer_types", None)
    out = []
    for i in range(cfg.num_hidden_layers):
        with torch.device("meta"):
            attention = attention_cls(cfg, layer_idx=i)
        t = layer_types[i] if layer_types else None
        if rotary is None or t == "linear_attention":
            # no rotary embedding in the model (Kimi Linear), or a recurrent layer that
            # Hugging Face builds as Gated DeltaNet / KDA, not as this attention class
            out.append((None, 1.0, None, False, attention))
            continue
        if t is not None and hasattr(rotary, f"{t}_inv_freq"):
            inv = getattr(rotary, f"{t}_inv_freq")
            scaling = getattr(rotary, f"{t}_attention_scaling")
        else:
            inv, scaling = rotary.inv_freq, rotary.attention_scaling
        rotates = bool(getattr(attention, "use_rope", True))
        if cfg.model_type == "exaone4":  # Exaone4Attention.forward: rotate unless global+window
            rotates = attention.sliding_window is None or attention.is_sliding
        window = getattr(attention, "sliding_window", getattr(cfg, "sliding_window", None))
        if getattr(attention, "is_sliding", True) is False:
            window = None
        out.append((inv.double().numpy() if rotates else None, float(scaling), window,
                    hasattr(attention, "sinks"), attention))
    return out


# --- per-layer records for every family ------------------------------------------------------

@dataclass(frozen=True)
class HFLayer:
    """One layer as Hugging Face's code builds it.

    ``layer_type``: posenc's name (``full_attention``, ``sliding_attention``,
    ``chunked_attention``, ``linear_attention``; ``mamba``, ``conv``, ``mlp`` for layers
    with no attention). ``rotates``: RoPE is applied to this layer's queries and keys.
    ``inv_freq``: float64 ``[rotary_dim // 2]`` where it rotates, else None.
    ``attention_scaling``: the cos/sin multiplier (1.0 where it does not rotate).
    ``window``: the sliding window as Hugging Face's mask uses it, else None. ``layout``:
    ``"half"`` (rotate_half, pairs (i, i + d/2)) or ``"interleaved"`` (pairs (2i, 2i+1)),
    None where it does not rotate. ``alibi_slopes``: float64 ``[num_heads]`` or None.
    ``mrope_section``: M-RoPE's (temporal, height, width) pair counts or None.
    ``causal``: False for encoders (ModernBERT's window is then ``|i - j| <= window``).
    ``chunk``: the attention chunk of ``chunked_attention`` layers (Llama 4), else None.
    """

    layer_type: str
    rotates: bool
    inv_freq: np.ndarray | None
    attention_scaling: float
    window: int | None
    sinks: bool
    layout: str | None
    alibi_slopes: np.ndarray | None
    mrope_section: tuple | None
    causal: bool = True
    chunk: int | None = None
    attention: object | None = field(default=None, repr=False, compare=False)


# Hugging Face's per-layer kind names -> posenc's. Families whose non-attention layers HF
# calls "linear_attention" although they are Mamba/Mamba2 mixers (Jamba, Bamba, Zamba2,
# Nemotron-H, GraniteMoeHybrid: their ``layers_block_type`` / ``layer_types``).
_MAMBA_FAMILIES = {"jamba", "bamba", "zamba2", "nemotron_h", "granitemoehybrid", "falcon_h1"}


def _whole_model_window(module) -> bool:
    """Whether the family's model masks every layer with ``config.sliding_window`` when it
    is set (Mistral, Mixtral, Phi-3, PhiMoE, Starcoder2: ``mask_function =
    create_causal_mask if self.config.sliding_window is None else
    create_sliding_window_causal_mask``, and their attention passes
    ``sliding_window=getattr(self.config, "sliding_window", None)``)."""
    import inspect

    return ("create_causal_mask if self.config.sliding_window is None else "
            "create_sliding_window_causal_mask") in inspect.getsource(module)


def _kinds(cfg, module=None) -> list[str]:
    """Per layer, the kind in posenc's names, as the family's decoder builds its layers."""
    mt = cfg.model_type
    n = cfg.num_hidden_layers
    raw = getattr(cfg, "layer_types", None) or getattr(cfg, "layers_block_type", None)
    if raw is None:
        if module is not None and _whole_model_window(module) and getattr(
                cfg, "sliding_window", None) is not None:
            return ["sliding_attention"] * n
        return ["full_attention"] * n
    out = []
    for t in raw:
        if mt in _MAMBA_FAMILIES and t in ("linear_attention", "mamba"):
            out.append("mamba")
        elif mt == "falcon_h1" and t == "hybrid":
            # FalconH1DecoderLayer: a Mamba2 mixer and a RoPE attention in parallel, every
            # layer (modeling_falcon_h1.py FalconH1DecoderLayer.__init__)
            out.append("full_attention")
        elif mt == "zamba2" and t == "hybrid":
            # Zamba2HybridLayer: the shared transformer block (full attention) then Mamba2
            out.append("full_attention")
        elif mt == "nemotron_h" and t in ("mlp", "moe"):
            out.append("mlp")  # '-' and 'E' in hybrid_override_pattern: no token mixing
        elif mt == "granitemoehybrid" and t == "attention":
            out.append("full_attention")
        elif mt == "lfm2" and t == "conv":
            out.append("conv")  # Lfm2ShortConv: a depthwise causal convolution of width L_cache
        else:
            out.append(t)
    assert len(out) == n, (mt, len(out), n)
    return out


def _rotary_forward(rotary, cfg, dim, layer_type=None):
    """cos, sin at position 1 from the family's rotary module (float64)."""
    import torch

    x = torch.zeros(1, 1, dim, dtype=torch.float64)
    pos = torch.tensor([[1]])
    if getattr(cfg, "rope_parameters", None) and "mrope_section" in (cfg.rope_parameters or {}):
        pos = pos[None].expand(3, 1, 1)
    try:
        return rotary(x, pos, layer_type) if layer_type is not None else rotary(x, pos)
    except TypeError:
        return rotary(x, pos)


def _empirical_layout(module, cfg, rotary, dim, layer_type=None):
    """Apply the family's ``apply_rotary_pos_emb`` (what its attention's forward calls) to
    the unit vectors at position 1 and see which features it mixes: ``"half"`` when feature
    0 mixes with feature dim/2, ``"interleaved"`` when with feature 1."""
    import torch

    apply = module.apply_rotary_pos_emb
    cos, sin = _rotary_forward(rotary, cfg, dim, layer_type)
    cos, sin = cos[..., :dim], sin[..., :dim]
    eye = torch.eye(dim, dtype=torch.float64)[None, :, None, :]  # [1, heads=dim, 1, dim]
    # (Qwen2-VL / Qwen2.5-VL: M-RoPE picks each pair's frequency by section inside the
    # rotary module; the attention then calls the plain apply_rotary_pos_emb)
    q, _ = apply(eye, eye, cos, sin)
    mixed = q[0, :, 0, :].abs().numpy()
    np.fill_diagonal(mixed, 0.0)
    partner = int(mixed[0].argmax())
    return {dim // 2: "half", 1: "interleaved"}[partner]


def _layout(hf, module, cfg, rotary, dim, layer_type=None):
    mt = cfg.model_type
    if mt == "gptj":
        # modeling_gptj.py rotate_every_two / apply_rotary_pos_emb: pairs (2i, 2i+1)
        return "interleaved"
    if mt == "deepseek_v2":
        # modeling_deepseek_v2.py apply_rotary_emb: view_as_complex(x.reshape(..., -1, 2)),
        # pairs (2i, 2i+1)
        return "interleaved"
    if mt == "llama4_text":
        # modeling_llama4.py apply_rotary_emb: view_as_complex(x.reshape(..., -1, 2)),
        # pairs (2i, 2i+1)
        return "interleaved"
    if mt == "deepseek_v3":
        # DeepseekV3Attention.forward: apply_rotary_pos_emb_interleave if
        # config.rope_interleave (default True), else apply_rotary_pos_emb
        return "interleaved" if cfg.rope_interleave else "half"
    if mt == "deepseek_v32":
        # DeepseekV32Attention.forward calls apply_rotary_pos_emb_interleave unconditionally
        # (modeling_deepseek_v32.py:424); its indexer uses the half layout (line 220)
        return "interleaved"
    return _empirical_layout(module, cfg, rotary, dim, layer_type)


def _alibi_slopes(hf, cfg) -> np.ndarray:
    """The per-head ALiBi slopes from the family's own builder, float64."""
    import torch

    mt = cfg.model_type
    heads = cfg.num_attention_heads if mt != "mpt" else cfg.n_heads
    if mt in ("bloom", "falcon"):
        module = _family_module(hf, mt)
        # Falcon's build_alibi_tensor rounds the slopes to bfloat16 before multiplying
        # (`slopes[..., None].bfloat16() * arange_tensor`, modeling_falcon.py:174); as with
        # float32 elsewhere, the reference is the same computation without that rounding
        with hf_float64([module]), _default_float64(), _bfloat16_as_double():
            # build_alibi_tensor(attention_mask, num_heads, dtype): slopes * position
            alibi = module.build_alibi_tensor(torch.ones(1, 2, dtype=torch.long), heads,
                                              torch.float64)
        return alibi.reshape(heads, 2)[:, 1].double().numpy()
    module = _family_module(hf, "mpt")
    with hf_float64([module]), _default_float64():
        alibi = module.build_mpt_alibi_tensor(heads, 2, cfg.attn_config.alibi_bias_max)
    # slopes * arange(1 - L, 1): the entry one position back is -slope
    return -alibi.reshape(heads, 2)[:, 0].double().numpy()


@contextmanager
def _bfloat16_as_double():
    import torch

    saved = torch.Tensor.bfloat16
    torch.Tensor.bfloat16 = torch.Tensor.double
    try:
        yield
    finally:
        torch.Tensor.bfloat16 = saved


def _no_position_record(kind):
    return HFLayer(kind, False, None, 1.0, None, False, None, None, None)


def hf_layers(hf, config: dict, *, float64: bool = True) -> list[HFLayer]:
    """Per layer, one :class:`HFLayer`: what Hugging Face's code does with position."""
    from transformers import modeling_rope_utils

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = hf_config(hf, config)
    mt = cfg.model_type
    module = _family_module(hf, mt)
    kinds = _kinds(cfg, module)
    n = cfg.num_hidden_layers

    # ALiBi families: no rotary embedding; a per-head linear bias instead
    if mt in ("bloom", "mpt") or (mt == "falcon" and cfg.alibi):
        slopes = _alibi_slopes(hf, cfg)
        return [HFLayer("full_attention", False, None, 1.0, None, False, None, slopes, None)
                for _ in range(n)]

    def ctx():
        return hf_float64([modeling_rope_utils, module]) if float64 else _nothing()

    if mt == "gptj":
        return _gptj_layers(module, cfg, float64)

    rotary_cls = _one(module, "RotaryEmbedding") if _has_rotary(module) else None
    # families whose model builds no rotary embedding from this config
    # GraniteMoeHybridModel.__init__: rotary_emb only if position_embedding_type == "rope"
    # (modeling_granitemoehybrid.py:1056); Zamba2Model: only if use_mem_rope
    # (modeling_zamba2.py:1136); Jamba and Nemotron-H have no rotary class at all
    if mt == "granitemoehybrid" and cfg.position_embedding_type != "rope":
        rotary_cls = None
    if mt == "zamba2" and not cfg.use_mem_rope:
        rotary_cls = None
    with ctx(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rotary = rotary_cls(config=cfg) if rotary_cls is not None else None
    attention_cls = _one(module, "Attention")
    mrope = (cfg.rope_parameters or {}).get("mrope_section") if getattr(
        cfg, "rope_parameters", None) else None
    mrope = tuple(mrope) if mrope is not None else None

    out = []
    layouts = {}
    for i, kind in enumerate(kinds):
        if kind in ("mamba", "conv", "mlp", "linear_attention"):
            out.append(_no_position_record(kind))
            continue
        attention = _build_attention(attention_cls, cfg, i)
        if rotary is None:
            rotates = False
        elif mt == "cohere2":
            # Cohere2Attention.forward: `if self.sliding_window is not None:` apply RoPE;
            # the full layers are NoPE (modeling_cohere2.py:190 and :221)
            rotates = attention.sliding_window is not None
        elif mt == "exaone4":
            rotates = attention.sliding_window is None or attention.is_sliding
        else:
            rotates = bool(getattr(attention, "use_rope", True))
        t = kind
        if rotary is not None and hasattr(rotary, f"{t}_inv_freq"):
            inv = getattr(rotary, f"{t}_inv_freq")
            scaling = getattr(rotary, f"{t}_attention_scaling")
        elif rotary is not None:
            inv, scaling = rotary.inv_freq, rotary.attention_scaling
        else:
            inv, scaling = None, 1.0
        if mt == "phimoe" and rotary is not None and "short_mscale" in cfg.rope_parameters:
            # PhimoeRotaryEmbedding.forward: cos/sin times short_mscale while the sequence is
            # within original_max_position_embeddings, long_mscale past it
            # (modeling_phimoe.py:82-95); the short one is the value at initialisation
            scaling = cfg.rope_parameters["short_mscale"]
        window = _window(cfg, attention, kind)
        layout = None
        if rotates:
            dim = 2 * inv.shape[-1]
            if t not in layouts:
                with ctx():
                    layouts[t] = _layout(hf, module, cfg, rotary, dim,
                                         t if hasattr(rotary, f"{t}_inv_freq") else None)
            layout = layouts[t]
        out.append(HFLayer(kind, rotates, inv.double().numpy() if rotates else None,
                           float(scaling) if rotates else 1.0, window,
                           hasattr(attention, "sinks"), layout, None,
                           mrope if rotates else None, causal=mt != "modernbert",
                           chunk=(cfg.attention_chunk_size if kind == "chunked_attention"
                                  else None),
                           attention=attention))
    return out


def _build_attention(attention_cls, cfg, i):
    import torch

    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return attention_cls(cfg, layer_idx=i)
        except TypeError:
            # Zamba2Attention(config, layer_idx, num_fwd_mem_blocks, block_id)
            return attention_cls(cfg, i)


def _window(cfg, attention, kind):
    mt = cfg.model_type
    if kind != "sliding_attention":
        return None
    if mt == "modernbert":
        # ModernBertConfig.sliding_window = local_attention // 2 (configuration_modernbert.py
        # :160); the bidirectional mask sees |i - j| <= sliding_window
        # (masking_utils.sliding_window_bidirectional_overlay); the attention module keeps
        # sliding_window + 1 for flash attention's inclusive bound (modeling_modernbert.py:242)
        return int(cfg.sliding_window)
    window = getattr(attention, "sliding_window", None)
    if window is None:
        window = getattr(cfg, "sliding_window", None)
    return window


def _gptj_layers(module, cfg, float64):
    """GPT-J: no rotary module; GPTJAttention keeps a sin/cos table from
    ``create_sinusoidal_positions(max_positions, rotary_dim)`` (modeling_gptj.py:48, base
    10000 fixed) and rotates the first ``rotary_dim`` features of each head, interleaved."""
    import torch

    dim = cfg.rotary_dim or cfg.n_embd // cfg.n_head
    with (hf_float64([module]) if float64 else _nothing()), (
            _default_float64() if float64 else _nothing()):
        table = module.create_sinusoidal_positions(2, dim)
    sin, cos = table[1, : dim // 2], table[1, dim // 2:]
    inv = torch.atan2(sin.double(), cos.double()).numpy()
    return [HFLayer("full_attention", True, inv, 1.0, None, False, "interleaved", None, None)
            for _ in range(cfg.n_layer)]
