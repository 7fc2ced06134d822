"""posenc.inference's position ids at inference against Hugging Face transformers' own
functions (the pinned 5.23): left padding's ids on every token, padding included, and the
next decoding position, for prompts of lengths 5, 1, 8 and 2 (a one-token prompt is the case
where "largest id + 1" and "last id + 1" part ways); then the next token's logits on TinyLM."""

import pytest
import torch
from batches import left_padded
from transformers import GenerationMixin

from posenc.inference import padded_mask, position_ids_from_mask, run
from posenc.model import TinyLM, TinyLMConfig

LENGTHS = [5, 1, 8, 2]
TOL = 1e-12  # float64


class _Generation(GenerationMixin):
    """Just enough of a model for GenerationMixin's position helpers (they read no weights)."""


def hf_position_ids(mask):
    return _Generation()._prepare_position_ids_for_generation(
        torch.zeros_like(mask), {"attention_mask": mask})


def hf_next_positions(position_ids):
    kwargs = _Generation()._update_model_kwargs_for_generation(
        {}, {"position_ids": position_ids}, num_new_tokens=1)
    return kwargs["position_ids"][:, -1]


@pytest.mark.parametrize("lengths", [LENGTHS, [1], [3, 3], [1, 7, 1]])
def test_left_padding_ids_equal_hugging_faces_on_every_token(lengths):
    _, mask, _ = left_padded(lengths)
    ours, theirs = position_ids_from_mask(mask), hf_position_ids(mask)
    assert torch.equal(ours, theirs)  # padding included: both 0
    assert ours[mask == 0].eq(0).all()


def test_next_positions_equal_hugging_faces_after_a_left_padded_prompt():
    model = TinyLM(TinyLMConfig(position="rope", num_layers=1)).double().eval()
    tokens, mask, _ = left_padded(LENGTHS)
    ids = position_ids_from_mask(mask)
    with torch.no_grad():
        cache = run(model, tokens, positions=ids, allowed=padded_mask(mask)).cache
    assert cache.next_positions().tolist() == hf_next_positions(ids).tolist() == LENGTHS
    # the old rule (largest cached id + 1) on 4.x's padding value 1: the 1-token row at 2
    old = ids.masked_fill(mask == 0, 1)
    assert (old.max(dim=1).values + 1).tolist() == [5, 2, 8, 2]
    assert hf_next_positions(old).tolist() == LENGTHS  # last id + 1 does not care


@pytest.mark.parametrize("position", ["rope", "alibi"])
def test_the_next_token_after_a_batched_left_padded_prompt_equals_the_prompt_alone(position):
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(position=position, num_layers=2)).double().eval()
    with torch.no_grad():
        for block in model.blocks:  # attention far from uniform: a wrong position shows
            block.attn.qkv.weight[: 2 * model.config.d_model] *= 20.0
    tokens, mask, prompts = left_padded(LENGTHS, seed=1)
    nxt = torch.randint(1, 256, (len(LENGTHS), 1), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        prompt = run(model, tokens, positions=position_ids_from_mask(mask),
                     allowed=padded_mask(mask))
        step_mask = padded_mask(torch.cat([mask, torch.ones_like(mask[:, :1])], 1))[:, -1:]
        step = run(model, nxt, cache=prompt.cache, allowed=step_mask).logits[:, -1]
        for row, p in enumerate(prompts):
            alone = model(torch.cat([p, nxt[row]])[None])[0, -1]
            assert float((step[row] - alone).abs().max()) < TOL, (row, len(p))
