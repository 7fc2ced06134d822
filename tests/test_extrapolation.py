import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc.course.results import load_results, results_path
from posenc.data import (
    HELDOUT_FILES,
    TRAIN_FILES,
    contiguous_windows,
    load_stdlib_corpus,
    previous_occurrence_distance,
    random_windows,
    read_files,
)
from posenc.experiments.extrapolation import (
    PRESETS,
    ExtrapolationConfig,
    config_hash,
    derived_variants,
    format_summary,
    learning_rate_at,
    run_experiment,
)
from posenc.rope import rope_frequencies
from posenc.scaling import pi_frequencies

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = results_path("extrapolation_results.json")

TINY = dict(encodings=("none", "sinusoidal", "learned", "rope", "alibi", "t5"), train_length=8,
            d_model=16, num_heads=2, num_layers=1, d_ff=32,
            options={"t5": {"num_buckets": 8, "max_distance": 8, "bias_lr_scale": 10.0}},
            steps=40, batch_size=8, learning_rate=1e-2, warmup_steps=4,
            eval_tokens=512, log_every=10)
TINY_ARGS = ["--preset", "text", "--encodings", ",".join(TINY["encodings"])] + [
    arg for key, value in TINY.items() if key not in ("encodings", "options")
    for arg in ("--" + key.replace("_", "-"), str(value))] + [
    "--options", "t5:" + ",".join(f"{k}={v}" for k, v in TINY["options"]["t5"].items())]


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest.py


# --- the corpus -----------------------------------------------------------------------

def test_corpus_files_exist_and_do_not_overlap():
    corpus = load_stdlib_corpus()
    assert not set(TRAIN_FILES) & set(HELDOUT_FILES)
    assert corpus.info["train_bytes"] == len(corpus.train) > 1_000_000
    assert corpus.info["heldout_bytes"] == len(corpus.heldout) >= PRESETS["text"].eval_tokens + 1
    assert corpus.train.dtype == np.uint8
    assert len(corpus.info["train_sha256"]) == 64


def test_read_files_normalises_line_endings_and_names_missing_files(tmp_path):
    (tmp_path / "a.py").write_bytes(b"x = 1\r\ny = 2\r\n")
    (tmp_path / "b.py").write_bytes(b"z\n")
    assert read_files(["a.py", "b.py"], tmp_path) == b"x = 1\ny = 2\nz\n"
    with pytest.raises(FileNotFoundError, match="missing.py"):
        read_files(["missing.py"], tmp_path)
    with pytest.raises(ValueError, match="overlap"):
        load_stdlib_corpus(["a.py"], ["a.py"], tmp_path)


def test_contiguous_windows_predict_the_same_bytes_at_every_length():
    data = np.arange(200, dtype=np.uint8)
    short_in, short_t = contiguous_windows(data, 8, 64)
    long_in, long_t = contiguous_windows(data, 32, 64)
    assert short_in.shape == (8, 8) and long_in.shape == (2, 32)
    assert torch.equal(short_t.flatten(), long_t.flatten())
    assert torch.equal(short_t.flatten(), torch.arange(1, 65))
    assert torch.equal(long_in[:, 1:], long_t[:, :-1])  # targets are inputs shifted by one
    with pytest.raises(ValueError, match="multiple"):
        contiguous_windows(data, 24, 64)
    with pytest.raises(ValueError, match="need num_tokens"):
        contiguous_windows(data, 8, 200)


def test_random_windows_are_shifted_and_reproducible():
    data = np.arange(250, dtype=np.uint8)
    x1, y1 = random_windows(data, 5, 12, torch.Generator().manual_seed(3))
    x2, _ = random_windows(data, 5, 12, torch.Generator().manual_seed(3))
    assert torch.equal(x1, x2) and x1.shape == (5, 12)
    assert torch.equal(y1, x1 + 1)  # data is 0, 1, 2, ...


def _brute_force_previous(data, n):
    out = []
    for t in range(len(data) - n + 1):
        earlier = [s for s in range(t) if data[s:s + n] == data[t:t + n]]
        out.append(t - earlier[-1] if earlier else -1)
    return out


def test_previous_occurrence_distance_worked_example():
    assert previous_occurrence_distance(np.frombuffer(b"abcabcab", np.uint8), 3).tolist() == \
        [-1, -1, -1, 3, 3, 3]


@given(st.binary(min_size=0, max_size=40), st.integers(1, 4))
def test_previous_occurrence_distance_matches_brute_force(data, n):
    got = previous_occurrence_distance(np.frombuffer(data, np.uint8), n)
    assert got.tolist() == _brute_force_previous(data, n)


