"""Prefix caching and chunked prefill: a suffix starts where the cache ends.

An engine that already holds a prompt's prefix in its cache (vLLM's automatic prefix
caching, SGLang's radix cache) or that feeds a long prompt in pieces (chunked prefill) runs
the rest with the cache, and the rest's position ids must start at the cached length.
:func:`chunked_prefill` does that chunk by chunk with :func:`posenc.inference.run`;
``offset`` moves every chunk after the first, to show what an off-by-offset does.
"""

from __future__ import annotations

import torch

from .._validation import check_int
from .forward import run

__all__ = ["chunked_prefill"]


def chunked_prefill(model, tokens: torch.Tensor, chunk: int, *, offset: int = 0) -> torch.Tensor:
    """The logits of ``tokens`` (``[batch, seq]``) fed ``chunk`` tokens at a time through a
    KV cache: ``[batch, seq, vocab]``.

    Chunk ``c`` gets positions ``c * chunk + offset .. `` (the first chunk ``0 ..``);
    ``offset=0`` is right and equals one full forward, another offset is the bug of a suffix
    placed at the wrong start (``offset=-chunk`` starts the second chunk at 0 again, as a
    suffix run without its cached length would). Positions must stay ``>= 0``.
    """
    chunk = check_int("chunk", chunk)
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"offset must be an integer, got {offset!r}")
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 2:
        raise ValueError("tokens must be an integer tensor [batch, seq]")
    batch, seq = tokens.shape
    cache, out = None, []
    for start in range(0, seq, chunk):
        piece = tokens[:, start:start + chunk]
        first = start + (offset if start else 0)
        if first < 0:
            raise ValueError(f"offset {offset} puts chunk {start // chunk} at position {first} "
                             "< 0")
        positions = first + torch.arange(piece.shape[1]).expand(batch, -1)
        result = run(model, piece, positions=positions, cache=cache)
        cache = result.cache
        out.append(result.logits)
    return torch.cat(out, dim=1)
