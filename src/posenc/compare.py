"""The position methods side by side: parameters, costs, and how scores fall with distance.

Everything here is computed from the library's own definitions, never typed in:
parameter counts come from the torch modules in :mod:`posenc.nn`, costs from the
shapes those modules produce, and the distance curves from :mod:`posenc.sinusoidal`,
:mod:`posenc.rope`, :mod:`posenc.alibi` and :mod:`posenc.relative`.

The distance curves answer one question per method, each defined so that it is
a property of the *encoding alone* (a trained model's weights reshape them):

* sinusoidal -- cosine similarity of two encodings ``k`` apart, ``PE[p].PE[p+k] / |PE[p]|^2``;
* RoPE -- the score of a query with the *same* vector placed ``k`` positions away,
  averaged over random queries, relative to distance 0;
* ALiBi -- the factor ``exp(-m k)`` by which the bias alone multiplies a key's
  softmax weight, relative to an equally similar key at distance 0;
* T5 -- only the bucket is fixed; the bias each bucket gets is *learned*, so the
  honest picture is which distances share a bias.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_choice, check_even_int, check_int
from .alibi import alibi_slopes
from .figures.style import METHOD_COLORS
from .relative import t5_relative_bucket
from .sinusoidal import sinusoidal_dot_product

__all__ = [
    "METHODS",
    "PARAMETER_SCOPE",
    "ALIBI_PAPER_WIKITEXT103",
    "position_parameter_count",
    "attention_core_cost",
    "extra_attention_cost",
    "sinusoidal_similarity",
    "rope_mean_score",
    "alibi_weight_factor",
    "draw_distance_comparison",
]

#: The methods that put position somewhere (``"none"`` is left out).
METHODS = ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw")

#: How many copies of a method's parameters a full Transformer holds.
PARAMETER_SCOPE = {
    "sinusoidal": "none",
    "learned": "one table per model, at the embeddings",
    "rope": "none",
    "alibi": "none",
    "t5": "one table per stack, shared by all its layers",
    "shaw": "one pair of tables per layer, shared by its heads",
}

#: Published extrapolation results: validation perplexity on WikiText-103 from the
#: ALiBi paper (Press, Smith & Lewis, ICLR 2022), as transcribed in the course's
#: reference facts (a third-party transcription of the appendix tables).
ALIBI_PAPER_WIKITEXT103 = {
    "columns": ("train L", "eval L", "sinusoidal", "rotary", "T5 bias", "ALiBi"),
    "rows": (
        (512, 512, 20.05, 20.07, 19.65, 19.73),
        (512, 1012, 43.54, 21.37, 18.79, 18.73),
        (512, 2512, 132.41, 31.58, 20.41, 18.41),
        (1024, 2024, 51.09, 31.17, 18.34, 18.05),
    ),
}


def position_parameter_count(method: str, *, d_model: int = 512, num_heads: int = 8,
                             max_positions: int = 2048, shaw_max_distance: int = 16,
                             num_buckets: int = 32, max_distance: int = 128) -> int:
    """Learned parameters of the position part of one :class:`~posenc.nn.MultiHeadSelfAttention`.

    Builds the layer with ``position=method`` and counts the parameters of its
    ``encoding`` module (the q/k/v and output projections are not counted). How
    often a real model holds these parameters is in :data:`PARAMETER_SCOPE`.
    """
    from .nn import MultiHeadSelfAttention

    method = check_choice("method", method, METHODS)
    layer = MultiHeadSelfAttention(d_model, num_heads, method, max_positions=max_positions,
                                   shaw_max_distance=shaw_max_distance,
                                   num_buckets=num_buckets, max_distance=max_distance)
    return sum(p.numel() for p in layer.encoding.parameters())


def attention_core_cost(*, d_model: int, num_heads: int, seq_len: int,
                        batch: int = 1) -> dict[str, int]:
    """What self-attention costs *without* position, for scale.

    ``matmul_flops``: ``q k^T`` and ``p v``, ``2 * 2 * batch * seq_len^2 * d_model``
    (a multiply-add is 2 FLOPs). ``memory``: the score matrix,
    ``batch * num_heads * seq_len^2`` elements.
    """
    d_model, num_heads = check_int("d_model", d_model), check_int("num_heads", num_heads)
    seq_len, batch = check_int("seq_len", seq_len), check_int("batch", batch)
    return {"matmul_flops": 4 * batch * seq_len**2 * d_model,
            "elementwise_flops": 0,
            "memory": batch * num_heads * seq_len**2}


def extra_attention_cost(method: str, *, d_model: int, num_heads: int, seq_len: int,
                         batch: int = 1) -> dict[str, int]:
    """Extra FLOPs and memory a method spends on position in one attention forward pass.

    Counted for the course's implementations (:mod:`posenc.nn`), a multiply-add
    being 2 FLOPs, ``d_head = d_model / num_heads``:

    ============  ======================  ==========================  ======================
    method        matmul_flops            elementwise_flops           memory (elements)
    ============  ======================  ==========================  ======================
    sinusoidal    0                       ``b L d`` (add the table)   ``L d`` (the table)
    learned       0                       ``b L d``                   ``L d``
    rope          0                       ``6 b L d`` (rotate q, k)   ``L d_head`` (cos, sin)
    alibi         0                       ``b h L^2`` (add the bias)  ``h L^2`` (the bias)
    t5            0                       ``b h L^2``                 ``h L^2``
    shaw          ``4 b h L^2 d_head``    ``b h L^2 + b h L d_head``  ``2 L^2 d_head``
    ============  ======================  ==========================  ======================

    RoPE's rotation takes 4 multiplies and 2 adds per pair of features, on q and
    k. Shaw's two einsums (``q . a^K`` and ``p . a^V``) each cost as much as one
    of attention's own products, and its ``a^K``, ``a^V`` tensors are
    ``[L, L, d_head]``. The absolute tables are added once per model, at the
    embeddings; the rest act in every layer.
    """
    method = check_choice("method", method, METHODS)
    d_model, num_heads = check_int("d_model", d_model), check_int("num_heads", num_heads)
    seq_len, batch = check_int("seq_len", seq_len), check_int("batch", batch)
    if d_model % num_heads:
        raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
    b, h, n, d = batch, num_heads, seq_len, d_model
    d_head = d // h
    if method in ("sinusoidal", "learned"):
        return {"matmul_flops": 0, "elementwise_flops": b * n * d, "memory": n * d}
    if method == "rope":
        return {"matmul_flops": 0, "elementwise_flops": 6 * b * n * d, "memory": n * d_head}
    if method in ("alibi", "t5"):
        return {"matmul_flops": 0, "elementwise_flops": b * h * n * n, "memory": h * n * n}
    return {"matmul_flops": 4 * b * h * n * n * d_head,
            "elementwise_flops": b * h * n * n + b * h * n * d_head,
            "memory": 2 * n * n * d_head}


def sinusoidal_similarity(distances, d_model: int = 512, base: float = 10000.0) -> np.ndarray:
    """Cosine similarity ``PE[p].PE[p+k] / |PE[p]|^2`` of sinusoidal encodings ``k`` apart.

    Equals ``mean_i cos(k w_i)``; 1 at ``k = 0``, depends on ``k`` only (even
    ``d_model``). Shape: that of ``distances``.
    """
    d_model = check_int("d_model", d_model)
    return sinusoidal_dot_product(distances, d_model, base) / (d_model // 2)


def rope_mean_score(distances, head_dim: int = 64, base: float = 10000.0) -> np.ndarray:
    """RoPE's score of a query with itself ``k`` positions away, averaged over random queries.

    ``E_q[<R_m q, R_{m+k} q>] / E_q[|q|^2]`` for ``q`` with independent, zero-mean,
    equal-variance entries. The score is ``q^T R_k q``, whose mean is
    ``trace(R_k) / head_dim`` times ``E|q|^2``, and each 2x2 block contributes
    ``2 cos(k theta_i)``; so the result is ``mean_i cos(k theta_i)``. 1 at ``k = 0``.
    Shape: that of ``distances``.
    """
    head_dim = check_even_int("head_dim", head_dim)
    # RoPE's theta_i are the sinusoidal w_i for d_model = head_dim, so this is the
    # same sum of cosines: one definition, in sinusoidal_dot_product
    return sinusoidal_similarity(distances, head_dim, base)


def alibi_weight_factor(distances, num_heads: int = 8) -> np.ndarray:
    """``exp(-m_h |k|)``: how much ALiBi's bias alone scales a key's softmax weight.

    Relative to a key at distance 0 with the same ``q . k``; exact, since softmax
    weights are proportional to ``exp(score)``. Shape ``[num_heads, *distances.shape]``,
    head 0 (steepest slope) first.
    """
    k = np.abs(np.asarray(distances, dtype=np.float64))
    slopes = alibi_slopes(num_heads)
    return np.exp(-slopes.reshape((-1,) + (1,) * k.ndim) * k)


def draw_distance_comparison(fig, *, d_model: int = 512, head_dim: int = 64, num_heads: int = 8,
                             base: float = 10000.0, num_buckets: int = 32,
                             max_distance: int = 128, max_plot: int = 4096):
    """Four panels over every integer distance ``k = 1 .. max_plot`` (log axis; all are 1 at k=0).

    (a) sinusoidal similarity for ``d_model``; (b) RoPE's mean score for ``head_dim``;
    (c) ALiBi's weight factor for each head; (d) T5's bucket
    for a key ``k`` positions before the query (encoder and decoder), with
    ``max_distance`` marked -- each bucket's bias is learned, so it is not drawn.
    """
    k = np.arange(1, check_int("max_plot", max_plot, minimum=2) + 1)  # every integer distance
    axes = fig.subplots(2, 2, sharex=True).ravel()

    ax = axes[0]
    ax.plot(k, sinusoidal_similarity(k, d_model, base), color=METHOD_COLORS["sinusoidal"],
            lw=0.7)
    ax.set_title(f"(a) sinusoidal: PE[p]·PE[p+k] / |PE[p]|², d={d_model}", fontsize=9)

    ax = axes[1]
    ax.plot(k, rope_mean_score(k, head_dim, base), color=METHOD_COLORS["rope"], lw=0.7)
    ax.set_title(f"(b) RoPE: mean of q·(R_k q) / |q|², d_head={head_dim}", fontsize=9)
    for ax in axes[:2]:
        ax.axhline(0, color="#555555", lw=0.6)
        ax.set_ylim(-0.35, 1.05)
    axes[0].set_ylabel(f"relative to k = 0\n(base {base:g})")

    ax = axes[2]
    weights = alibi_weight_factor(k, num_heads)
    slopes = alibi_slopes(num_heads)
    shades = np.linspace(1.0, 0.35, num_heads)
    for h in range(num_heads):
        label = f"m = 1/{1 / slopes[h]:g}" if h in (0, num_heads - 1) else None
        ax.plot(k, weights[h], color=METHOD_COLORS["alibi"], alpha=float(shades[h]), lw=1.2,
                label=label)
    ax.set_title(f"(c) ALiBi: weight factor exp(-m k), {num_heads} heads", fontsize=9)
    ax.set_ylabel("relative to k = 0")
    ax.legend(fontsize=7, loc="lower left")

    ax = axes[3]
    for bidirectional, ls in ((True, "-"), (False, "--")):
        bucket = t5_relative_bucket(-k, bidirectional=bidirectional, num_buckets=num_buckets,
                                    max_distance=max_distance)
        ax.step(k, bucket, where="post", color=METHOD_COLORS["t5"], ls=ls, lw=1.4,
                label="encoder" if bidirectional else "decoder")
    ax.axvline(max_distance, color="#555555", ls=":", lw=1)
    ax.text(max_distance * 1.15, 2, f"max_distance\n= {max_distance}", fontsize=7,
            color="#555555")
    ax.set_title(f"(d) T5: bucket of a key k back, {num_buckets} buckets (bias learned)",
                 fontsize=9)
    ax.set_ylabel("bucket")
    ax.legend(fontsize=7, loc="upper left")

    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlim(1, k[-1])
    for ax in axes[2:]:
        ax.set_xlabel("distance k (log axis)")


#: What each method is and who uses it (the facts the comparison table cites).
METHOD_FACTS = {
    "sinusoidal": {"type": "absolute", "where": "fixed table added to the token embeddings",
                   "models": "the original Transformer (Vaswani et al., 2017)"},
    "learned": {"type": "absolute", "where": "learned table added to the token embeddings",
                "models": "BERT, GPT-2"},
    "rope": {"type": "relative (made from absolute rotations)",
             "where": "rotates q and k in every layer", "models": "LLaMA, GPT-NeoX, Mistral"},
    "alibi": {"type": "relative", "where": "fixed bias on the logits in every layer",
              "models": "BLOOM, MPT"},
    "t5": {"type": "relative", "where": "learned bias on the logits in every layer",
           "models": "T5"},
    "shaw": {"type": "relative", "where": "learned vectors added to k and v in every layer",
             "models": "Shaw et al. (2018), Music Transformer"},
}

__all__ += ["METHOD_FACTS", "html_table"]


def html_table(header, rows) -> str:
    """A plain HTML ``<table>`` (text escaped): renders on the static site and in Jupyter.

    ``header`` is a list of column titles; ``rows`` a list of equally long lists.
    """
    import html

    header = [str(h) for h in header]
    for n, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"row {n} has {len(row)} cells, the header {len(header)}")

    def cells(values, tag):
        return "".join(f"<{tag}>{html.escape(str(v))}</{tag}>" for v in values)

    body = "".join(f"<tr>{cells(row, 'td')}</tr>" for row in rows)
    return f"<table><thead><tr>{cells(header, 'th')}</tr></thead><tbody>{body}</tbody></table>"