# --- configuration and pieces ------------------------------------------------------------

def test_learning_rate_schedule():
    config = ExtrapolationConfig(steps=100, warmup_steps=10, learning_rate=1.0, min_lr_ratio=0.1)
    assert learning_rate_at(0, config) == pytest.approx(0.1)
    assert learning_rate_at(9, config) == pytest.approx(1.0)
    assert learning_rate_at(10, config) == pytest.approx(1.0)
    assert learning_rate_at(55, config) == pytest.approx(0.55)  # half way down the cosine
    assert learning_rate_at(100, config) == pytest.approx(0.1)
    rates = [learning_rate_at(s, config) for s in range(10, 101)]
    assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))


def test_rope_pi_divides_every_frequency_by_the_length_ratio():
    config = PRESETS["text"]
    head_dim = config.d_model // config.num_heads
    base = config.method_options("rope")["base"]
    assert base == 10000.0  # RoPE's default, as the committed results were trained
    for mult in config.eval_multipliers:
        got = pi_frequencies(head_dim, base, config.train_length,
                             mult * config.train_length)
        np.testing.assert_allclose(got, rope_frequencies(head_dim, base) / mult,
                                   rtol=1e-15)


@pytest.mark.parametrize("bad", [
    dict(encodings=("rope", "cope_xyz")), dict(encodings=()), dict(encodings=("rope", "rope")),
    dict(eval_multipliers=(2, 4)), dict(eval_multipliers=(1, 4, 2)),
    dict(eval_tokens=1000), dict(steps=0), dict(learning_rate=0.0), dict(d_model=30),
])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        ExtrapolationConfig(**bad)


def test_config_round_trips_through_json():
    config = PRESETS["text-small"]
    again = ExtrapolationConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config and config_hash(again) == config_hash(config)
    assert config_hash(dataclasses.replace(config, seed=1)) != config_hash(config)


def test_variants_list_derived_ones_after_their_source():
    assert PRESETS["text"].variants == ("none", "sinusoidal", "learned", "learned_interp",
                                        "rope", "rope_pi", "alibi", "t5")


# --- the experiment end to end ---------------------------------------------------------------

def _strip_timings(results):
    results = json.loads(json.dumps(results))
    results.pop("runtime")
    for entry in results["variants"].values():
        entry.pop("eval_time_s")
        entry.pop("train_time_s", None)
        entry.get("history", {}).pop("load_average", None)
    return results


def test_command_line_runs_end_to_end(tmp_path):
    out = tmp_path / "results.json"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "posenc.experiments.extrapolation", *TINY_ARGS,
         "--no-progress", "--output", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "not defined" in proc.stdout  # the printed table
    results = json.loads(out.read_text())
    config = ExtrapolationConfig(**TINY)
    assert results["config"] == config.to_dict()
    assert results["config_hash"] == config_hash(config)
    assert results["eval_lengths"] == [8, 16, 32, 64]
    assert list(results["variants"]) == list(config.variants)
    for name, entry in results["variants"].items():
        assert len(entry["loss"]) == 4
        defined = [x for x in entry["loss"] if x is not None]
        assert all(0 < x < 2 * math.log(256) for x in defined), name
        expected_curve = 8 if name == "learned" else 64
        assert len(entry["per_position_loss"]) == expected_curve, name
    learned = results["variants"]["learned"]
    assert learned["loss"][1:] == [None, None, None] and "not_defined" in learned
    for derived, (source, _) in derived_variants().items():  # identical at 1x: nothing is rescaled
        assert results["variants"][derived]["loss"][0] == results["variants"][source]["loss"][0]
    for encoding in config.encodings:  # training loss falls
        history = results["variants"][encoding]["history"]
        assert history["step"][-1] == config.steps
        assert history["loss"][-1] < history["loss"][0] - 0.5, encoding
    for key in ("wall_time_s", "threads", "load_average_start", "python", "torch"):
        assert key in results["runtime"]


def test_same_config_gives_the_same_numbers():
    config = ExtrapolationConfig(**{**TINY, "encodings": ("rope", "alibi"), "steps": 15})
    first = run_experiment(config, progress=False)
    second = run_experiment(config, progress=False)
    assert _strip_timings(first) == _strip_timings(second)
    assert "RoPE + PI" in format_summary(first)


# --- the committed results ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def committed():
    if not COMMITTED.exists():
        pytest.fail(f"{COMMITTED} is missing: run the command in its 'command' field")
    return json.loads(COMMITTED.read_text())


