"""Converting a RoPE model between the interleaved and the half layout.

The interleaved layout (GPT-J, Meta's llama) rotates features ``(2i, 2i+1)`` together; the
half layout (GPT-NeoX, Hugging Face) rotates ``(i, i + d/2)``. A checkpoint trained in one
runs in the other after a fixed permutation of the rows of ``W_q`` and ``W_k`` within each
head (:func:`posenc.rope.interleaved_to_half_weight`, the ``permute`` of Hugging Face's
``convert_llama_weights_to_hf.py``): the scores ``q . k`` are sums over pairs, and the
permutation only renames the pairs. ``W_v`` and the output projection do not change.
Loading the weights into the other layout *without* the permutation pairs features that
were never rotated together, and attention goes wrong (DeepSeek-V3.2-Exp's indexer,
2025: the references page).
"""

from __future__ import annotations

import torch

from .._validation import check_bool, check_choice
from ..rope import LAYOUTS, interleaved_to_half_weight
from .forward import _check_model

__all__ = ["with_layout"]


def with_layout(model, layout: str, *, permute: bool = True):
    """A copy of the RoPE model ``model`` whose RoPE blocks use ``layout``.

    ``permute=True`` reorders the query and key rows of each block's ``qkv`` projection
    (weight and bias) so that the copy computes what ``model`` computes; ``permute=False``
    copies the weights unchanged (the bug). From ``"interleaved"`` to ``"half"`` the rows
    take :func:`~posenc.rope.interleaved_to_half_weight`; back, its inverse.
    """
    from ..model import TinyLM

    _check_model(model)
    layout = check_choice("layout", layout, LAYOUTS)
    check_bool("permute", permute)
    if model.config.position != "rope":
        raise ValueError(f"with_layout needs a model with position='rope', got "
                         f"{model.config.position!r}")
    current = model.config.position_options()["rope_layout"]
    with torch.random.fork_rng(devices=[]):  # its initial weights are overwritten: draw none
        copy = TinyLM(model.config.with_options(rope_layout=layout))
    copy = copy.to(next(model.parameters()).dtype)  # before loading: no rounding to float32
    state = {name: value.clone() if isinstance(value, torch.Tensor) else value
             for name, value in model.state_dict().items()}  # (extra state is a dict)
    if permute and current != layout:
        d = model.config.d_model
        for k, block in enumerate(model.blocks):
            if block.attn.position != "rope":
                continue
            for part in ("weight", "bias"):
                name = f"blocks.{k}.attn.qkv.{part}"
                if name in state:
                    state[name] = _permute_qk(state[name], d, block.attn.num_heads,
                                              to_half=layout == "half")
    copy.load_state_dict(state)
    return copy


def _permute_qk(rows: torch.Tensor, d_model: int, heads: int, *, to_half: bool) -> torch.Tensor:
    """The ``qkv`` rows (``[3 d_model, ...]``: queries, keys, values) with the query and key
    rows permuted within each head (values untouched)."""
    q, k, v = rows[:d_model], rows[d_model:2 * d_model], rows[2 * d_model:]
    if to_half:
        q, k = interleaved_to_half_weight(q, heads), interleaved_to_half_weight(k, heads)
    else:  # the inverse permutation: apply the forward one to row indices and invert
        index = interleaved_to_half_weight(torch.arange(d_model), heads)
        inverse = torch.argsort(index)
        q, k = q[inverse], k[inverse]
    return torch.cat([q, k, v])
