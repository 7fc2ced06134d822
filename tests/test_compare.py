import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.utils.flop_counter import FlopCounterMode

from posenc.alibi import alibi_bias
from posenc.catalogue import describe_method, forget_method
from posenc.compare import (
    ALIBI_PAPER_WIKITEXT103,
    METHOD_FACTS,
    METHODS,
    PARAMETER_SCOPE,
    PUBLISHED_WIKITEXT103,
    alibi_weight_factor,
    applies_to,
    attention_core_cost,
    comparison_rows,
    extra_attention_cost,
    html_table,
    position_parameter_count,
    rope_mean_score,
    sinusoidal_similarity,
)
from posenc.course.figures.compare import draw_distance_comparison
from posenc.nn import (
    ALiBiBias,
    LearnedPositionalEmbedding,
    MultiHeadSelfAttention,
    ShawRelativePosition,
    SinusoidalPositionalEncoding,
    T5RelativeBias,
)
from posenc.rope import apply_rope, rope_angles, rope_rotation_matrix
from posenc.rope_variants import axial_rope_angles, xpos_scale
from posenc.sinusoidal import sinusoidal_encoding


def test_parameter_counts_follow_the_published_shapes():
    cfg = dict(d_model=512, num_heads=8, max_positions=2048, shaw_max_distance=16,
               num_buckets=32)
    counts = {m: position_parameter_count(m, **cfg) for m in METHODS}
    assert counts == {"sinusoidal": 0, "learned": 2048 * 512, "rope": 0, "alibi": 0,
                      "t5": 32 * 8, "shaw": 2 * (2 * 16 + 1) * 64}
    later = {m: position_parameter_count(m, **cfg) for m in ("partial_rope", "p_rope", "xpos",
                                                             "axial_rope")}
    assert later == {"partial_rope": 0, "p_rope": 0, "xpos": 0, "axial_rope": 0}
    # T5-base: relative_attention_bias is Embedding(32, 12)
    assert position_parameter_count("t5", d_model=768, num_heads=12) == 384


def test_memory_is_what_the_modules_materialise():
    d, h, n = 32, 4, 10
    d_head = d // h
    produced = {
        "sinusoidal": SinusoidalPositionalEncoding(d)(n).numel(),
        "learned": LearnedPositionalEmbedding(64, d)(n).numel(),
        "rope": 2 * rope_angles(np.arange(n), d_head).size,  # cos and sin
        "alibi": ALiBiBias(h)(n).numel(),
        "t5": T5RelativeBias(h)(n).numel(),
        "shaw": sum(t.numel() for t in ShawRelativePosition(d_head)(n)),
        # cos and sin of the rotated quarter (partial), of every pair (p-RoPE, 2-D),
        # and xPos's scale beside them
        "partial_rope": 2 * rope_angles(np.arange(n), d_head // 4).size,
        "p_rope": 2 * rope_angles(np.arange(n), d_head).size,
        "xpos": 2 * rope_angles(np.arange(n), d_head).size + xpos_scale(np.arange(n),
                                                                          d_head).size,
        "axial_rope": 2 * axial_rope_angles(np.arange(n), np.arange(n), d_head).size,
    }
    assert set(METHODS) <= set(produced)
    for method in produced:
        cost = extra_attention_cost(method, d_model=d, num_heads=h, seq_len=n)
        assert cost["memory"] == produced[method], method


def counted_bmm_flops(position, x):
    layer = MultiHeadSelfAttention(x.shape[-1], 4, position)
    with FlopCounterMode(display=False) as counter:
        layer(x)
    counts = counter.get_flop_counts()["Global"]
    return sum(v for k, v in counts.items() if "bmm" in str(k))


@pytest.mark.parametrize("batch,seq", [(1, 7), (3, 12)])
def test_matmul_flops_match_torch_flop_counter(batch, seq):
    x = torch.randn(batch, seq, 32)
    sizes = dict(d_model=32, num_heads=4, seq_len=seq, batch=batch)
    core = attention_core_cost(**sizes)["matmul_flops"]
    # with a bias the layer takes SDPA's math path: q k^T and p v are two counted bmm's
    assert counted_bmm_flops("alibi", x) == core
    shaw_extra = extra_attention_cost("shaw", **sizes)["matmul_flops"]
    assert counted_bmm_flops("shaw", x) == core + shaw_extra
    assert shaw_extra == core  # Shaw doubles attention's own matrix products


def test_cost_scaling_and_bad_input():
    small = extra_attention_cost("alibi", d_model=64, num_heads=8, seq_len=100)
    big = extra_attention_cost("alibi", d_model=64, num_heads=8, seq_len=200)
    assert big["memory"] == 4 * small["memory"]  # quadratic in length
    rope = [extra_attention_cost("rope", d_model=64, num_heads=8, seq_len=n)["memory"]
            for n in (100, 200)]
    assert rope[1] == 2 * rope[0]  # linear in length
    with pytest.raises(ValueError, match="method"):
        extra_attention_cost("cope_xyz", d_model=64, num_heads=8, seq_len=10)
    with pytest.raises(ValueError, match="divisible"):
        extra_attention_cost("rope", d_model=60, num_heads=8, seq_len=10)
    with pytest.raises(ValueError, match="seq_len"):
        attention_core_cost(d_model=64, num_heads=8, seq_len=0)
    with pytest.raises(ValueError, match="method"):
        position_parameter_count("none")


@given(d_model=st.sampled_from([8, 64, 512]), base=st.sampled_from([100.0, 1e4, 5e5]),
       p=st.integers(0, 500))
def test_sinusoidal_similarity_is_the_cosine_of_two_encodings(d_model, base, p):
    pe = sinusoidal_encoding(p + 40, d_model, base)
    k = np.arange(40)
    direct = pe[p + k] @ pe[p] / (pe[p] @ pe[p])
    np.testing.assert_allclose(sinusoidal_similarity(k, d_model, base), direct, atol=1e-12)


@given(head_dim=st.sampled_from([4, 16, 64]), base=st.sampled_from([10.0, 1e4, 1e6]))
def test_rope_mean_score_is_trace_over_dim_and_the_sinusoidal_curve(head_dim, base):
    k = np.arange(0, 3000, 37)
    traces = np.array([np.trace(rope_rotation_matrix(r, head_dim, base)) for r in k])
    ours = rope_mean_score(k, head_dim, base)
    np.testing.assert_allclose(ours, traces / head_dim, atol=1e-12)
    # the identity the chapter teaches: same curve as sinusoidal with d = head_dim
    np.testing.assert_allclose(ours, sinusoidal_similarity(k, head_dim, base), atol=1e-12)


def test_rope_mean_score_monte_carlo():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(20000, 1, 32))  # random queries, one position each
    k = np.array([0, 1, 5, 40, 300])
    scores = [(apply_rope(q, np.zeros(1)) * apply_rope(q, np.full(1, float(r)))).sum(-1).mean()
              / (q**2).sum(-1).mean() for r in k]
    np.testing.assert_allclose(scores, rope_mean_score(k, 32), atol=0.02)


