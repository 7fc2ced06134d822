"""posenc.configs against Hugging Face on real released models (issue 51).

tests/data/hf_configs/<name>.json: the position fields of one real model's Hub
``config.json`` each (none of them a bundled config), with ``_source`` (the Hub file),
``_found_in`` (a public copy at a commit, or how the values were written) and ``_expect``:

* ``"match"``: :func:`posenc.configs.read_config` equals Hugging Face layer by layer
  (:func:`hf_reference.hf_layers`): layer kind, method, frequencies (rtol 1e-12),
  attention factor, window, chunk, sinks, layout, ALiBi slopes, M-RoPE sections;
* ``"refused"``: Hugging Face's configuration class refuses the file, and so does posenc,
  with a ValueError or TypeError naming the field;
* ``"generic"``: transformers has no class for the ``model_type`` (remote code on the Hub),
  and its fields settle every layer: posenc reads it by the generic rules with a note
  saying so, equal to Hugging Face's Llama classes reading the same fields.

A ``_variant`` key marks a file edited as its model card says (a YaRN block added) or
edited to isolate one field; ``_source`` plus ``_variant`` is unique.
``python tests/hf_configs_report.py`` prints the same comparison, one line per file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from hf_reference import MODEL_TYPE_ALIASES, hf_config, hf_layers

from posenc.configs import bundled_names, load_bundled, read_config

DATA = Path(__file__).resolve().parent / "data" / "hf_configs"
FILES = sorted(DATA.glob("*.json"))
NAMES = [p.stem for p in FILES]
WRITTEN = "written from the Hub file as known; approximated: "


def load(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def hf():
    return pytest.importorskip("transformers")


def test_at_least_forty_real_configs():
    assert len(FILES) >= 40
    bundled = set(bundled_names())
    seen = set()
    for name in NAMES:
        config = load(name)
        assert name not in bundled, name
        assert re.fullmatch(r"[\w.-]+/[\w.-]+/config\.json", config["_source"]), name
        found = config["_found_in"]
        assert (re.fullmatch(r"[\w.-]+/[\w.-]+/\S+@[0-9a-f]{40}( \(.+\))?", found)
                or found.startswith(WRITTEN) and len(found) > len(WRITTEN)), name
        assert config["_expect"] in ("match", "refused", "generic"), name
        key = (config["_source"], config.get("_variant"))
        assert key not in seen, name
        seen.add(key)
        text = config.get("text_config", config)
        assert "model_type" in text, name
    assert sum(load(n)["_expect"] == "match" for n in NAMES) >= 40


def _field_of(exc: Exception) -> str:
    """The config field Hugging Face names when it refuses (its strict validator's message
    names the field; an unknown model_type is a KeyError on the type)."""
    text = str(exc)
    found = re.search(r"field '(\w+)'", text)
    if found:
        return found.group(1)
    return "model_type"


def compare(ours, reference) -> list[str]:
    """What differs between posenc's layers and Hugging Face's, one entry per kind of
    difference (the first layer it occurs on); empty when they agree."""
    problems: dict[str, str] = {}

    def note(what, i, detail):
        problems.setdefault(what, f"{what} (layer {i}: {detail})")

    if len(ours.layers) != len(reference):
        return [f"layer count: posenc {len(ours.layers)}, HF {len(reference)}"]
    for layer, ref in zip(ours.layers, reference, strict=True):
        i = layer.index
        if layer.layer_type != ref.layer_type:
            note("layer_type", i, f"posenc {layer.layer_type}, HF {ref.layer_type}")
        want_method_none = not ref.rotates and ref.alibi_slopes is None
        if want_method_none and layer.method != "none":
            note("method", i, f"posenc {layer.method}, HF applies no position encoding")
        if ref.alibi_slopes is not None and layer.method != "alibi":
            note("method", i, f"posenc {layer.method}, HF applies ALiBi")
        if ref.rotates and layer.method in ("none", "alibi"):
            note("method", i, f"posenc {layer.method}, HF rotates")
        if ref.inv_freq is None:
            if layer.frequencies is not None:
                note("frequencies", i, "posenc has frequencies, HF rotates nothing")
        elif layer.frequencies is None:
            note("frequencies", i, "posenc none, HF rotates")
        elif layer.frequencies.shape != ref.inv_freq.shape:
            note("frequencies", i, f"posenc {layer.frequencies.shape[0]} pairs, "
                                   f"HF {ref.inv_freq.shape[0]}")
        else:
            err = np.max(np.abs(layer.frequencies - ref.inv_freq) / np.abs(ref.inv_freq))
            if not err <= 1e-12:
                note("frequencies", i, f"max relative error {err:.3g}")
        if ref.rotates and not np.isclose(layer.attention_factor, ref.attention_scaling,
                                          rtol=1e-12, atol=0):
            note("attention_factor", i,
                 f"posenc {layer.attention_factor!r}, HF {ref.attention_scaling!r}")
        if layer.window != ref.window:
            note("window", i, f"posenc {layer.window}, HF {ref.window}")
        if layer.chunk != ref.chunk:
            note("chunk", i, f"posenc {layer.chunk}, HF {ref.chunk}")
        if layer.sinks != ref.sinks:
            note("sinks", i, f"posenc {layer.sinks}, HF {ref.sinks}")
        layout = getattr(layer, "layout", "<no attribute>")
        if layout != ref.layout:
            note("layout", i, f"posenc {layout}, HF {ref.layout}")
        slopes = getattr(layer, "alibi_slopes", "<no attribute>")
        if ref.alibi_slopes is None:
            if slopes is not None:
                note("alibi_slopes", i, f"posenc {slopes!r}, HF None")
        elif not isinstance(slopes, np.ndarray) or slopes.shape != ref.alibi_slopes.shape:
            note("alibi_slopes", i, f"posenc {slopes!r}, HF {ref.alibi_slopes.shape[0]} heads")
        elif not np.allclose(slopes, ref.alibi_slopes, rtol=1e-12, atol=0):
            note("alibi_slopes", i, "values differ")
        section = getattr(layer, "mrope_section", "<no attribute>")
        if (tuple(section) if isinstance(section, (list, tuple)) else section) != ref.mrope_section:
            note("mrope_section", i, f"posenc {section!r}, HF {ref.mrope_section!r}")
    return list(problems.values())


MATCH = [n for n in NAMES if load(n)["_expect"] == "match"]
REFUSED = [n for n in NAMES if load(n)["_expect"] == "refused"]
GENERIC = [n for n in NAMES if load(n)["_expect"] == "generic"]


@pytest.mark.parametrize("name", MATCH)
def test_real_config_matches_hugging_face_layer_by_layer(hf, name):
    config = load(name)
    reference = hf_layers(hf, config)
    ours = read_config(config)
    assert compare(ours, reference) == []
    for layer in ours.layers:
        if layer.frequencies is not None:
            assert layer.frequencies.dtype == np.float64


@pytest.mark.parametrize("name", REFUSED)
def test_real_config_that_hugging_face_refuses_is_refused_naming_the_field(hf, name):
    config = load(name)
    with pytest.raises(Exception) as refused:  # noqa: PT011 - whatever HF raises
        hf_config(hf, config)
    field = _field_of(refused.value)
    with pytest.raises((ValueError, TypeError), match=re.escape(field)):
        read_config(config, strict=True)


@pytest.mark.parametrize("name", GENERIC)
def test_real_config_of_an_unknown_family_is_read_generically_with_a_note(hf, name):
    config = load(name)
    assert config["model_type"] not in hf.CONFIG_MAPPING
    ours = read_config(config)
    assert ours.family == "generic" and any("not a family" in n for n in ours.notes)
    assert compare(ours, hf_layers(hf, {**config, "model_type": "llama"})) == []


def test_every_real_family_exists_in_transformers(hf):
    for name in MATCH:
        text = load(name).get("text_config", load(name))
        model_type = MODEL_TYPE_ALIASES.get(text["model_type"], text["model_type"])
        assert model_type in hf.CONFIG_MAPPING, name


def test_qwen3_yarn_block_against_max_position_embeddings():
    """Chapter 15: Qwen3-8B's card block (factor 4 over 32,768) beside its 40,960 tokens is an
    implicit factor of 1.25; transformers 5.x says so and uses the explicit 4, as posenc does
    (4.52.3 used the ratio: transformers issue #38224)."""
    import logging

    from transformers import Qwen3Config
    from transformers.utils import logging as hf_logging

    qwen = {k: v for k, v in load_bundled("qwen3-8b").items() if not k.startswith("_")}
    block = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    messages = []

    class Collect(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    handler = Collect()
    # transformers logs this warning once per process: forget earlier tests' warnings
    logging.Logger.warning_once.cache_clear()
    hf_logging.get_logger("transformers").addHandler(handler)
    try:
        config = Qwen3Config(**{**qwen, "rope_scaling": block})
        raised = Qwen3Config(**{**qwen, "rope_scaling": block, "max_position_embeddings": 131072})
    finally:
        hf_logging.get_logger("transformers").removeHandler(handler)
    assert config.max_position_embeddings == 40960 and config.rope_parameters["factor"] == 4.0
    assert raised.rope_parameters["factor"] == 4.0
    implicit = [m for m in messages if "implicit factor" in m]
    assert len(implicit) == 1 and "= 1.25" in implicit[0]
    assert "Using the explicit factor (4.0)" in implicit[0]
    layer = read_config({**qwen, "rope_scaling": block}).layers[0]
    assert np.isclose(layer.attention_factor, 0.1 * np.log(4) + 1)
