"""The position methods side by side: parameters, costs, and how scores fall with distance.

Everything here is computed from the library's own definitions, never typed in:
the methods come from the registry (:data:`posenc.nn.POSITIONS`, one registration per
method), their facts and costs from the course's catalogue (:mod:`posenc.catalogue`,
which fixes their order), parameter counts from the
torch modules it builds, and the distance curves from :mod:`posenc.sinusoidal`,
:mod:`posenc.rope` and :mod:`posenc.alibi`. The figure of those curves is
:func:`posenc.course.figures.compare.draw_distance_comparison`.

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

import html
from collections.abc import Mapping

import numpy as np
import torch
from torch.utils.flop_counter import FlopCounterMode

from ._live import LiveMapping
from ._validation import check_choice, check_even_int, check_int
from .alibi import alibi_slopes
from .catalogue import MethodNames, facts
from .nn import HOOKS, POSITIONS, MultiHeadSelfAttention, PositionSpec
from .nn.positions import AttentionSpec, all_options, call_score_bias
from .sinusoidal import sinusoidal_dot_product

__all__ = [
    "ALL_METHODS",
    "METHODS",
    "PARAMETER_SCOPE",
    "METHOD_FACTS",
    "ALIBI_PAPER_WIKITEXT103",
    "ALIBI_PAPER_COLUMNS",
    "PUBLISHED_WIKITEXT103",
    "applies_to",
    "comparison_rows",
    "position_parameter_count",
    "own_options",
    "attention_core_cost",
    "extra_attention_cost",
    "measured_attention_cost",
    "sinusoidal_similarity",
    "rope_mean_score",
    "alibi_weight_factor",
    "html_table",
]


def _stage(name: str) -> int:
    """Where a method last acts in the attention pipeline (the index of its last hook)."""
    return max(HOOKS.index(h) for h in POSITIONS[name].hooks)


def _has_hooks(name: str) -> bool:
    return bool(POSITIONS[name].hooks)


#: The registered methods that put position somewhere (``"none"`` is left out), in
#: pipeline order: embeddings, then q/k, then scores, then values (a live view). A method
#: described with ``in_comparison=False`` (taught after chapter 8; the facts are
#: :mod:`posenc.catalogue`'s), or not described at all, is left out too. Within a stage, the
#: catalogue's order.
METHODS = MethodNames(lambda name: _has_hooks(name) and facts(name).in_comparison,
                      order=_stage)
#: Every registered method that puts position somewhere, compared in chapter 8 or not:
#: what the cost functions accept.
ALL_METHODS = MethodNames(_has_hooks, order=_stage)


#: How many copies of a method's parameters a full Transformer holds (a live view over
#: :data:`METHODS`).
PARAMETER_SCOPE = LiveMapping(METHODS, lambda name: facts(name).parameter_scope)

#: What each method is and who uses it (the facts the comparison table cites).
METHOD_FACTS = LiveMapping(METHODS, lambda name: {
    "type": facts(name).family, "where": facts(name).where, "models": facts(name).models,
    "paper": facts(name).paper})

_HOOK_PLACES = {"embed": "token embeddings", "rotate": "queries and keys",
                "score_bias": "attention scores", "normalise": "attention weights",
                "value_term": "values"}


def applies_to(method: str) -> str:
    """Where a registered method acts, read from the hooks its module overrides."""
    hooks = POSITIONS[check_choice("method", method, tuple(POSITIONS))].hooks
    return ", ".join(_HOOK_PLACES[h] for h in hooks) or "nowhere"


#: Published extrapolation results: validation perplexity on WikiText-103 from the
#: ALiBi paper (Press, Smith & Lewis, ICLR 2022), as transcribed in the course's
#: reference facts (a third-party transcription of the appendix tables; word-level
#: perplexity of 247M-parameter models: compare shapes, not values with ours).
#: ``(L_train, L_eval) -> {method: perplexity}``. Defined here once.
PUBLISHED_WIKITEXT103 = {
    (512, 512): {"sinusoidal": 20.05, "rope": 20.07, "t5": 19.65, "alibi": 19.73},
    (512, 1012): {"sinusoidal": 43.54, "rope": 21.37, "t5": 18.79, "alibi": 18.73},
    (512, 2512): {"sinusoidal": 132.41, "rope": 31.58, "t5": 20.41, "alibi": 18.41},
    (1024, 2024): {"sinusoidal": 51.09, "rope": 31.17, "t5": 18.34, "alibi": 18.05},
}

#: The paper's own column names for the methods in :data:`PUBLISHED_WIKITEXT103`.
ALIBI_PAPER_COLUMNS = {"sinusoidal": "sinusoidal", "rope": "rotary", "t5": "T5 bias",
                       "alibi": "ALiBi"}

#: The same numbers laid out as the paper's table: ``columns`` and ``rows``.
ALIBI_PAPER_WIKITEXT103 = {
    "columns": ("train L", "eval L", *ALIBI_PAPER_COLUMNS.values()),
    "rows": tuple((train, evaluated, *(ppl[m] for m in ALIBI_PAPER_COLUMNS))
                  for (train, evaluated), ppl in PUBLISHED_WIKITEXT103.items()),
}


def position_parameter_count(method: str, *, d_model: int = 512, num_heads: int = 8,
                             max_positions: int = 2048, shaw_max_distance: int = 16,
                             num_buckets: int = 32, max_distance: int = 128,
                             **options) -> int:
    """Learned parameters of the position part of one :class:`~posenc.nn.MultiHeadSelfAttention`.

    Builds the layer with ``position=method`` and counts the parameters of its
    ``encoding`` module (the q/k/v and output projections are not counted). How
    often a real model holds these parameters is in :data:`PARAMETER_SCOPE`. The sizes
    and ``options`` are the same for every method, so one call fits each: a method gets
    the ones it takes (:func:`own_options`).
    """
    method = check_choice("method", method, ALL_METHODS)
    options = own_options(method, dict(max_positions=max_positions,
                                       shaw_max_distance=shaw_max_distance,
                                       num_buckets=num_buckets, max_distance=max_distance,
                                       **options))
    layer = MultiHeadSelfAttention(d_model, num_heads, PositionSpec(method, **options))
    return sum(p.numel() for p in layer.encoding.parameters())


def own_options(method: str, options: Mapping) -> dict:
    """The ones of ``options`` that ``method`` takes: the comparisons give every method
    the same settings (a learned table's ``max_positions``, T5's buckets, ...), and each
    uses its own. An option that no registered method takes raises ``TypeError`` (a
    misspelling, say); a method itself refuses another method's option
    (:func:`posenc.nn.check_position_options`)."""
    known = all_options()
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"unknown option(s) {', '.join(unknown)}: no registered method takes "
                        f"them; the registered methods take {', '.join(sorted(known))}")
    takes = POSITIONS[method].options
    return {key: value for key, value in options.items() if key in takes}


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
    embeddings; the rest act in every layer. Each formula is the ``cost`` of its method's
    facts (:func:`posenc.catalogue.facts`); a method described without one gets its cost
    measured by :func:`measured_attention_cost`.
    """
    method = check_choice("method", method, ALL_METHODS)
    d_model, num_heads = check_int("d_model", d_model), check_int("num_heads", num_heads)
    seq_len, batch = check_int("seq_len", seq_len), check_int("batch", batch)
    if d_model % num_heads:
        raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
    cost = facts(method).cost
    if cost is None:
        return measured_attention_cost(method, d_model=d_model, num_heads=num_heads,
                                       seq_len=seq_len, batch=batch)
    return cost(batch, num_heads, seq_len, d_model)


