"""The results file's schema: the committed results load through the migration and
reproduce their numbers (issue 33's done-criterion), and the typed records read what the
JSON holds.

``tests/data/results_v1/*.json.gz`` are the committed files exactly as they were before
their one-time migration to schema 2 (schema 1: no ``"schema"`` key, T5's settings and
``base`` as config fields, a hash over that old layout), the independent reference here.
"""

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc.course.results import RESULTS_DIR, load_results
from posenc.experiments.extrapolation import (
    MIGRATIONS,
    PRESETS,
    SCHEMA,
    ExtrapolationConfig,
    Numbers,
    Results,
    VariantKey,
    config_hash,
    migrate,
    read_results,
    schema_of,
)

BEFORE = Path(__file__).parent / "data" / "results_v1"
#: The committed files written before the schema had a version (take four's full.json came
#: later, at version 3): each has its pre-migration copy in BEFORE.
NAMES = sorted(p.name[:-len(".gz")] for p in BEFORE.glob("*.json.gz"))
#: Version 1's config fields that became options (T5's) or went (``base``).
V1_FIELDS = {"base", "t5_num_buckets", "t5_max_distance", "t5_bias_lr_scale"}


def before(name: str) -> dict:
    return json.loads(gzip.decompress((BEFORE / f"{name}.gz").read_bytes()))


def leaves(value, path=()):
    """Every (path, number) leaf of a JSON value; ``None`` counts (not defined)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, (*path, i))
    elif value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        yield path, value


def test_every_committed_file_has_its_pre_migration_copy_or_is_current():
    committed = sorted(p.name for p in Path(RESULTS_DIR).glob("*.json"))
    assert NAMES and set(NAMES) <= set(committed)
    assert all(schema_of(before(name)) == 1 and "schema" not in before(name) for name in NAMES)
    for name in set(committed) - set(NAMES):  # written since: at the current version
        assert json.loads((RESULTS_DIR / name).read_text())["schema"] == SCHEMA, name


@pytest.mark.parametrize("name", NAMES)
def test_the_committed_results_load_through_the_migration_and_reproduce_their_numbers(name):
    old, committed = before(name), json.loads((RESULTS_DIR / name).read_text())
    migrated = migrate(old)
    assert migrated == committed  # the committed file is the migration's output, once
    assert list(committed) == ["schema", *old]  # same fields, in the same order
    # every number outside the config is the one written before, at the same place
    outside = {k: v for k, v in old.items() if k != "config"}
    assert list(leaves(outside)) == list(leaves({k: committed[k] for k in outside}))
    # and the config's: each kept field as it was; T5's old fields are T5's options now,
    # left out where they were its defaults (num_buckets 32, max_distance 128, lr scale 1)
    config = committed["config"]
    for key, value in old["config"].items():
        if key not in V1_FIELDS:
            assert config[key] == value, key
    t5 = {k[3:]: v for k, v in old["config"].items() if k.startswith("t5_")}
    defaults = {"num_buckets": 32, "max_distance": 128, "bias_lr_scale": 1.0}
    expected = {k: v for k, v in t5.items() if v != defaults[k]}
    if t5:
        assert config.get("options", {}).get("t5", {}) == expected
        assert old["config"]["base"] == 10000.0 and "base" not in config
    # its hash is the config's as written now, and a config read from it hashes to it
    assert committed["config_hash"] == config_hash(ExtrapolationConfig.from_dict(config))
    # loading a migrated or an unmigrated file gives the same records
    assert load_results(name).to_dict() == Results.from_dict(old).to_dict() == committed


@pytest.mark.parametrize("name", NAMES)
def test_the_migration_leaves_a_current_file_and_its_input_alone(name):
    old = before(name)
    copy = json.loads(json.dumps(old))
    committed = migrate(old)
    assert old == copy  # the input is not changed in place
    assert migrate(committed) == committed and migrate(committed) is not committed
    assert migrate(Results.from_dict(committed)) == committed  # a record migrates as its JSON


def test_every_version_below_the_current_one_has_its_step():
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA))


def test_the_committed_files_hash_as_their_presets():
    """A hash compares configurations still: the presets' files carry their preset's hash
    and another preset's hash differs."""
    for preset, name in (("take3-main", "take3_main"), ("take3", "take3_full"),
                         ("full", "full"), ("small", "small")):
        assert load_results(f"{name}.json").config_hash == config_hash(PRESETS[preset])
    assert load_results("extrapolation_results.json").config_hash == config_hash(PRESETS["text"])
    assert len({config_hash(config) for config in PRESETS.values()}) == len(PRESETS)


@pytest.mark.parametrize("schema, error, match", [
    (SCHEMA + 1, ValueError, f"schema must be from 1 to {SCHEMA}.*written by a newer posenc"),
    (0, ValueError, "schema must be from 1"),
    ("2", TypeError, "schema must be an int"),
    (True, TypeError, "schema must be an int"),
])
def test_a_schema_this_code_cannot_read_is_refused(schema, error, match):
    data = {**before("small.json"), "schema": schema}
    with pytest.raises(error, match=match):
        migrate(data)
    with pytest.raises(error, match=match):
        Results.from_dict(data)


