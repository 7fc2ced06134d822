"""Self-check questions of chapter 16, "Positions at inference" (``16_inference``).

Each has the id ``"inference.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "16_inference"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    import torch

    from ...inference import position_ids_from_mask, streaming_keep
    from ...rope_variants import mrope_position_ids

    mask = torch.tensor([[0, 0, 0, 1, 1, 1, 1]])
    last_id = int(position_ids_from_mask(mask)[0, -1])
    sinks, window, length = 4, 8, 100
    kept = streaming_keep(length, sinks=sinks, window=window)
    delta = int(kept[sinks] - sinks)  # the first window entry moves from kept[4] to 4
    # the eviction figure: 48 cached tokens, window 16, its sinks slider at 4 and at 0
    shift = {n: int(streaming_keep(48, sinks=n, window=16)[n] - n) for n in (4, 0)}
    start = int(streaming_keep(48, sinks=0, window=16)[0])
    assert shift[0] == shift[4] + 4 == start
    text_after = mrope_position_ids([2, (1, 6, 8), 1])[0, -1] - mrope_position_ids([2, 1])[0, -1]
    return [
        number("inference.left-padding-id",
               "A 4-token prompt is left-padded to 7 columns (attention mask 0 0 0 1 1 1 1). "
               "What position id does its last token get from cumsum(mask) − 1?",
               last_id, 0.1,
               f"The mask's running sum at the last column is 4, so the id is {last_id}: the "
               "prompt's own positions, whatever the padding.",
               "Count the real tokens up to and including it, then subtract 1."),
        mc("inference.packing-needs-mask",
           "Two documents are packed in one row and their position ids restart at 0 at the "
           "second document. With a plain causal mask, what does the second document see?",
           "The whole first document as well as its own",
           {"Only itself, because its ids restart at 0": "The mask decides what a query reads; "
            "ids only place the tokens.",
            "Only itself, because RoPE is relative": "RoPE changes how keys are scored, not "
            "which keys are there: the first document's keys are still in the softmax.",
            "The first document, but scored as if it were far away": "Its ids are not farther: "
            "a key of the first document can carry a larger id than the query, an offset the "
            "model has only met for tokens ahead. It is in the softmax either way."},
           "The ids say where a token is, not what it may read: only a mask that keeps each "
           "query inside its document (cu_seqlens in flash-attention) makes packed documents "
           "independent.", understanding=True),
        number("inference.streaming-shift",
               f"StreamingLLM keeps {sinks} sinks and the last {window} of {length} cached "
               f"tokens and renumbers them 0 to {sinks + window - 1}. By how many positions "
               "must the first key of the window be rotated back?",
               delta, 0.1,
               f"It was cached at position {kept[sinks]} and now sits at {sinks}: a rotation "
               f"by −{delta}, R(m − {delta}) = R(−{delta}) R(m).",
               "Find the window's first original position, then its new one."),
        mc("inference.eviction-sinks-slider",
           "In the StreamingLLM eviction figure (48 cached tokens, window 16), you move the "
           "sinks slider from 4 to 0. Predict the arrow, the re-rotation of the window's first "
           "key.",
           "It grows: that key now moves to position 0",
           {"It vanishes: with no sinks nothing is renumbered":
                f"The window's keys are still renumbered from their text positions to the "
                f"cache's 0 … 15: its first key moves from {start} to 0.",
            "It shrinks: fewer sinks leave fewer positions to skip":
                "The sinks sit before the window in the cache: with fewer of them the window "
                "starts earlier in the cache, so its keys move back farther.",
            "It stays the same: the sinks are not part of the window":
                "The window's first key sits right after the sinks in the cache: at 4 with "
                "4 sinks, at 0 with none."},
           f"Move the sinks slider to 0: the window's first key, cached at {start}, now sits at "
           f"0 instead of 4, a re-rotation by −{shift[0]} instead of −{shift[4]}.",
           understanding=True, predict=True),
        mc("inference.alibi-shift",
           "An engine evicts half of the cache of an ALiBi model. What must it do to the "
           "cached keys?",
           "Nothing: its keys hold no position at all",
           {"Rotate them by the shift, as for RoPE": "ALiBi rotates nothing; its bias "
            "−m(i − j) is computed from the ids when the scores are.",
            "Recompute them from the kept tokens, in a new forward pass": "They do not depend "
            "on position, so they are already what a fresh run would compute in the first "
            "layer.",
            "Subtract the shifted bias from each cached key": "The bias is not stored in the "
            "keys: it is added to the scores, computed from the position ids when the scores "
            "are."},
           "Only the position ids, from which the bias −m(i − j) is computed, change: llama.cpp "
           "shifts ALiBi caches by changing the positions in the mask only.",
           understanding=True),
        number("inference.mrope-image-shift",
               "Qwen2-VL's M-RoPE: 2 text tokens, then an image of 6 × 8 patches (48 tokens), "
               "then 1 text token. The image is evicted. By how much does the last text "
               "token's temporal id go down?",
               int(text_after), 0.1,
               f"Text after an image continues from the image's largest id, so the image "
               f"advanced the ids by max(6, 8) = {int(text_after)}, not by its 48 tokens.",
               "The ids advance by the image's extent, not by its number of tokens."),
    ]