def _rotated_fraction(encoding, spec: AttentionSpec) -> float:
    """The share of q's and k's features a ``rotate`` hook changes, from a tiny CPU run
    (features that keep their value at every position are not rotated: partial RoPE)."""
    gen = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, spec.num_heads, 16, spec.head_dim, generator=gen) for _ in range(2))
    with torch.no_grad():
        q2, k2 = encoding.rotate(q, k)
    changed = ((q2 != q) | (k2 != k)).any(dim=(0, 1, 2))  # [head_dim]
    return changed.double().mean().item()


def measured_attention_cost(method: str, *, d_model: int, num_heads: int, seq_len: int,
                            batch: int = 1, **options) -> dict[str, int]:
    """The extra cost of a method's hooks, measured rather than written by hand: what
    :func:`extra_attention_cost` gives a method registered without ``cost=``.

    The hooks run once on meta tensors of the real sizes (no arithmetic is done, so any
    size is free), as attention calls them:

    * ``matmul_flops``: counted by torch's ``FlopCounterMode`` inside the hooks (a
      multiply-add is 2 FLOPs);
    * ``elementwise_flops``: what attention does with the hooks' outputs, one addition
      per element of ``x`` (``embed``), of the scores ``[b, h, L, L]`` (``score_bias``)
      and of the output ``[b, h, L, d_head]`` (``value_term``), and 3 operations per
      rotated feature of q and k (``rotate``: 2 multiplies and an add, as RoPE); work a
      hook does to *build* its output, other than matrix products, is not seen (nor what a
      ``normalise`` does in place of the softmax);
    * ``memory`` (elements): the position tensors per sequence -- what ``embed`` adds
      (the table), what ``score_bias`` and ``value_term`` return (batch dimension left
      out), and the non-persistent buffers the module caches (RoPE's cos and sin).

    ``options`` build the module (``max_positions`` for a learned table longer than
    ``seq_len``, say); as in :func:`position_parameter_count` they may be given for every
    method, each taking its own (:func:`own_options`).
    """
    method = check_choice("method", method, ALL_METHODS)
    d_model, num_heads = check_int("d_model", d_model), check_int("num_heads", num_heads)
    seq_len, batch = check_int("seq_len", seq_len), check_int("batch", batch)
    if d_model % num_heads:
        raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
    registered = POSITIONS[method]
    position = PositionSpec(method, **own_options(method, options))
    spec = AttentionSpec(d_model, num_heads, causal=True)
    hooks, d_head = registered.hooks, spec.head_dim
    with torch.random.fork_rng(devices=[]):  # measuring leaves the caller's random stream
        encoding = position.build(spec)
        # on a second instance: the tiny run must not grow this one's cached tables
        fraction = (_rotated_fraction(position.build(spec), spec)
                    if "rotate" in hooks else 0.0)
    encoding = encoding.to("meta").requires_grad_(False)  # (the flop counter tracks grads)
    b, h, n = batch, num_heads, seq_len
    q, k, v = (torch.empty(b, h, n, d_head, device="meta") for _ in range(3))
    elementwise = memory = 0

    def per_sequence(t: torch.Tensor) -> int:
        return t.numel() // b if t.ndim == 4 and t.shape[0] == b else t.numel()

    x = torch.empty(b, n, d_model, device="meta")  # the layer's input
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        if "embed" in hooks:
            encoding.embed(x)
            elementwise += x.numel()
            memory += n * d_model  # the [L, d_model] table added to every sequence
        if "rotate" in hooks:
            encoding.rotate(q, k)
            elementwise += round(3 * fraction * (q.numel() + k.numel()))
        if "score_bias" in hooks:
            bias = call_score_bias(encoding, q, k, x)
            if bias is not None:
                elementwise += b * h * n * n
                memory += per_sequence(bias)
        if "normalise" in hooks:
            encoding.normalise(torch.empty(b, h, n, n, device="meta"))
        if "value_term" in hooks:
            term = encoding.value_term(torch.empty(b, h, n, n, device="meta"), v)
            if term is not None:
                elementwise += b * h * n * d_head
                memory += per_sequence(term)
    if "rotate" in hooks:
        memory += sum(buf.numel() for name, buf in encoding.named_buffers()
                      if name not in encoding.state_dict())
    return {"matmul_flops": int(counter.get_total_flops()), "elementwise_flops": int(elementwise),
            "memory": int(memory)}


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
    heads in :func:`~posenc.alibi.alibi_slopes`' order (steepest first only when
    ``num_heads`` is a power of two).
    """
    k = np.abs(np.asarray(distances, dtype=np.float64))
    slopes = alibi_slopes(num_heads)
    return np.exp(-slopes.reshape((-1,) + (1,) * k.ndim) * k)


def comparison_rows(*, d_model: int = 512, num_heads: int = 8, seq_len: int = 2048,
                    **options) -> list[dict]:
    """One row per method in :data:`METHODS`: its family, where it applies, trainable
    parameters (of one attention layer built with ``options``), extra memory at
    ``seq_len``, the models that use it and its paper -- all read from the registry."""
    rows = []
    for name in METHODS:
        method = facts(name)
        params = position_parameter_count(name, d_model=d_model, num_heads=num_heads,
                                          **options)
        cost = extra_attention_cost(name, d_model=d_model, num_heads=num_heads,
                                    seq_len=seq_len)
        rows.append({"method": name, "family": method.family, "applies to": applies_to(name),
                     "parameters": params, "parameter scope": method.parameter_scope,
                     "extra memory": cost["memory"],
                     "models": method.models, "paper": method.paper})
    return rows


def html_table(header, rows, label: str, *, numbers_from: int | None = None,
               compact: bool = False) -> str:
    """A plain HTML ``<table>`` (text escaped): renders on the static site and in Jupyter.

    ``header`` is a list of column titles; ``rows`` a list of equally long lists; ``label``
    names the table for a screen reader. Cells from column ``numbers_from`` on are
    right-aligned (numbers); ``compact`` sets a smaller type and unbroken cells.

    A table wider than the text column scrolls sideways inside its own box. That box takes
    keyboard focus (``tabindex="0"``) and is a named region, so a reader without a mouse
    can scroll it too (the rule axe calls scrollable-region-focusable, WCAG 2.1.1).
    """
    header = [str(h) for h in header]
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"label must be a non-empty string naming the table, got {label!r}")
    if numbers_from is not None and not 0 <= numbers_from <= len(header):
        raise ValueError(f"numbers_from must be a column index in [0, {len(header)}], "
                         f"got {numbers_from!r}")
    for n, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"row {n} has {len(row)} cells, the header {len(header)}")
    base = "padding:0.15em 0.45em;white-space:nowrap" if compact else ""

    def cells(values, tag):
        out = []
        for i, v in enumerate(values):
            style = base
            if tag == "td" and numbers_from is not None and i >= numbers_from:
                style = ";".join(s for s in (style, "text-align:right") if s)
            attr = f' style="{style}"' if style else ""
            out.append(f"<{tag}{attr}>{html.escape(str(v))}</{tag}>")
        return "".join(out)

    body = "".join(f"<tr>{cells(row, 'td')}</tr>" for row in rows)
    size = ' style="font-size:0.9em"' if compact else ""
    return (f'<div class="posenc-table" role="region" tabindex="0" '
            f'aria-label="{html.escape(label)}" style="overflow-x:auto;max-width:100%">'
            f"<table{size}><thead><tr>{cells(header, 'th')}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>")
