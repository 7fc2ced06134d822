"""Train short, test long, take two (chapter 13): every registered method through the
command line with the retrieval task, seeds, NoPE layers and RoPE fine-tuning; the
presets; and the committed results against their configurations."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import torch

from posenc.course.results import load_results
from posenc.data import load_stdlib_corpus
from posenc.experiments.extrapolation import (
    ALL_ENCODINGS,
    FINETUNE_SCALINGS,
    NOT_FOR_TEXT,
    PRESETS,
    SCHEMA,
    ExtrapolationConfig,
    VariantKey,
    config_hash,
    finetune_rope,
    run_experiment,
    scaled_rope_frequencies,
    task_key,
    train_model,
)
from posenc.layer_patterns import PATTERNS
from posenc.nn import POSITIONS
from posenc.scaling import rope_scaling_frequencies, yarn_attention_factor

#: Every method and layer pattern at a size that runs in seconds: 2 seeds, both retrieval
#: tasks, NoPE layers, fine-tuning.
TINY = ["--encodings", ",".join(ALL_ENCODINGS), "--nope-encodings", "rope",
        "--patterns", ",".join(PATTERNS), "--retrieval-tasks", "content,positional",
        "--retrieval-batch-sizes", "4,8",
        "--nope-every", "2", "--train-length", "16", "--d-model", "16", "--num-heads", "2",
        "--num-layers", "2", "--d-ff", "32", "--options", "t5:num_buckets=8,max_distance=16",
        "--steps", "40",
        "--batch-size", "8", "--retrieval-batch-size", "8", "--retrieval-pairs", "2",
        "--retrieval-queries", "2", "--retrieval-distances", "2",
        "--retrieval-per-distance", "4", "--eval-tokens", "1024", "--eval-batch-size", "8",
        "--learning-rate", "1e-2", "--warmup-steps", "5", "--log-every", "10",
        "--num-seeds", "2", "--finetune-scalings", ",".join(FINETUNE_SCALINGS),
        "--finetune-steps", "4", "--finetune-multiplier", "2", "--grid-distances", "4,8",
        "--check-every", "20"]


def test_every_registered_method_is_in_the_long_presets_or_excluded_with_a_reason():
    for name in POSITIONS:
        assert (name in ALL_ENCODINGS) != (name in NOT_FOR_TEXT), name
    assert PRESETS["main"].encodings == PRESETS["full"].encodings == ALL_ENCODINGS
    assert "rope_nope" in PRESETS["main"].variants
    assert [v for v in PRESETS["full"].variants if v.startswith("rope_ft_")] == [
        f"rope_ft_{s}" for s in FINETUNE_SCALINGS]


def test_presets_share_one_learning_rate_for_every_method():
    for name in ("main", "full", "small"):
        config = PRESETS[name]
        assert config.method_options("t5")["bias_lr_scale"] == 1.0 and config.retrieval, name
    assert PRESETS["full"].num_seeds == 3 and PRESETS["main"].num_seeds == 1
    assert PRESETS["full"].finetune_steps / PRESETS["full"].steps <= 0.1  # a short fine-tune


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("long") / "results.json"
    proc = subprocess.run([sys.executable, "-m", "posenc.experiments.extrapolation", *TINY,
                           "--jobs", "2", "--no-progress", "--output", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text()), proc.stdout


def test_the_command_line_runs_every_method_end_to_end(tiny):
    results, stdout = tiny
    assert "content retrieval accuracy" in stdout and "loss (nats/byte)" in stdout
    assert "positional retrieval accuracy" in stdout
    config = ExtrapolationConfig.from_dict(results["config"])
    assert results["config_hash"] == config_hash(config)
    assert list(results["variants"]) == list(config.variants)
    assert results["seeds"] == [0, 1] and results["runtime"]["jobs"] == 2
    assert results["schema"] == SCHEMA  # a file written now needs no migration
    assert [v for v in results["variants"] if v.endswith("_layers")] == [
        f"{p}_layers" for p in PATTERNS]
    for name, entry in results["variants"].items():
        for key in ("loss", "retrieval_accuracy", "positional_accuracy"):
            values, low, high = entry[key], entry[f"{key}_min"], entry[f"{key}_max"]
            assert len(values) == 4 and len(entry[f"{key}_by_seed"]) == 2, name
            for v, lo, hi, *seeds in zip(values, low, high, *entry[f"{key}_by_seed"],
                                         strict=True):
                if v is None:
                    assert name == "learned"
                    continue
                assert lo <= v + 1e-9 and v <= hi + 1e-9 and v == pytest.approx(np.mean(seeds),
                                                                                abs=1e-5)
                if key == "loss":
                    assert 0 < v < 2 * math.log(256), name
                else:
                    assert 0 <= v <= 1, name
        assert len(entry["retrieval_distances"]) == len(entry["positional_distances"]) == 4
        if "history" in entry:  # a trained model (or a fine-tune)
            history = entry["history"]
            assert len(entry["final_train_loss_by_seed"]) == 2
            if name.startswith("rope_ft_"):  # 4 steps: one logged mean, at step 4
                assert history["step"] == [4], name
                continue
            assert history["step"][-1] == 40
            assert history["loss"][-1] < history["loss"][0], name  # the loss falls
            assert history["retrieval_loss"][-1] < history["retrieval_loss"][0], name
            assert history["positional_loss"][-1] < history["positional_loss"][0], name
    assert results["variants"]["learned"]["loss"][1:] == [None] * 3
    # FIRE's learned threshold L and c, one per layer (the first seed's)
    fire = results["variants"]["fire"]
    assert len(fire["fire_threshold"]) == len(fire["fire_c"]) == 2
    assert all(t > 0 for t in fire["fire_threshold"])


def test_jobs_do_not_change_the_numbers():
    config = ExtrapolationConfig(encodings=("rope", "alibi"), train_length=16, d_model=16,
                                 num_heads=2, num_layers=1, d_ff=32, steps=6, batch_size=4,
                                 eval_tokens=512, eval_batch_size=8, log_every=3,
                                 retrieval_batch_size=4, retrieval_pairs=2, retrieval_queries=2,
                                 retrieval_distances=2, retrieval_per_distance=2)
    one = run_experiment(config, progress=False)
    two = run_experiment(config, progress=False, jobs=2)
    for name in config.variants:
        for key in ("loss", "retrieval_accuracy", "per_position_loss"):
            assert one["variants"][name][key] == two["variants"][name][key], (name, key)


@pytest.mark.parametrize("scaling", FINETUNE_SCALINGS)
def test_finetuning_uses_the_scalings_frequencies_and_trains(scaling):
    config = ExtrapolationConfig(encodings=("rope",), train_length=16, d_model=16, num_heads=2,
                                 num_layers=1, d_ff=32, steps=4, batch_size=4, log_every=2,
                                 finetune_scalings=(scaling,), finetune_steps=3,
                                 finetune_multiplier=4)
    corpus = load_stdlib_corpus()
    model, _ = train_model(config, "rope", corpus.train, progress=False)
    before = [p.detach().clone() for p in model.parameters()]
    tuned, history = finetune_rope(model, config, scaling, corpus.train, progress=False)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert any(not torch.equal(a, b) for a, b in zip(before, tuned.parameters(), strict=True))
    rotary = tuned.rotary_embeddings()[0]
    if scaling == "none":
        expected, factor = rope_scaling_frequencies("default", 8)
    else:
        expected, factor = rope_scaling_frequencies(scaling, 8, factor=4.0,
                                                    original_max_position_embeddings=16)
    np.testing.assert_array_equal(rotary.frequencies, expected)
    assert rotary.attention_factor == factor
    if scaling == "yarn":
        assert factor == pytest.approx(yarn_attention_factor(4.0)) and factor > 1.0
    assert scaled_rope_frequencies(config, scaling, 4, "rope")[1] == factor
    assert history["step"][-1] == 3


def test_yarn_attention_factor_scales_the_scores_by_its_square():
    from posenc.nn import RotaryEmbedding
    rotary = RotaryEmbedding(8)
    q, k = torch.randn(1, 1, 5, 8, dtype=torch.float64), torch.randn(1, 1, 5, 8,
                                                                     dtype=torch.float64)
    plain = torch.einsum("...qd,...kd->...qk", *rotary.rotate(q, k))
    rotary.attention_factor = 1.3
    scaled = torch.einsum("...qd,...kd->...qk", *rotary.rotate(q, k))
    torch.testing.assert_close(scaled, plain * 1.3 ** 2)


def test_config_names_bad_long_context_options():
    with pytest.raises(ValueError, match="nope_encodings"):
        ExtrapolationConfig(encodings=("alibi",), nope_encodings=("rope",))
    with pytest.raises(ValueError, match="finetune_scalings"):
        ExtrapolationConfig(encodings=("alibi",), finetune_scalings=("yarn",))
    with pytest.raises(ValueError, match="finetune_scalings"):
        ExtrapolationConfig(encodings=("rope",), finetune_scalings=("stretch",))
    with pytest.raises(ValueError, match="finetune_multiplier"):
        ExtrapolationConfig(encodings=("rope",), finetune_scalings=("yarn",), batch_size=6)
    with pytest.raises(ValueError, match="retrieval_batch_size"):
        ExtrapolationConfig(retrieval_batch_size=-1)
    with pytest.raises(ValueError, match="num_seeds"):
        ExtrapolationConfig(num_seeds=0)
    with pytest.raises(ValueError, match="retrieval_tasks must be one of 'content', 'positional'"):
        ExtrapolationConfig(retrieval_tasks=("order",))
    with pytest.raises(ValueError, match="retrieval_tasks must be a non-empty list"):
        ExtrapolationConfig(retrieval_tasks=("content", "content"))
    with pytest.raises(ValueError, match="one size per task"):
        ExtrapolationConfig(retrieval_tasks=("content", "positional"), retrieval_batch_sizes=(8,))
    with pytest.raises(ValueError, match="patterns: pattern must be one of 'gemma3'"):
        ExtrapolationConfig(patterns=("gemma4",))
    with pytest.raises(ValueError, match="patterns must not repeat"):
        ExtrapolationConfig(patterns=("gpt_oss", "gpt_oss"))
    with pytest.raises(ValueError, match="retrieval_batch_sizes"):
        ExtrapolationConfig(encodings=("rope",), finetune_scalings=("yarn",),
                            retrieval_tasks=("content", "positional"),
                            retrieval_batch_sizes=(8, 6))


def test_a_pattern_trains_a_model_of_the_methods_size_with_its_layers():
    """A pattern's model has the same size as a method's (windows and chunks sized for
    L_train) and its blocks follow the pattern; Gemma 3's 5 : 1 keeps its global layer on
    top of a 4-layer model."""
    config = PRESETS["main"]
    for pattern in config.patterns:
        model_config = config.pattern_config(pattern)
        assert (model_config.d_model, model_config.num_layers, model_config.pattern,
                model_config.pattern_length) == (config.d_model, config.num_layers, pattern,
                                                 config.train_length)
    specs = config.pattern_config("gemma3").layer_specs()
    assert [s.reach for s in specs] == ["window"] * 3 + ["full"]
    assert dict(specs[-1].options)["base"] == 1e6 and specs[0].size == config.train_length // 4
    small = config.replace(train_length=16, d_model=16, num_heads=2, num_layers=2, d_ff=32,
                           steps=2, batch_size=2, retrieval_batch_size=2,
                           retrieval_batch_sizes=(2, 2), retrieval_pairs=1,
                           retrieval_queries=1, options={}, grid_distances=(4,))
    corpus = load_stdlib_corpus()
    model, history = train_model(small, "llama4", corpus.train, progress=False,
                                 pattern=True, heldout=corpus.heldout)
    assert model.config.pattern == "llama4" and len(history["positional_loss"]) == 1


# --- the committed results ---------------------------------------------------------------------

@pytest.mark.parametrize("preset, name", [("take3-main", "take3_main"), ("take3", "take3_full"),
                                          ("full", "full"), ("small", "small"),
                                          ("rebinding", "rebinding")])
def test_committed_results_match_their_presets(preset, name):
    """If this fails, a preset changed: rerun it with the command in --help."""
    results = load_results(f"{name}.json")
    config = PRESETS[preset]
    assert ExtrapolationConfig.from_dict(results["config"]) == config  # migrated layout
    assert results["config_hash"] == config_hash(config)
    assert list(results["variants"]) == list(config.variants)
    assert results["eval_lengths"] == list(config.eval_lengths)
    for name, entry in results["variants"].items():
        for task in config.retrieval_tasks:
            key, curve = task_key(task, "accuracy"), task_key(task, "by_distance")
            accuracy = [a for a in entry[key] if a is not None]
            assert accuracy and all(0 <= a <= 1 for a in accuracy), name
            for by_distance, acc in zip(entry[curve], entry[key], strict=True):
                if acc is not None:  # the mean over distances is the accuracy at that length
                    assert np.mean(by_distance) == pytest.approx(acc, abs=1e-3), name
        if config.num_seeds > 1:
            assert len(entry["loss_by_seed"]) == config.num_seeds
            means = np.mean([[np.nan if x is None else x for x in row]
                             for row in entry["loss_by_seed"]], axis=0)
            for mean, reported in zip(means, entry["loss"], strict=True):
                if reported is not None:
                    assert mean == pytest.approx(reported, abs=1e-4), name


def test_take_three_repeats_its_one_seed_run_as_its_first_seed():
    """Same configuration, same seed 0: take three's full set's first seed is its main run."""
    main, full = load_results("take3_main.json"), load_results("take3_full.json")
    for name, entry in main["variants"].items():
        assert full["variants"][name]["loss_by_seed"][0] == entry["loss"], name
        for key in ("retrieval_accuracy", "positional_accuracy"):
            assert full["variants"][name][f"{key}_by_seed"][0] == entry[key], name


def test_take_four_changes_take_threes_protocol_only_where_the_chapter_says():
    """Chapter 13: the same model, data and mix; a constant rate, a stop at 95 % held-out
    (cap 2,000 steps), 64 sequences per distance, the grid, and the methods and patterns
    registered since. Nothing else."""
    before, now = PRESETS["take3"].to_dict(), PRESETS["full"].to_dict()
    changed = {k for k in before if before[k] != now[k]}
    assert changed == {"encodings", "patterns", "schedule", "steps", "stop_accuracy",
                       "check_every", "retrieval_per_distance", "grid_distances"}
    assert now["encodings"][:len(before["encodings"])] == before["encodings"]
    assert now["patterns"][:len(before["patterns"])] == before["patterns"]
    assert (now["schedule"], now["steps"], now["stop_accuracy"]) == ("constant", 2000, 0.95)


def test_choosing_methods_on_the_command_line_keeps_the_presets_extras_consistent():
    from posenc.experiments.extrapolation.cli import config_from_command_line
    assert config_from_command_line([]) == PRESETS["main"]
    alibi = config_from_command_line(["--preset", "full", "--encodings", "alibi"])
    assert alibi.nope_encodings == () and alibi.finetune_scalings == ()
    rope = config_from_command_line(["--preset", "full", "--encodings", "rope,alibi"])
    assert rope.nope_encodings == ("rope",) and rope.finetune_scalings == FINETUNE_SCALINGS
    with pytest.raises(ValueError, match="nope_encodings"):
        config_from_command_line(["--encodings", "alibi", "--nope-encodings", "rope"])


def test_variant_names_round_trip_through_their_one_parser():
    nope, tuned, gemma = (VariantKey("nope", "alibi"), VariantKey.finetuned("rope", "yarn"),
                          VariantKey("pattern", "gemma3"))
    assert (nope.name, tuned.name, gemma.name) == ("alibi_nope", "rope_ft_yarn", "gemma3_layers")
    assert VariantKey.parse(nope.name) == nope == VariantKey("nope", "alibi")
    assert VariantKey.parse(tuned.name) == tuned == VariantKey("finetuned", "rope", "yarn")
    assert VariantKey.parse("rope_pi") == VariantKey("derived", "rope", "rope_pi")
    assert VariantKey.parse("t5") == VariantKey("trained", "t5")
    assert VariantKey.parse(gemma.name) == gemma == VariantKey("pattern", "gemma3")
    assert VariantKey.parse("gemma3") == VariantKey("trained", "gemma3")  # not a pattern's model
    assert [v.source for v in PRESETS["full"].variant_keys if v.name.startswith("rope")] == [
        "rope"] * 7  # rope, rope_pi, rope_nope and the four fine-tunes
    for config in PRESETS.values():  # every name a preset writes reads back as its key
        assert [VariantKey.parse(key.name) for key in config.variant_keys] == list(
            config.variant_keys)


@pytest.mark.parametrize("bad", [dict(kind="stretched", method="rope"),
                                 dict(kind="finetuned", method="rope", detail="pi"),
                                 dict(kind="derived", method="rope"),
                                 dict(kind="nope", method="rope", detail="x")])
def test_a_variant_key_refuses_what_no_results_file_can_name(bad):
    with pytest.raises(ValueError, match="kind|scaling|detail"):
        VariantKey(**bad)


def test_the_large_preset_scales_main_up_and_runs_at_a_tiny_size():
    """``large`` is main scaled up (no GPU was lent, so it has no committed results): the
    same methods, patterns and tasks, a longer L_train with the methods' options following
    it, Gemma 3's whole cycle in its layers; and its code path runs end to end when shrunk."""
    main, large = PRESETS["main"], PRESETS["large"]
    assert (large.encodings, large.patterns, large.retrieval_tasks) == (
        main.encodings, main.patterns, main.retrieval_tasks)
    assert large.train_length == 256 and large.d_model >= 256 and large.num_layers >= 6
    assert large.method_options("t5")["max_distance"] == large.train_length
    assert large.method_options("fire")["fire_init_L"] == large.train_length
    gemma = large.pattern_config("gemma3").layer_specs()
    assert [s.reach for s in gemma] == ["window"] * 5 + ["full"]
    tiny = large.replace(encodings=("rope", "fire"), nope_encodings=("rope",),
                         patterns=("gemma3",), train_length=16, d_model=16, num_heads=2,
                         d_ff=32, options={"fire": {"fire_init_L": 16.0}}, steps=2,
                         batch_size=2, retrieval_batch_size=2, retrieval_batch_sizes=(2, 2),
                         retrieval_pairs=1, retrieval_queries=1, retrieval_distances=2,
                         retrieval_per_distance=2, eval_tokens=512, eval_batch_size=4,
                         warmup_steps=1, grid_distances=(4,), check_every=1,
                         check_sequences=4)
    results = run_experiment(tiny, progress=False)
    assert list(results["variants"]) == list(tiny.variants)
    assert all(len(e["positional_accuracy"]) == 4 for e in results["variants"].values())