def test_alibi_weight_factor_is_the_softmax_ratio_of_the_bias():
    n, heads = 50, 8
    bias = alibi_bias(heads, n)[:, -1, :]  # last query: keys at distances n-1 .. 0
    weights = np.exp(bias) / np.exp(bias).sum(-1, keepdims=True)
    ratio = weights / weights[:, -1:]  # relative to distance 0
    distances = np.arange(n)[::-1]
    np.testing.assert_allclose(alibi_weight_factor(distances, heads), ratio, rtol=1e-10)
    factor = alibi_weight_factor(np.arange(100), 12)
    assert factor.shape == (12, 100) and np.all(np.diff(factor, axis=1) < 0)


def test_draw_distance_comparison_draws_four_panels():
    fig = plt.figure()
    draw_distance_comparison(fig, max_plot=300)
    assert len(fig.axes) == 4 and all(ax.lines for ax in fig.axes)
    plt.close(fig)


def test_method_facts_cover_every_method_and_the_table_escapes():
    assert set(METHOD_FACTS) == set(PARAMETER_SCOPE) == set(METHODS)
    assert all({"type", "where", "models", "paper"} <= set(f) for f in METHOD_FACTS.values())
    assert all(f["paper"] and f["models"] for f in METHOD_FACTS.values())
    table = html_table(["a", "b"], [[1, "<x>"], ["y", 2.5]], "a <small> table")
    assert table.count("<tr>") == 3 and "&lt;x&gt;" in table and "<td>2.5</td>" in table
    with pytest.raises(ValueError, match="row 0"):
        html_table(["a", "b"], [[1]], "t")
    with pytest.raises(ValueError, match="label"):
        html_table(["a"], [[1]], " ")
    with pytest.raises(ValueError, match="numbers_from"):
        html_table(["a"], [[1]], "t", numbers_from=2)


def test_a_wide_table_scrolls_in_a_box_the_keyboard_can_reach():
    """axe's scrollable-region-focusable: the box that scrolls takes focus and is named."""
    from html.parser import HTMLParser

    class Boxes(HTMLParser):
        def __init__(self):
            super().__init__()
            self.opened = []

        def handle_starttag(self, tag, attrs):
            self.opened.append((tag, dict(attrs)))

    parser = Boxes()
    parser.feed(html_table(["n", "x"], [["a", 1], ["b", 22]], "a <small> table", numbers_from=1))
    (tag, box), (table, _) = parser.opened[:2]
    assert tag == "div" and table == "table"
    assert box["tabindex"] == "0" and box["role"] == "region"
    assert box["aria-label"] == "a <small> table" and "overflow-x:auto" in box["style"]
    right = [a.get("style", "") for t, a in parser.opened if t == "td"]
    assert right == ["", "text-align:right"] * 2  # only the number column is right-aligned


