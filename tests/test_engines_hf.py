"""Chapter 16's engine table (``posenc.course.engines``): every Hugging Face cell, run on a
tiny random-weight ``LlamaForCausalLM`` (2 layers, float64, eager and sdpa) of the pinned
transformers 5.23; the cited vLLM and SGLang dynamic-NTK formulas against posenc's; and the
table itself (each cell's evidence exists, each cell has its Chinese).

Flash-attention's kernels need a GPU and the flash-attn package: its cells are tested through
the functions that decide what the kernel is given (``flash_attention_mask``,
``_is_packed_sequence``, ``prepare_fa_kwargs_from_position_ids``), not by running it."""

import batches
import numpy as np
import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.masking_utils import find_packed_sequence_indices, flash_attention_mask
from transformers.modeling_flash_attention_utils import (
    _is_packed_sequence,
    prepare_fa_kwargs_from_position_ids,
)

from posenc.course import engines
from posenc.course.i18n import leftover_english, translate
from posenc.inference import packed_position_ids, position_ids_from_mask
from posenc.scaling import rope_scaling_frequencies

BACKENDS = ["eager", "sdpa"]
LENGTHS = [5, 1, 8, 2]  # left-padded prompts
DOCS = [3, 1, 4, 2]  # packed documents
TOL = 1e-12


def tiny_llama(backend, dtype=torch.float64, **options):
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=options.pop("max_position_embeddings", 64),
                         pad_token_id=0, bos_token_id=1, eos_token_id=2,
                         attn_implementation=backend, **options)
    torch.manual_seed(0)
    return LlamaForCausalLM(config).to(dtype).eval()


def left_padded(lengths=LENGTHS, seed=10):
    return batches.left_padded(lengths, seed=seed, vocab=(3, 64))  # 0-2: pad, bos, eos


def greedy(model, tokens, mask, steps=3):
    return model.generate(tokens, attention_mask=mask, max_new_tokens=steps, do_sample=False,
                          output_logits=True, return_dict_in_generate=True)


def worst(a, b):
    return float((a - b).abs().max())


# --- position ids at prefill and decode -----------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_hf_generate_ids_come_from_the_mask_padding_0(backend):
    tokens, mask, _ = left_padded()
    model = tiny_llama(backend)
    ids = model._prepare_position_ids_for_generation(tokens, {"attention_mask": mask})
    assert ids.tolist()[1] == [0] * 8 and ids.tolist()[3] == [0] * 7 + [1]
    assert torch.equal(ids, position_ids_from_mask(mask))


@pytest.mark.parametrize("backend", BACKENDS)
def test_hf_plain_forward_counts_the_padding_in_the_ids(backend):
    """No position_ids: 0 .. L-1 from the cache position, padding counted (a uniform shift)."""
    tokens, mask, _ = left_padded()
    # float64, but eager in float32: in float64 it gives NaN with padding (below)
    model = tiny_llama(backend, torch.float64 if backend == "sdpa" else torch.float32)
    arange = torch.arange(tokens.shape[1])[None].expand_as(tokens)
    with torch.no_grad():
        plain = model(tokens, attention_mask=mask, use_cache=False).logits
        given = model(tokens, attention_mask=mask, position_ids=arange, use_cache=False).logits
    assert torch.equal(plain, given)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hf_decode_continues_from_the_last_id(backend):
    tokens, mask, _ = left_padded()
    model = tiny_llama(backend)
    ids = model._prepare_position_ids_for_generation(tokens, {"attention_mask": mask})
    nxt = model._update_model_kwargs_for_generation({}, {"position_ids": ids})["position_ids"]
    assert nxt[:, -1].tolist() == LENGTHS  # the 1-token prompt continues at 1


# --- left padding ----------------------------------------------------------------------------

