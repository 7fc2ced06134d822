"""The registered RoPE variants (partial_rope, p_rope, xpos, axial_rope) against the numpy
functions they wrap, and TinyLM's NoPE layer pattern (Llama 4's interleaved NoPE layers)."""

import numpy as np
import pytest
import torch

from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import (
    AxialRotaryEmbedding,
    MultiHeadSelfAttention,
    NoPosition,
    PartialRotaryEmbedding,
    ProportionalRotaryEmbedding,
    RotaryEmbedding,
    T5RelativeBias,
    XPosEmbedding,
)
from posenc.nn.axial_rope import grid_coordinates
from posenc.nn.rope_kernel import (
    apply_axial_rope,
    apply_mrope,
    apply_partial_rope,
    apply_rope,
    apply_xpos,
)
from posenc.scaling import rope_scaling_frequencies

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def qk():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(2, 4, 18, 32, generator=g, dtype=torch.float64),
            torch.randn(2, 4, 18, 32, generator=g, dtype=torch.float64))


def _rotate(position, q, k, **options):
    layer = MultiHeadSelfAttention(4 * q.shape[-1], 4, position, **options)
    return layer.encoding.rotate(q, k)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_partial_rope_module(layout, qk):
    q, k = qk
    q2, k2 = _rotate("partial_rope", q, k, partial_rotary_factor=0.25, rope_layout=layout)
    torch.testing.assert_close(q2, apply_partial_rope(q, 8, layout=layout))
    torch.testing.assert_close(k2, apply_partial_rope(k, 8, layout=layout))
    full = PartialRotaryEmbedding(32, partial_rotary_factor=1.0, layout=layout)
    torch.testing.assert_close(full(q), RotaryEmbedding(32, layout=layout)(q))
    with pytest.raises(ValueError, match="must be even"):
        PartialRotaryEmbedding(32, partial_rotary_factor=0.3)  # int(9.6) = 9
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        PartialRotaryEmbedding(32, partial_rotary_factor=1.2)


def test_p_rope_module(qk):
    q, k = qk
    q2, _ = _rotate("p_rope", q, k, partial_rotary_factor=0.5, base=500.0)
    inv, _ = rope_scaling_frequencies("proportional", 32, base=500.0, partial_rotary_factor=0.5)
    torch.testing.assert_close(q2, apply_rope(q, frequencies=inv, base=500.0))
    module = ProportionalRotaryEmbedding(32, partial_rotary_factor=0.5)
    assert np.count_nonzero(module.frequencies) == 8
    torch.testing.assert_close(ProportionalRotaryEmbedding(32, partial_rotary_factor=1.0)(q),
                               RotaryEmbedding(32)(q))


def test_xpos_module(qk):
    q, k = qk
    q2, k2 = _rotate("xpos", q, k, xpos_scale_base=64.0)
    rq, rk = apply_xpos(q, k, scale_base=64.0)
    torch.testing.assert_close(q2, rq)
    torch.testing.assert_close(k2, rk)
    with pytest.raises(ValueError, match="scale_base"):
        XPosEmbedding(32, scale_base=-1.0)


def test_axial_module_and_grid(qk):
    q, k = qk
    rows, cols = grid_coordinates(18, 6)
    np.testing.assert_array_equal(rows, np.repeat(np.arange(3), 6))
    np.testing.assert_array_equal(cols, np.tile(np.arange(6), 3))
    q2, _ = _rotate("axial_rope", q, k, grid_cols=6)
    torch.testing.assert_close(q2, apply_axial_rope(q, rows, cols))
    square_rows, square_cols = grid_coordinates(16)
    assert square_rows.max() == square_cols.max() == 3
    assert AxialRotaryEmbedding(32, grid_cols=None)(q[..., :16, :]).shape == (2, 4, 16, 32)
    with pytest.raises(ValueError, match="multiple of 4"):
        AxialRotaryEmbedding(6)


# --- NoPE layers ----------------------------------------------------------------------------

def test_nope_every_fourth_layer():
    config = TinyLMConfig(position="rope", num_layers=8, nope_every=4)
    assert config.block_positions() == ("rope",) * 3 + ("none",) + ("rope",) * 3 + ("none",)
    model = TinyLM(config)
    kinds = [type(b.attn.encoding) for b in model.blocks]
    assert kinds == [RotaryEmbedding] * 3 + [NoPosition] + [RotaryEmbedding] * 3 + [NoPosition]
    assert len(model.rotary_embeddings()) == 6
    assert TinyLMConfig(position="rope", num_layers=3).block_positions() == ("rope",) * 3
    assert TinyLMConfig(position="learned").block_positions() == ("none", "none")


def test_nope_every_layer_is_a_nope_model():
    """nope_every=1: no block keeps RoPE, so the model is the NoPE model, weight for weight."""
    tokens = torch.randint(0, 256, (2, 20), generator=torch.Generator().manual_seed(3))
    torch.manual_seed(0)
    all_nope = TinyLM(TinyLMConfig(position="rope", nope_every=1)).eval()
    torch.manual_seed(0)
    none = TinyLM(TinyLMConfig(position="none")).eval()
    assert torch.equal(all_nope(tokens), none(tokens))
    torch.manual_seed(0)
    rope = TinyLM(TinyLMConfig(position="rope", nope_every=2)).eval()
    assert not torch.allclose(rope(tokens), none(tokens))


def test_nope_layers_with_a_shared_t5_table():
    model = TinyLM(TinyLMConfig(position="t5", num_layers=6, nope_every=3))
    encodings = [b.attn.encoding for b in model.blocks]
    assert isinstance(encodings[2], NoPosition) and isinstance(encodings[5], NoPosition)
    t5 = [e for e in encodings if isinstance(e, T5RelativeBias)]
    assert len(t5) == 4 and all(e is t5[0] for e in t5)


def test_nope_every_bad_values():
    with pytest.raises(ValueError, match="nope_every"):
        TinyLMConfig(position="rope", nope_every=-1)
    with pytest.raises(TypeError, match="nope_every"):
        TinyLMConfig(position="rope", nope_every=1.5)
    with pytest.raises(ValueError, match="inside attention"):
        TinyLMConfig(position="sinusoidal", nope_every=2)


@pytest.mark.parametrize("layout", ["chunked", "interleaved"])
def test_torch_mrope_is_the_numpy_formula_in_both_layouts(layout):
    from posenc.rope_variants import apply_mrope as numpy_mrope
    from posenc.rope_variants import mrope_position_ids

    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 12, 16))
    ids = mrope_position_ids([3, (2, 2, 2), 1])  # [3, 12]: text, a 2-frame video, text
    out = apply_mrope(torch.from_numpy(x), ids, sections=(4, 2, 2), layout=layout)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    np.testing.assert_allclose(out.numpy(), numpy_mrope(x, ids, sections=(4, 2, 2),
                                                        layout=layout), atol=1e-12)