def test_a_config_of_the_old_layout_is_refused_outside_the_migration():
    with pytest.raises(TypeError, match="t5_bias_lr_scale.*migrate"):
        ExtrapolationConfig.from_dict(before("extrapolation_results.json")["config"])
    with pytest.raises(TypeError, match="results dict"):
        migrate([1, 2])


def test_read_results_refuses_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="no results file"):
        read_results(tmp_path / "missing.json")


# --- the typed records ----------------------------------------------------------------------

def test_the_records_read_as_their_json_and_as_values():
    full = load_results("full.json")
    raw = json.loads((RESULTS_DIR / "full.json").read_text())
    assert isinstance(full, Results) and full.schema == SCHEMA
    assert full.config == PRESETS["full"] and full.eval_lengths == tuple(raw["eval_lengths"])
    assert full["runtime"] == raw["runtime"] and full.train_length == raw["train_length"]
    assert list(full["variants"]) == list(raw["variants"])
    for name, record in full["variants"].items():
        entry = raw["variants"][name]
        assert dict(record) == entry and record["loss"] == entry["loss"]
        assert record.key == VariantKey.parse(name) and record.key.name == name
        assert (record.label, record.trained_encoding) == (entry["label"],
                                                           entry["trained_encoding"])
    assert full["variants"]["rope_ft_yarn"].key == VariantKey.finetuned("rope", "yarn")
    assert full["variants"]["gemma3_layers"].key.kind == "pattern"


def test_numbers_over_seeds_are_the_mean_and_range_of_each_seeds_row():
    """Checked against the rows themselves: the mean of the three seeds (rounded to 5
    digits when written), their min and max."""
    full = load_results("full.json")
    for name, record in full["variants"].items():
        for numbers in (record.loss, record.accuracy("content"), record.accuracy("positional")):
            assert len(numbers.by_seed) == 3, name
            for i, column in enumerate(zip(*numbers.by_seed, strict=True)):
                if None in column:
                    assert numbers.mean[i] is None
                    continue
                assert numbers.mean[i] == pytest.approx(np.mean(column), abs=5e-6), name
                assert (numbers.low[i], numbers.high[i]) == (min(column), max(column))


def test_numbers_of_one_seed_have_no_range_and_missing_numbers_are_named():
    main = load_results("take3_main.json")
    rope = main["variants"]["rope"]
    assert rope.loss.low == rope.loss.mean == rope.loss.high
    assert rope.loss.by_seed == (rope.loss.mean,)
    mean, low, high = main["variants"]["learned"].loss.arrays()
    assert not math.isnan(mean[0]) and np.isnan(mean[1:]).all() and np.isnan(high[1:]).all()
    text = load_results("extrapolation_results.json")
    with pytest.raises(KeyError, match="no 'retrieval_accuracy'.*'loss'"):
        text["variants"]["rope"].accuracy("content")


@given(st.lists(st.lists(st.one_of(st.none(), st.floats(0, 10)), min_size=4, max_size=4),
                min_size=1, max_size=4))
def test_numbers_read_each_field_of_an_entry(rows):
    mean = rows[0]
    entry = {"loss": mean, "loss_min": rows[-1], "loss_max": rows[0], "loss_by_seed": rows}
    numbers = Numbers.of(entry, "loss")
    assert numbers == Numbers(tuple(mean), tuple(rows[-1]), tuple(rows[0]),
                              tuple(map(tuple, rows)))
    arrays = numbers.arrays()
    assert all(a.dtype == np.float64 and a.shape == (4,) for a in arrays)
    assert [np.isnan(x) for x in arrays[0]] == [v is None for v in mean]


def test_a_new_config_field_is_one_migration_step(monkeypatch):
    """How a later field (label smoothing, say) lands: SCHEMA + 1 and one step filling
    it with the value older runs used; every older file then reads with it, its numbers
    unchanged and its hash taken over the config with the field."""
    from posenc.experiments.extrapolation import config as config_module
    from posenc.experiments.extrapolation import results as results_module

    def add_label_smoothing(data):
        return {**data, "config": {**data["config"], "label_smoothing": 0.0}}

    monkeypatch.setattr(results_module, "SCHEMA", SCHEMA + 1)
    monkeypatch.setitem(MIGRATIONS, SCHEMA, add_label_smoothing)
    for name in ("extrapolation_results.json", "take3_main.json"):
        old, now = before(name), json.loads((RESULTS_DIR / name).read_text())
        for data in (old, now):  # from version 1 (two steps) and from the current one
            upgraded = migrate(data)
            assert upgraded["schema"] == SCHEMA + 1
            assert upgraded["config"] == {**now["config"], "label_smoothing": 0.0}
            assert upgraded["variants"] == now["variants"]
            assert upgraded["config_hash"] == config_module.hash_config_dict(
                upgraded["config"]) != now["config_hash"]


def test_the_readme_names_the_schema_the_code_writes():
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"committed experiment results (JSON, schema {SCHEMA})" in readme
