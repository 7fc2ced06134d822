import matplotlib
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from posenc.course.figures import local_global as lg  # noqa: E402
from posenc.course.figures.style import COURSE_RC, MIN_FONT_PT  # noqa: E402
from posenc.model import TinyLM, TinyLMConfig  # noqa: E402


@given(n=st.integers(1, 400), gap=st.floats(-5, 20), scale=st.floats(0.5, 3))
def test_one_key_attention_equals_softmax(n, gap, scale):
    """Second formulation: the softmax of the n logits written out."""
    logits = np.zeros(n)
    logits[0] = gap
    w = np.exp(scale * logits - np.max(scale * logits))
    w /= w.sum()
    p, h = lg.one_key_attention(n, gap, scale)
    np.testing.assert_allclose(p, w[0], rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(h, -np.sum(w * np.log(np.where(w > 0, w, 1))), atol=1e-9)


def test_one_key_attention_large_n_and_validation():
    p, h = lg.one_key_attention(np.array([1e12]), 8.0)
    assert 0 < p[0] < 1e-8 and abs(h[0] - np.log(1e12)) < 1e-3
    with pytest.raises(ValueError, match="n must be >= 1"):
        lg.one_key_attention(0, 1.0)


def test_first_token_mass_sums_to_one_with_the_sink():
    torch.manual_seed(0)
    model = TinyLM(TinyLMConfig(pattern="gpt_oss", num_layers=2, pattern_length=16))
    with torch.no_grad():
        for block in model.blocks:
            block.attn.sinks.copy_(torch.tensor([2.0, 0.0, -1.0, 1.0]))
    s = lg.first_token_mass(model, torch.randint(0, 256, (3, 16)))
    assert s["by_key"].shape == (2, 4, 16) and s["sink"].shape == (2, 4)
    np.testing.assert_allclose(s["by_key"].sum(-1) + s["sink"], 1.0, atol=1e-6)
    assert np.all(s["by_key"][0][:, :8 - 1] == 0)  # banded layer (band 2): early keys unseen
    assert s["sink"][0, 0] > s["sink"][0, 2]  # a larger sink logit takes more


def test_added_gates_keep_every_weight_and_first_token_mass_reads_them():
    torch.manual_seed(0)
    config = TinyLMConfig(pattern="gpt_oss", num_layers=2, pattern_length=16)
    model = TinyLM(config)
    tokens = torch.randint(0, 256, (3, 16))
    assert np.all(lg.first_token_mass(model, tokens)["gate"] == 1)  # no gate: all passes
    before = {k: v.clone() if torch.is_tensor(v) else v for k, v in model.state_dict().items()}
    lg._add_output_gates(model, config)
    after = model.state_dict()
    assert set(after) - set(before) == {f"blocks.{i}.attn.gate.{p}" for i in (0, 1)
                                        for p in ("weight", "bias")}
    assert all(torch.equal(after[k], v) if torch.is_tensor(v) else after[k] == v
               for k, v in before.items())  # weights, sinks and RoPE's settings
    assert all(b.attn.sinks is not None for b in model.blocks)  # sinks kept
    with torch.no_grad():
        model.blocks[0].attn.gate.weight.zero_()
        model.blocks[0].attn.gate.bias.fill_(float(np.log(1 / 3)))  # sigmoid: 1/4
    s = lg.first_token_mass(model, tokens)
    assert s["gate"].shape == (2, 4)
    np.testing.assert_allclose(s["gate"][0], 0.25, rtol=1e-6)
    assert np.all(np.abs(s["gate"][1] - 0.5) < 0.05)  # N(0, 0.02) weights, zero bias
    with pytest.raises(TypeError, match="gate must be True or False"):
        lg.train_sink_model(None, gate=1)


@pytest.mark.parametrize("draw, kwargs, figsize", [
    (lg.draw_mask_and_field, dict(reach="window", size=8, layers=4), (6.88, 3.4)),
    (lg.draw_mask_and_field, dict(reach="chunk", size=2, layers=1), (6.88, 3.4)),
    (lg.draw_temperature, dict(gap=16, attn_scale=0.5), (6.88, 3.6)),
])
def test_figures_draw_legibly(draw, kwargs, figsize):
    with plt.rc_context(COURSE_RC):
        fig = plt.figure(figsize=figsize)
        axes = draw(fig, **kwargs)
        assert len(axes) == 2
        fig.canvas.draw()
        sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text() and t.get_visible()]
        assert min(sizes) >= MIN_FONT_PT
        plt.close(fig)


def test_sink_figure_draws():
    stats = {5: {"by_key": np.full((2, 4, 16), 0.05), "sink": np.full((2, 4), 0.2),
                 "gate": np.full((2, 4), 0.3), "uniform": 0.07}}
    runs = dict.fromkeys(lg.SINK_RUNS, stats)
    with plt.rc_context(COURSE_RC):
        fig = plt.figure(figsize=(6.88, 3.4))
        axes = lg.draw_sink_mass(fig, runs, 5)
        assert len(axes) == 3
        # token 0's weight in each run (3 runs x 4 heads), sinks and gates per layer and head
        assert [len(ax.patches) for ax in axes] == [12, 8, 8]
        assert [p.get_height() for p in axes[2].patches] == [0.3] * 8
        with pytest.raises(ValueError, match="runs must have the keys"):
            lg.draw_sink_mass(fig, {"sinks": stats}, 5)
        plt.close(fig)


def test_bad_arguments():
    fig = plt.figure()
    with pytest.raises(ValueError, match="reach must be one of"):
        lg.draw_mask_and_field(fig, "band", 2, 1)
    with pytest.raises(ValueError, match="layers must be"):
        lg.draw_mask_and_field(fig, "window", 2, 0)
    plt.close(fig)