def test_hf_sdpa_left_padded_generation_equals_each_prompt_alone():
    tokens, mask, prompts = left_padded()
    model = tiny_llama("sdpa")
    with torch.no_grad():
        batch = greedy(model, tokens, mask)
        for row, p in enumerate(prompts):
            alone = greedy(model, p[None], torch.ones(1, len(p), dtype=torch.long))
            assert torch.equal(batch.sequences[row, tokens.shape[1]:], alone.sequences[0, len(p):])
            steps = zip(batch.logits, alone.logits, strict=True)
            assert max(worst(b[row], a[0]) for b, a in steps) < TOL


def test_hf_eager_float64_left_padding_gives_nan():
    """eager's softmax runs in float32: float64's mask value -1.8e308 becomes -inf there, a
    padding query that sees no key gets NaN weights, and 0 * NaN carries it into every real
    token of the row at the next layer. In float32 the same batch is right."""
    tokens, mask, prompts = left_padded()
    with torch.no_grad():
        f64 = tiny_llama("eager")(tokens, attention_mask=mask, use_cache=False).logits
        model = tiny_llama("eager", torch.float32)
        f32 = model(tokens, attention_mask=mask, use_cache=False).logits
        padded = mask.sum(1) < tokens.shape[1]
        assert torch.isnan(f64[padded][mask[padded].bool()]).all()  # every real token too
        assert not torch.isnan(f64[2]).any()  # the unpadded row
        for row, p in enumerate(prompts):
            assert worst(f32[row, tokens.shape[1] - len(p):], model(p[None]).logits[0]) < 1e-5


# --- packing ---------------------------------------------------------------------------------

