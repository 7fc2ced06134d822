"""How many bytes a model's KV cache holds per token, read from its config.json (numpy only).

During generation every attention layer keeps what it computed for the tokens already seen,
so a new token's query can attend to them without recomputing. Per layer and per cached
token that is (``values_per_token``):

* grouped-query (and multi-head) attention: a key and a value of ``head_dim`` numbers for
  each of the ``num_key_value_heads`` heads, ``2 * num_key_value_heads * head_dim``
  (Ainslie et al., 2023; ``num_key_value_heads`` defaults to ``num_attention_heads``, as in
  Hugging Face's configuration classes);
* multi-head latent attention (DeepSeek-V2/V3): the compressed latent ``c_KV`` of
  ``kv_lora_rank`` numbers plus the decoupled rotary key ``k_R`` of ``qk_rope_head_dim``
  numbers, shared by all heads (DeepSeek-V2 report, section 2.1.4: ``(d_c + d_h^R) l``
  elements per token);
* Gemma 4's full-attention layers: their own head, ``global_head_dim``, (and
  ``num_global_key_value_heads`` heads where ``attention_k_eq_v`` gives them); its last
  ``num_kv_shared_layers`` layers read an earlier layer's cache and store nothing (as
  transformers' ``DynamicCache`` gives them a ``DummyLayer``);
* DeepSeek-V3.2's indexer keys on top: ``index_head_dim`` numbers per token and layer, one
  key shared by the indexer's heads (Hugging Face's ``update_indexer`` keeps them in the
  same cache; DeepSeek's own kernels store them in float8, counted here in the cache's dtype);
* a layer that does not attend (``linear_attention``: Qwen3-Next's Gated DeltaNet, Kimi
  Linear's KDA; ``mamba``, ``conv``, ``mlp``): nothing
  per token; its recurrent state has a fixed size and is not counted here.

A query of a sliding-window layer of ``w`` sees itself and the ``w - 1`` keys before it
(chapter 14), so after ``L`` tokens the layer keeps ``min(L, w - 1)`` of them for the next
query, as Hugging Face's ``DynamicSlidingWindowLayer`` does; a chunked layer of ``c`` at most
``c - 1``. So a sequence of ``L`` tokens costs ``sum over layers of values_per_token *
min(L, kept) * bytes_per_value`` (:meth:`KVCache.bytes_at`); per token, that divided by
``L``. The cache holds keys *after*
RoPE (that is why it is a position topic: chapter 16); its size does not depend on the
rotary settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, check_int
from .families import get_family
from .reader import read_config

__all__ = ["DTYPE_BYTES", "KVCache", "kv_cache"]

#: Bytes per cached number for the dtypes a cache is kept in.
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float8": 1}


@dataclass(frozen=True)
class KVCache:
    """A model's KV cache, layer by layer.

    ``values_per_token``: per layer, the numbers cached per token (keys and values
    together); ``kept``: per layer, the most tokens it keeps (its window or chunk minus
    one), ``None`` for all; ``layout``: ``"gqa"`` (keys and values per KV head) or
    ``"mla"`` (DeepSeek's latent plus rotary key).
    """

    values_per_token: tuple[int, ...]
    kept: tuple[int | None, ...]
    layout: str

    def tokens_kept(self, length: int) -> np.ndarray:
        """Per layer, the tokens cached for a sequence of ``length`` tokens (int64 ``[layers]``)."""
        length = check_int("length", length)
        return np.array([length if k is None else min(length, k) for k in self.kept],
                        dtype=np.int64)

    def bytes_at(self, length: int, dtype: str = "bfloat16") -> int:
        """The whole cache of one sequence of ``length`` tokens, in bytes, kept in ``dtype``
        (one of :data:`DTYPE_BYTES`)."""
        size = DTYPE_BYTES[check_choice("dtype", dtype, tuple(DTYPE_BYTES))]
        per_layer = np.array(self.values_per_token, dtype=np.int64)
        return int(np.sum(per_layer * self.tokens_kept(length))) * size

    def bytes_per_token(self, length: int, dtype: str = "bfloat16") -> float:
        """:meth:`bytes_at` divided by ``length``: what one token costs on average once the
        sequence is ``length`` long (a sliding window's share falls as ``length`` grows)."""
        return self.bytes_at(length, dtype) / check_int("length", length)


def _kv_head_dim(config: Mapping) -> int:
    """The key/value head size: ``head_dim``, else ``hidden_size / num_attention_heads``."""
    if config.get("head_dim") is not None:
        return check_int("head_dim", config["head_dim"])
    hidden = check_int("hidden_size", config.get("hidden_size"))
    heads = check_int("num_attention_heads", config.get("num_attention_heads"))
    return hidden // heads


def kv_cache(config: Mapping) -> KVCache:
    """The KV cache of the model a ``config.json`` describes (a dict; a multimodal config's
    ``text_config`` is read in its place), as the module docstring counts it.

    Layer types, windows and chunks come from :func:`posenc.configs.read_config`. Raises
    ``ValueError`` naming the field when ``num_key_value_heads`` does not divide
    ``num_attention_heads`` (each KV head serves a whole group of query heads), when a
    latent-attention config lacks ``kv_lora_rank``, and for everything
    :func:`~posenc.configs.read_config` refuses.
    """
    model = read_config(config)
    text = config.get("text_config") or config
    family = get_family(text.get("model_type"))
    if family.latent or "kv_lora_rank" in text:
        if text.get("kv_lora_rank") is None:
            raise ValueError("kv_lora_rank is required for multi-head latent attention "
                             f"(model_type {text.get('model_type')!r})")
        per_layer = (check_int("kv_lora_rank", text["kv_lora_rank"])
                     + check_int("qk_rope_head_dim", text.get("qk_rope_head_dim")))
        if family.indexer:
            per_layer += check_int("index_head_dim", text.get("index_head_dim", 128))
        layout = "mla"
    else:
        heads = check_int("num_attention_heads", text.get("num_attention_heads"))
        kv_heads = check_int("num_key_value_heads", text.get("num_key_value_heads", heads))
        if heads % kv_heads:
            raise ValueError(f"num_key_value_heads ({kv_heads}) must divide "
                             f"num_attention_heads ({heads})")
        per_layer = 2 * kv_heads * _kv_head_dim(text)
        layout = "gqa"
    full_layer = per_layer
    if family.global_head_dim is not None:
        global_kv = text.get("num_global_key_value_heads")
        if global_kv is None or not text.get("attention_k_eq_v", False):
            global_kv = kv_heads
        full_layer = 2 * check_int("num_global_key_value_heads", global_kv) * check_int(
            "global_head_dim", text.get("global_head_dim", family.global_head_dim))
    # Gemma 4: the last num_kv_shared_layers layers reuse the keys and values of the last
    # earlier layer of their type (Gemma4TextConfig.kv_sharing_modes) and cache nothing
    shared = check_int("num_kv_shared_layers", text.get("num_kv_shared_layers", 0), minimum=0)
    if shared > model.num_layers:
        raise ValueError(f"num_kv_shared_layers ({shared}) exceeds num_hidden_layers "
                         f"({model.num_layers})")
    values, kept = [], []
    for i, layer in enumerate(model.layers):
        if not layer.attends or i >= model.num_layers - shared:  # recurrent, conv, MLP
            values.append(0)
        else:
            values.append(full_layer if layer.layer_type == "full_attention" else per_layer)
        limit = layer.window or layer.chunk
        kept.append(None if limit is None else limit - 1)
    return KVCache(tuple(values), tuple(kept), layout)