def test_committed_results_come_from_the_current_default_config(committed):
    """If this fails, the defaults changed: rerun the full experiment (see the chapter)."""
    full = PRESETS["text"]
    # written before options were per method, migrated once: its base and t5_* fields are
    # options now
    assert ExtrapolationConfig.from_dict(committed["config"]) == full
    assert committed["config_hash"] == config_hash(full)
    assert list(committed["variants"]) == list(full.variants)
    assert committed["eval_lengths"] == list(full.eval_lengths)
    for name, entry in committed["variants"].items():
        length = full.train_length if name == "learned" else full.max_eval_length
        assert len(entry["per_position_loss"]) == length
        # the per-position curve at the longest length averages to the reported loss there
        last = [x for x in entry["loss"] if x is not None][-1]
        assert np.mean(entry["per_position_loss"]) == pytest.approx(last, abs=1e-4)


@pytest.mark.parametrize("name, changes", [
    ("t5_lr1", dict(encodings=("t5",), options={})),  # the learning-rate pitfall: T5 at 1x
    ("seed1", dict(encodings=("sinusoidal", "alibi"), seed=1)),  # the seed check
    ("shaw", dict(encodings=("shaw",))),  # an exercise's answer
    ("3seeds", dict(num_seeds=3)),  # the verdicts' seeds
])
def test_committed_side_runs_match_their_documented_commands(name, changes):
    """results/extrapolation_results_<name>.json: the full defaults with the chapter's options."""
    side = load_results(f"extrapolation_results_{name}.json")
    expected = dataclasses.replace(PRESETS["text"], **changes)
    assert ExtrapolationConfig.from_dict(side["config"]) == expected
    assert side["config_hash"] == config_hash(expected)
    assert list(side["variants"]) == list(expected.variants)


def test_the_three_seed_run_repeats_the_committed_run_as_its_seed_0(committed):
    """Same configuration, same seed 0: extrapolation_results_3seeds.json's first seed is
    extrapolation_results.json number for number (losses, training curve, T5's bias; not
    the load average, which is the machine's), its seed 1 is the seed-1 file's two models,
    and its reported loss is the seeds' mean."""
    three = load_results("extrapolation_results_3seeds.json")
    assert three["seeds"] == [0, 1, 2] and three["config"]["seed"] == committed["config"]["seed"]
    assert list(three["variants"]) == list(committed["variants"])
    for name, entry in committed["variants"].items():
        other = three["variants"][name]
        assert other["loss_by_seed"][0] == entry["loss"], name
        assert (other["label"], other.get("num_parameters")) == (entry["label"],
                                                                 entry.get("num_parameters"))
        if "history" in entry:
            assert other["history"]["step"] == entry["history"]["step"], name
            assert other["history"]["loss"] == entry["history"]["loss"], name
            assert other["final_train_loss_by_seed"][0] == entry["history"]["loss"][-1], name
        if "t5_bias" in entry:  # a several-seed file keeps seed 0's table
            assert other["t5_bias"] == entry["t5_bias"]
        for i, column in enumerate(zip(*other["loss_by_seed"], strict=True)):
            if None in column:
                assert other["loss"][i] is None, name
                continue
            assert other["loss"][i] == pytest.approx(np.mean(column), abs=5e-6), name
            assert (other["loss_min"][i], other["loss_max"][i]) == (min(column), max(column))
    side = load_results("extrapolation_results_seed1.json")  # and seed 1 its seed-1 run's two
    for name, entry in side["variants"].items():
        assert three["variants"][name]["loss_by_seed"][1] == entry["loss"], name
    # the chapter reads them as [seed, length] arrays, NaN where not defined
    from posenc.experiments.extrapolation import losses_by_seed
    learned = losses_by_seed(three, "learned")
    assert learned.shape == (3, 4) and np.isnan(learned[:, 1:]).all()
    rows = three["variants"]["learned"]["loss_by_seed"]
    assert learned[:, 0].tolist() == [row[0] for row in rows]
    assert losses_by_seed(committed, "t5").tolist() == [committed["variants"]["t5"]["loss"]]


def test_committed_results_used_this_corpus(committed):
    corpus = load_stdlib_corpus()
    assert committed["corpus"]["train_files"] == list(TRAIN_FILES)
    assert committed["corpus"]["heldout_files"] == list(HELDOUT_FILES)
    if committed["corpus"]["python_version"] != corpus.info["python_version"]:
        pytest.skip("another Python version: its standard library text may differ")
    assert committed["corpus"]["train_sha256"] == corpus.info["train_sha256"]
    assert committed["corpus"]["heldout_sha256"] == corpus.info["heldout_sha256"]