def packed_case(model, **kw):
    g = torch.Generator().manual_seed(3)
    docs = [torch.randint(3, 64, (1, n), generator=g) for n in DOCS]
    ids = packed_position_ids(DOCS)[None]
    with torch.no_grad():
        alone = torch.cat([model(d, use_cache=False).logits for d in docs], 1)
        packed = model(torch.cat(docs, 1), position_ids=ids, **kw).logits
    return worst(packed, alone)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hf_packing_inferred_from_ids_without_mask_or_cache(backend):
    model = tiny_llama(backend)
    assert packed_case(model, use_cache=False) < TOL
    ids = packed_position_ids(DOCS)[None]
    assert find_packed_sequence_indices(ids).tolist() == [[0, 0, 0, 1, 2, 2, 2, 2, 3, 3]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_hf_packing_trap_all_ones_mask_or_a_cache(backend):
    model = tiny_llama(backend)
    ones = torch.ones(1, sum(DOCS), dtype=torch.long)
    assert packed_case(model, attention_mask=ones, use_cache=False) > 1e-3
    assert packed_case(model) > 1e-3  # use_cache defaults to the config's True: a cache


def test_hf_flash_attention_varlen_from_the_ids_or_the_mask():
    ids = packed_position_ids(DOCS)[None]
    (cu_q, cu_k), (max_q, max_k) = prepare_fa_kwargs_from_position_ids(ids)
    assert cu_q.tolist() == cu_k.tolist() == [0, 3, 4, 8, 10] and max_q == max_k == 4
    assert bool(_is_packed_sequence(ids, batch_size=1))
    assert not _is_packed_sequence(ids.expand(2, -1), batch_size=2)  # packing: one row only
    ones = torch.ones(1, 10, dtype=torch.bool)
    # an all-ones mask is dropped, so the ids decide (unlike eager and sdpa)
    assert flash_attention_mask(1, 10, 10, attention_mask=ones) is None
    _, mask, _ = left_padded()
    padded = flash_attention_mask(4, 8, 8, attention_mask=mask.bool())
    assert torch.equal(padded, mask.bool())  # padding: rows unpadded from the mask


# --- dynamic NTK, and RoPE's angles ------------------------------------------------------------

def dynamic(seq_len, head_dim=8, L0=16, s=2.0):
    return rope_scaling_frequencies("dynamic", head_dim, factor=s,
                                    original_max_position_embeddings=L0, seq_len=seq_len)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_hf_dynamic_ntk_grows_with_the_largest_id_and_resets_below_l0(backend):
    model = tiny_llama(backend, max_position_embeddings=16,
                       rope_parameters={"rope_type": "dynamic", "factor": 2.0,
                                        "rope_theta": 10000.0})
    rotary = model.model.rotary_emb
    tokens = torch.randint(3, 64, (1, 40), generator=torch.Generator().manual_seed(4))

    def after(n):
        with torch.no_grad():
            model(tokens[:, :n], use_cache=False)
        return rotary.inv_freq.double().numpy()

    assert np.allclose(after(40), dynamic(40), rtol=1e-6)
    assert np.allclose(after(30), dynamic(40), rtol=1e-6)  # shorter, still past L0: kept
    assert np.allclose(after(10), dynamic(16), rtol=1e-6)  # below L0: reset

    def decode():  # prefill L0 tokens, then one token at a time through the cache
        with torch.no_grad():
            out = model(tokens[:, :16], use_cache=True)
            for t in range(16, 40):
                out = model(tokens[:, t:t + 1], past_key_values=out.past_key_values,
                            use_cache=True)
        return out.logits[0, -1]

    after(10)
    cached = decode()  # each key rotated once, with the base of the step that cached it
    with torch.no_grad():
        fresh = model(tokens, use_cache=False).logits[0, -1]  # every key with base(40)
    assert worst(cached, fresh) > 1e-6
    # the state decides: right after the 40-token forward, the same decode keeps base(40)
    assert worst(decode(), fresh) < TOL


@pytest.mark.parametrize("backend", BACKENDS)
def test_hf_rope_angles_are_float32_even_in_float64(backend):
    """Shifting a whole prompt changes no difference of positions, but Hugging Face forms
    the angles m * theta in float32: the float64 logits move by float32 round-off."""
    model = tiny_llama(backend)
    tokens = torch.randint(3, 64, (1, 12), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        at0 = model(tokens, use_cache=False).logits
        at40 = model(tokens, position_ids=torch.arange(40, 52)[None], use_cache=False).logits
    assert 1e-12 < worst(at0, at40) < 1e-4


# --- the engines the table cites: their dynamic NTK formulas ----------------------------------

def test_vllm_dynamic_ntk_serves_the_unscaled_frequencies():
    for s in (2.0, 4.0, 8.0):
        freqs = engines.cited_dynamic_frequencies("vllm", head_dim=8, factor=s, L0=16)
        assert np.allclose(freqs, dynamic(16, s=s), rtol=0, atol=1e-15)


def test_sglang_dynamic_ntk_serves_the_base_of_its_longest_length():
    for s in (2.0, 4.0):
        freqs = engines.cited_dynamic_frequencies("sglang", head_dim=8, factor=s, L0=16)
        assert np.allclose(freqs, dynamic(16 * s, s=s), rtol=1e-14)
        assert not np.allclose(freqs, dynamic(16, s=s))


# --- the table --------------------------------------------------------------------------------

def test_engine_table_cells_have_evidence_and_chinese():
    header, rows, label = engines.engine_table()
    assert len(rows) == len(engines.ENGINES) and all(len(r) == len(header) for r in rows)
    tests = {name for name in globals() if name.startswith("test_")}
    for engine in engines.ENGINES:
        for cell in engine.cells:
            if engine.hugging_face:  # each Hugging Face cell names a test of this file
                assert cell.evidence and set(cell.evidence) <= tests, (engine.name, cell)
            else:  # each other cell cites a source file and a function in it
                assert cell.evidence and all("/" in e and ": " in e for e in cell.evidence)
    for text in [*header, label, *(c for r in rows for c in r)]:
        zh = translate(text, "zh", record=False)
        assert zh != text or not leftover_english(text), text
        assert not leftover_english(zh), (text, zh)
