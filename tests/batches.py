"""Test batches shared by the inference tests (tests/ is on sys.path, tests/conftest.py)."""

from __future__ import annotations

import torch


def left_padded(lengths, *, seed: int = 0, vocab: tuple[int, int] = (1, 256)):
    """Random prompts of ``lengths`` (token ids in ``[vocab[0], vocab[1])``), left-padded
    with id 0 to the longest: ``(tokens [batch, width], mask [batch, width], prompts)``."""
    width = max(lengths)
    g = torch.Generator().manual_seed(seed)
    prompts = [torch.randint(*vocab, (n,), generator=g) for n in lengths]
    tokens = torch.stack([torch.cat([torch.zeros(width - len(p), dtype=torch.long), p])
                          for p in prompts])
    mask = (torch.arange(width)[None, :] >= torch.tensor([[width - n] for n in lengths])).long()
    return tokens, mask, prompts
