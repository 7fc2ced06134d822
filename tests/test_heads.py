"""Reading heads (posenc.heads): the weights a layer shows are the weights it uses, and the
previous-token and induction scores find the heads they name."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.heads import (
    attention_maps,
    head_scores,
    induction_scores,
    previous_token_scores,
    repeated_random_tokens,
)
from posenc.layer_patterns import PATTERNS
from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import POSITIONS, MultiHeadSelfAttention

#: 1-D methods a causal layer takes (axial RoPE is for image grids)
METHODS = [name for name in POSITIONS if name != "axial_rope"]


def _output_from_weights(layer: MultiHeadSelfAttention, x: torch.Tensor) -> torch.Tensor:
    """The layer's output rebuilt by hand from attention_weights: weights @ v (plus the
    method's value term), heads joined, the output gate, the output projection."""
    weights = layer.attention_weights(x)  # [b, h, q, k]
    _, _, v, _, _ = layer._scores_inputs(x)
    y = weights @ v
    if "value_term" in layer._hooks:
        extra = layer.encoding.value_term(weights, v)
        y = y if extra is None else y + extra
    batch, seq, _ = x.shape
    y = y.transpose(1, 2).reshape(batch, seq, layer.d_model)
    if layer.gate is not None:
        y = y * torch.sigmoid(layer.gate(x))
    return layer.out(y)


@pytest.mark.parametrize("method", METHODS)
def test_the_weights_shown_are_the_weights_used(method):
    """forward (the fused kernel where it can) equals the output rebuilt from the weights
    attention_weights returns, for every registered 1-D method; causal rows sum to 1 and
    put nothing on later keys."""
    torch.manual_seed(0)
    layer = MultiHeadSelfAttention(16, 2, method, causal=True, in_model=True).double()
    x = torch.randn(3, 9, 16, dtype=torch.float64)
    with torch.no_grad():
        expected = layer(x)
        rebuilt = _output_from_weights(layer, x)
    torch.testing.assert_close(rebuilt, expected, rtol=1e-9, atol=1e-10)
    weights = layer.attention_weights(x)
    assert weights.shape == (3, 2, 9, 9)
    assert torch.all(weights.triu(diagonal=1) == 0)
    if "normalise" not in layer._hooks:  # a softmax: each row sums to 1
        torch.testing.assert_close(weights.sum(-1), torch.ones(3, 2, 9, dtype=torch.float64))


@pytest.mark.parametrize("reach", [dict(window=3), dict(chunk=4), dict(sinks=True),
                                   dict(temperature=(4.0, 0.1)), dict(output_gate=True)])
def test_the_weights_follow_the_layers_reach_and_extras(reach):
    torch.manual_seed(1)
    layer = MultiHeadSelfAttention(16, 2, "rope", causal=True, in_model=True, **reach).double()
    x = torch.randn(2, 10, 16, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(_output_from_weights(layer, x), layer(x), rtol=1e-9,
                                   atol=1e-10)
    weights = layer.attention_weights(x)
    if "window" in reach:  # nothing more than 2 back
        i, j = torch.meshgrid(torch.arange(10), torch.arange(10), indexing="ij")
        assert torch.all(weights[..., i - j >= 3] == 0)
    if "sinks" in reach:  # the sink takes a share: rows sum to less than 1
        assert torch.all(weights.sum(-1) < 1)


def test_attention_maps_give_one_map_per_attention_layer_and_none_for_a_recurrent_one():
    torch.manual_seed(0)
    config = TinyLMConfig(vocab_size=256, d_model=16, num_heads=2, num_layers=4, d_ff=32,
                          pattern="kimi_linear", pattern_length=16)
    model = TinyLM(config).eval()
    maps = attention_maps(model, torch.randint(0, 128, (2, 12)))
    kinds = [block.attn is None for block in model.blocks]
    assert [m is None for m in maps] == kinds and not all(kinds)
    assert all(m.shape == (2, 2, 12, 12) for m in maps if m is not None)
    assert "kimi_linear" in PATTERNS


def _one_hot_offset(seq: int, offset: int, heads: int = 1) -> torch.Tensor:
    """Causal weights that put everything on key i - offset (key 0 when that is < 0)."""
    weights = torch.zeros(1, heads, seq, seq)
    for i in range(seq):
        weights[0, :, i, max(i - offset, 0)] = 1.0
    return weights


@given(st.integers(3, 20), st.integers(2, 10))
@settings(max_examples=30, deadline=None)
def test_each_score_finds_its_head_and_not_the_other(half, period):
    """A head on key i - 1 is a previous-token head (score 1) and, with period > 2, no
    induction head; a head on key i - period + 1 is an induction head (score 1)."""
    period = min(period, half)
    seq = 2 * period
    previous = _one_hot_offset(seq, 1)
    assert previous_token_scores(previous)[0] == pytest.approx(1.0)
    induction = _one_hot_offset(seq, period - 1)
    assert induction_scores(induction, period)[0] == pytest.approx(1.0)
    if period > 2:
        assert induction_scores(previous, period)[0] == 0.0
        assert previous_token_scores(induction)[0] < 1.0


def test_a_uniform_causal_head_scores_about_one_over_the_position():
    seq, period = 16, 8
    weights = torch.tril(torch.ones(seq, seq))
    weights = (weights / weights.sum(-1, keepdim=True))[None, None]
    expected_previous = np.mean([1 / (i + 1) for i in range(1, seq)])
    expected_induction = np.mean([1 / (i + 1) for i in range(period, seq)])
    assert previous_token_scores(weights)[0] == pytest.approx(expected_previous)
    assert induction_scores(weights, period)[0] == pytest.approx(expected_induction)


def test_repeated_random_tokens_repeat_one_block_without_a_repeat_inside_it():
    tokens = repeated_random_tokens(5, 12, seed=3)
    assert tokens.shape == (5, 24) and tokens.dtype == torch.int64
    assert torch.equal(tokens[:, :12], tokens[:, 12:])
    assert all(len(set(row[:12].tolist())) == 12 for row in tokens)
    assert int(tokens.max()) < 128
    assert torch.equal(tokens, repeated_random_tokens(5, 12, seed=3))


def test_head_scores_of_a_model_have_one_row_per_layer_and_one_value_per_head():
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(vocab_size=256, d_model=16, num_heads=4, num_layers=2,
                                d_ff=32, position="alibi")).eval()
    scores = head_scores(model, 8, batch=4)
    for key in ("previous_token", "induction"):
        assert len(scores[key]) == 2 and all(len(row) == 4 for row in scores[key])
        assert all(0 <= s <= 1 for row in scores[key] for s in row)
    # ALiBi's steepest head (slope 1/4 with 4 heads) leans on the nearest keys from the start
    assert scores["previous_token"][0][0] > scores["previous_token"][0][3]
    assert math.isfinite(sum(scores["induction"][1]))


