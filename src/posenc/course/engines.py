"""Chapter 16's table of how serving engines place positions, as data with its evidence.

One :class:`Engine` per row (Hugging Face transformers 5.23 under each attention backend,
vLLM, SGLang, llama.cpp), one :class:`Cell` per question of :data:`QUESTIONS`. Each cell
carries where it comes from:

* a Hugging Face cell names the tests that check it on a tiny random-weight
  ``LlamaForCausalLM`` in float64 (``tests/test_engines_hf.py``; flash-attention's through the
  functions that decide what its kernel is given, since the kernel needs a GPU);
* every other cell cites a source file of that project and the function in it (read in the
  projects' code, 2026; each moves, so the citation names the function, not a line).

:func:`engine_table` gives the rows for :func:`posenc.course.tables.show_table` (their Chinese
is in ``locale/zh.json``); :func:`evidence_lines` the citations, printed under the table.
:func:`cited_dynamic_frequencies` transcribes the two dynamic-NTK caches the table cites, so
that a test can hold them against :func:`posenc.scaling.rope_scaling_frequencies`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._validation import check_choice
from ..rope import rope_frequencies

__all__ = ["QUESTIONS", "Cell", "Engine", "ENGINES", "engine_table", "evidence_lines",
           "cited_dynamic_frequencies"]

#: The table's columns after the engine's name.
QUESTIONS = ("position ids at prefill", "position id at decode", "left padding",
             "packed documents", "dynamic NTK")


class Cell(NamedTuple):
    """One answer: ``text`` as the table shows it; ``evidence``: test names (Hugging Face)
    or ``"path: function"`` citations (the other engines)."""

    text: str
    evidence: tuple[str, ...]


class Engine(NamedTuple):
    """One row: the engine's ``name``, whether it is ``hugging_face`` (its cells are tested
    here), and its ``cells`` in the order of :data:`QUESTIONS`."""

    name: str
    hugging_face: bool
    cells: tuple[Cell, ...]


_HF_PREFILL = Cell("generate: cumsum(mask) − 1, padding at 0; a forward without ids: "
                   "0 … L − 1, padding counted",
                   ("test_hf_generate_ids_come_from_the_mask_padding_0",
                    "test_hf_plain_forward_counts_the_padding_in_the_ids"))
_HF_DECODE = Cell("the row's last id + 1", ("test_hf_decode_continues_from_the_last_id",))
_HF_PACKED = Cell("ids reset, no mask and no cache: documents kept apart; an all-ones mask "
                  "or a cache (use_cache's default) lets them read each other",
                  ("test_hf_packing_inferred_from_ids_without_mask_or_cache",
                   "test_hf_packing_trap_all_ones_mask_or_a_cache"))
_HF_DYNAMIC = Cell("one base per forward, from the largest id + 1; grown past the longest "
                   "seen, reset below L0 (so it depends on earlier calls); cached keys keep "
                   "theirs",
                   ("test_hf_dynamic_ntk_grows_with_the_largest_id_and_resets_below_l0",))

_VLLM_RUNNER = "vllm/v1/worker/gpu_model_runner.py: GPUModelRunner._prepare_inputs"
_SGLANG_BATCH = "python/sglang/srt/model_executor/forward_batch_info.py: ForwardBatch.init_new"
_LLAMA_BATCH = "src/llama-batch.cpp: llama_batch_allocr::init"
_LLAMA_MASK = "src/llama-kv-cache.cpp: llama_kv_cache::set_input_kq_mask"
_ONE_SEQUENCE = "documents in one prompt read each other; requests never do"

#: The table's rows, in its order.
ENGINES = (
    Engine("transformers 5.23, eager", True, (
        _HF_PREFILL, _HF_DECODE,
        Cell("padding keys masked; in float64, NaN (the softmax runs in float32)",
             ("test_hf_eager_float64_left_padding_gives_nan",)),
        _HF_PACKED, _HF_DYNAMIC)),
    Engine("transformers 5.23, sdpa", True, (
        _HF_PREFILL, _HF_DECODE,
        Cell("padding keys masked; each prompt exact in float64",
             ("test_hf_sdpa_left_padded_generation_equals_each_prompt_alone",)),
        _HF_PACKED, _HF_DYNAMIC)),
    Engine("transformers 5.23, FlashAttention varlen", True, (
        _HF_PREFILL, _HF_DECODE,
        Cell("rows unpadded by the mask",
             ("test_hf_flash_attention_varlen_from_the_ids_or_the_mask",)),
        Cell("one row, ids reset: documents kept apart, even with an all-ones mask",
             ("test_hf_flash_attention_varlen_from_the_ids_or_the_mask",)),
        _HF_DYNAMIC)),
    Engine("vLLM", False, (
        Cell("cached tokens + 0 … n − 1, per request", (_VLLM_RUNNER,)),
        Cell("the number of cached tokens", (_VLLM_RUNNER,)),
        Cell("none: requests are flattened into one batch of tokens", (_VLLM_RUNNER,)),
        Cell(_ONE_SEQUENCE, (_VLLM_RUNNER + " (query_start_loc)",)),
        Cell("one table up to L0·s with the base of length L0: unscaled at every length",
             ("vllm/model_executor/layers/rotary_embedding/dynamic_ntk_scaling_rope.py: "
              "DynamicNTKScalingRotaryEmbedding._compute_cos_sin_cache",)))),
    Engine("SGLang", False, (
        Cell("cached prefix length + 0 … n − 1, per request",
             (_SGLANG_BATCH + " (compute_position)",)),
        Cell("the sequence length − 1", (_SGLANG_BATCH + " (clamp_position)",)),
        Cell("none: requests are flattened into one batch of tokens", (_SGLANG_BATCH,)),
        Cell(_ONE_SEQUENCE, (_SGLANG_BATCH + " (extend_start_loc)",)),
        Cell("one table up to L0·s with the base of length L0·s: fully scaled at every length",
             ("python/sglang/srt/layers/rotary_embedding/rope_variant.py: "
              "DynamicNTKScalingRotaryEmbedding._compute_cos_sin_cache",)))),
    Engine("llama.cpp", False, (
        Cell("the caller's pos, or the sequence's largest cached position + 1",
             (_LLAMA_BATCH,)),
        Cell("the caller's pos, or the sequence's largest cached position + 1",
             (_LLAMA_BATCH,)),
        Cell("none: each prompt is its own sequence (seq_id)", (_LLAMA_MASK,)),
        Cell("one seq_id per document: the mask hides other sequences, and keys at later "
             "positions", (_LLAMA_MASK,)),
        Cell("not offered: no dynamic type among its RoPE scalings",
             ("include/llama.h: enum llama_rope_scaling_type",)))),
)


def engine_table(engines=ENGINES) -> tuple[list[str], list[list[str]], str]:
    """``(header, rows, label)`` for :func:`posenc.course.tables.show_table`."""
    header = ["engine", *QUESTIONS]
    rows = [[e.name, *(c.text for c in e.cells)] for e in engines]
    return header, rows, "how engines place positions"


def evidence_lines(engines=ENGINES) -> list[str]:
    """One line per engine and question: the tests or the source each cell rests on."""
    lines = []
    for e in engines:
        for question, cell in zip(QUESTIONS, e.cells, strict=True):
            kind = "tested by" if e.hugging_face else "read in"
            lines.append(f"{e.name} / {question}: {kind} {'; '.join(cell.evidence)}")
    return lines


def cited_dynamic_frequencies(engine: str, *, head_dim: int, factor: float, L0: int,
                              base: float = 10000.0) -> np.ndarray:
    """The frequencies of the one cos/sin table that vLLM's or SGLang's
    ``DynamicNTKScalingRotaryEmbedding._compute_cos_sin_cache`` builds (float64
    ``[head_dim // 2]``), transcribed: both set ``max_len = L0 * s`` and then

    * vLLM: ``base * (max_len / L0 - (s - 1)) ** (d / (d - 2))``: the factor is 1, the base
      unchanged;
    * SGLang: ``base * (s * max_len / L0 - (s - 1)) ** (d / (d - 2))``: Hugging Face's base
      for the length ``L0 * s``.
    """
    engine = check_choice("engine", engine, ("vllm", "sglang"))
    max_len = L0 * factor
    ratio = max_len / L0 if engine == "vllm" else factor * max_len / L0
    new_base = base * (ratio - (factor - 1)) ** (head_dim / (head_dim - 2))
    return rope_frequencies(head_dim, new_base)