def test_comparison_rows_read_where_each_method_acts_from_its_hooks():
    rows = {row["method"]: row for row in comparison_rows(d_model=64, num_heads=4, seq_len=32,
                                                          max_positions=32)}
    assert list(rows) == list(METHODS)
    assert {m: r["applies to"] for m, r in rows.items()} == {
        "sinusoidal": "token embeddings", "learned": "token embeddings",
        "rope": "queries and keys", "alibi": "attention scores", "t5": "attention scores",
        "shaw": "attention scores, values"}
    assert {applies_to(m) for m in ("partial_rope", "p_rope", "xpos", "axial_rope")} == {
        "queries and keys"}
    assert rows["learned"]["parameters"] == 32 * 64 and rows["rope"]["parameters"] == 0
    assert rows["alibi"]["extra memory"] == 4 * 32 * 32  # the [heads, L, L] bias
    assert applies_to("none") == "nowhere"


def test_the_alibi_paper_table_is_one_table_in_two_layouts():
    """Transcribed values (reference facts): train 512, eval 2512 row; each cell once."""
    assert ALIBI_PAPER_WIKITEXT103["rows"][2] == (512, 2512, 132.41, 31.58, 20.41, 18.41)
    assert ALIBI_PAPER_WIKITEXT103["columns"][2:] == ("sinusoidal", "rotary", "T5 bias", "ALiBi")
    for row in ALIBI_PAPER_WIKITEXT103["rows"]:
        assert tuple(PUBLISHED_WIKITEXT103[row[:2]].values()) == row[2:]


# --- the measured cost (a method registered without cost=) ----------------------------------

COST_SIZES = [dict(d_model=64, num_heads=4, seq_len=12, batch=3),
              dict(d_model=512, num_heads=8, seq_len=2048, batch=1)]
#: Methods whose hand formula counts only work the measurement sees (matrix products in the
#: hooks, applying their outputs, returned and cached tensors): every component must agree.
#: The others agree on matmul_flops; their hand formulas add work done to *build* an output
#: (KERPLE's distance transform, FIRE's hidden layer, CoPE's gates, xPos's scale), rotations
#: by angle 0 that change nothing (p-RoPE), or tables made per call and neither returned nor
#: cached (2-D RoPE's angles, Shaw's a^K and a^V).
FULLY_MEASURED = ("sinusoidal", "learned", "rope", "partial_rope", "alibi", "t5")


@pytest.mark.parametrize("sizes", COST_SIZES)
def test_hand_cost_formulas_equal_the_measured_cost(sizes):
    from posenc.compare import ALL_METHODS, measured_attention_cost

    for method in ALL_METHODS:
        hand = extra_attention_cost(method, **sizes)
        measured = measured_attention_cost(method, **sizes, max_positions=sizes["seq_len"])
        assert hand["matmul_flops"] == measured["matmul_flops"], method
        if method in FULLY_MEASURED:
            assert hand == measured, method


def test_a_method_without_a_cost_formula_is_measured_and_appears_in_the_tables():
    from posenc.nn import POSITIONS, PositionEncoding, register_position

    class ProductBias(PositionEncoding):
        """A bias that reads q (one matmul) and returns [batch, heads, q, k]."""

        def __init__(self, spec, *, scale: float = 0.5):
            super().__init__()
            self.proj = torch.nn.Linear(spec.head_dim, spec.head_dim, bias=False)
            self.scale = scale

        def score_bias(self, q, k):
            return self.scale * (self.proj(q) @ k.transpose(-1, -2))

    try:
        register_position("product_bias", ProductBias)
        describe_method("product_bias", color="#654321")
        b, h, n, d = 2, 4, 10, 32
        cost = extra_attention_cost("product_bias", d_model=d, num_heads=h, seq_len=n, batch=b)
        d_head = d // h
        # the projection (b h n d_head^2 multiply-adds) and the product (b h n^2 d_head), 2
        # FLOPs each; adding [b, h, n, n] to the scores; the bias per sequence is h n^2
        assert cost == {"matmul_flops": 2 * b * h * n * d_head * (d_head + n),
                        "elementwise_flops": b * h * n * n, "memory": h * n * n}
        assert "product_bias" in METHODS
        row = next(r for r in comparison_rows(d_model=d, num_heads=h, seq_len=n)
                   if r["method"] == "product_bias")
        assert row["extra memory"] == h * n * n and row["parameters"] == d_head**2
    finally:
        POSITIONS.pop("product_bias", None)
        forget_method("product_bias")