@pytest.mark.parametrize("bad, match", [
    (torch.zeros(2, 3, 4), "weights must be a tensor"), (torch.zeros(1, 1, 3, 4), "weights"),
    ("x", "weights must be a tensor")])
def test_scores_refuse_what_is_not_a_map(bad, match):
    with pytest.raises(ValueError, match=match):
        previous_token_scores(bad)


def test_induction_refuses_a_period_the_sequence_cannot_hold():
    with pytest.raises(ValueError, match="period must be at most seq - 1 = 7"):
        induction_scores(torch.zeros(1, 1, 8, 8), 8)
    with pytest.raises(ValueError, match="period must be at most alphabet"):
        repeated_random_tokens(1, 200, seed=0)


# the two steps on the positional task's own sequences


def _task_batch(seed=0, batch=6, length=64):
    from posenc import retrieval
    text = np.random.default_rng(seed).integers(32, 127, 5000).astype(np.uint8)
    return retrieval.training_batch(text, batch, length, np.random.default_rng(seed),
                                    num_pairs=4, num_queries=4, task="positional")


def _uniform_causal(batch, heads, seq):
    rows = torch.tril(torch.ones(seq, seq, dtype=torch.float64))
    return (rows / rows.sum(-1, keepdim=True)).expand(batch, heads, seq, seq).clone()


def test_task_scores_find_the_binding_heads_by_hand():
    """Head 0 looks one back everywhere; head 1 looks, from each query, at its answer's
    value (and at itself elsewhere). value_to_key finds head 0 and only it, query_to_value
    head 1 and only it."""
    from posenc.heads import query_to_value_scores, value_to_key_scores
    b = _task_batch()
    n, seq = b.inputs.shape
    weights = torch.zeros(n, 2, seq, seq, dtype=torch.float64)
    weights[:, 0, 0, 0] = 1
    weights[:, 0, torch.arange(1, seq), torch.arange(seq - 1)] = 1
    weights[:, 1, torch.arange(seq), torch.arange(seq)] = 1
    for row, pos in zip(*torch.nonzero(b.mask, as_tuple=True), strict=True):
        weights[row, 1, pos, :] = 0
        weights[row, 1, pos, pos - b.distances[row, pos]] = 1
    np.testing.assert_allclose(value_to_key_scores(weights, b), [1, 0])
    np.testing.assert_allclose(query_to_value_scores(weights, b), [0, 1])


def test_a_uniform_head_scores_the_mean_of_one_over_the_position():
    """A second formulation: a plain loop over the bytes, 1 / (position + 1) each."""
    from posenc.heads import query_to_value_scores, value_to_key_scores
    from posenc.retrieval import VALUE_BYTES
    b = _task_batch(seed=3)
    weights = _uniform_causal(*b.inputs.shape[:1], 3, b.inputs.shape[1])
    values = [1 / (i + 1) for row in b.inputs.tolist() for i, t in enumerate(row)
              if t >= VALUE_BYTES.min() and i > 0]
    queries = [1 / (i + 1) for row in b.targets.tolist() for i, t in enumerate(row) if t >= 0]
    np.testing.assert_allclose(value_to_key_scores(weights, b), [np.mean(values)] * 3)
    np.testing.assert_allclose(query_to_value_scores(weights, b), [np.mean(queries)] * 3)


def test_task_head_scores_of_a_model_and_refusals():
    from posenc.heads import task_head_scores, value_to_key_scores
    b = _task_batch(batch=2)
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(d_model=16, num_heads=2, num_layers=4, d_ff=32,
                                pattern=PATTERNS["kimi_linear"])).eval()
    scores = task_head_scores(model, b)
    assert [s is None for s in scores["value_to_key"]] == [True, True, True, False]
    assert [len(s) for s in scores["query_to_value"] if s is not None] == [2]
    assert all(0 <= v <= 1 for s in scores.values() for layer in s if layer for v in layer)
    with pytest.raises(ValueError, match="do not belong to inputs"):
        value_to_key_scores(torch.zeros(1, 2, 64, 64), b)
