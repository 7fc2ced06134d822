"""Chapter 13's take-four figures and tables (posenc.course.figures.take_four), on the committed
results and on a hand-made file whose answers are known."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from posenc.course.figures import take_four as t4  # noqa: E402
from posenc.course.results import load_results  # noqa: E402

RESULTS = load_results("full.json")
MODELS = [v for v, e in RESULTS["variants"].items() if "history" in e
          and e.key.kind != "finetuned"]


def _made():
    """Two models, three seeds, two lengths: a learns in seeds 0 and 2, b never."""
    config = {"steps": 2000, "stop_accuracy": 0.95, "grid_distances": [8, 24],
              "retrieval_distances": 8, "retrieval_per_distance": 64}
    a = {"label": "A", "train_layout_scored": 512,
         "steps_to_learn_by_seed": [400, None, 600],
         "train_layout_accuracy_by_seed": [0.96, 0.3, 0.97],
         "positional_accuracy_by_seed": [[0.9, 0.7], [0.3, 0.2], [0.8, 0.5]],
         "positional_grid_by_seed": [[[1.0, 0.9], [0.8, 0.6]], [[0.2, 0.2], [0.1, 0.1]],
                                     [[0.9, 0.9], [0.6, 0.4]]],
         "positional_grid": [[0.7, 0.67], [0.5, 0.37]]}
    b = {"label": "B", "train_layout_scored": 512, "steps_to_learn_by_seed": [None] * 3,
         "train_layout_accuracy_by_seed": [0.25, 0.26, 0.24],
         "positional_accuracy_by_seed": [[0.25, 0.25]] * 3,
         "positional_grid": [[0.25, 0.25], [0.25, 0.25]]}
    return {"config": config, "eval_lengths": [64, 128], "train_length": 64,
            "variants": {"a": a, "b": b}}


def test_the_seeds_that_learned_are_the_only_ones_read_past_the_training_length():
    made = _made()
    assert t4.learned_seeds(made, "a") == [0, 2] and t4.learned_seeds(made, "b") == []
    assert t4.learned_accuracy(made, "a", 1) == [0.7, 0.5]
    assert t4.learned_accuracy(made, "b", 1) == []
    distances, grid = t4.grid(made, "a")
    assert distances == [8, 24]
    np.testing.assert_allclose(grid, [[0.95, 0.9], [0.7, 0.5]])  # seeds 0 and 2 only
    assert np.isnan(t4.grid(made, "b")[1]).all()
    assert t4.verdict(made, "a") == "learned in 2 of 3 seeds"
    assert t4.verdict(made, "b") == "at chance in every seed"


def test_the_verdict_table_says_what_each_seed_did():
    table = t4.verdict_table_html(_made(), ["a", "b"])
    assert "learned in 2 of 3 seeds" in table and "400, –, 600" in table
    assert "96%, 30%, 97%" in table and "60%" in table  # 2x: mean of 0.7 and 0.5
    assert table.count("<tr>") == 3


@pytest.mark.parametrize("draw", ["steps", "checks", "loss", "heads", "extrapolation", "grid"])
def test_every_figure_draws_from_the_committed_results(draw):
    fig, axes = plt.subplots(1, 2)
    if draw == "steps":
        order = t4.draw_steps_to_learn(axes[0], RESULTS, MODELS)
        assert sorted(order) == sorted(MODELS)
    elif draw == "checks":
        t4.draw_check_curves(axes[0], RESULTS, MODELS[:3])
        assert len(axes[0].lines) >= 3
    elif draw == "loss":
        t4.draw_positional_loss(axes[0], RESULTS, MODELS[:3])
        assert any(line.get_ydata()[0] == pytest.approx(math.log(4)) for line in axes[0].lines)
    elif draw == "heads":
        t4.draw_head_curves(axes, RESULTS, MODELS[:3])
        assert all(len(ax.lines) == 3 for ax in axes)
    elif draw == "extrapolation":
        drawn = t4.draw_learned_extrapolation(axes[0], RESULTS, MODELS)
        assert drawn == [v for v in MODELS if t4.learned_seeds(RESULTS, v)
                         and RESULTS["variants"][v]["positional_accuracy_by_seed"][0][1]
                         is not None]
    else:
        learner = next(v for v in MODELS if len(t4.learned_seeds(RESULTS, v)) == 3)
        t4.draw_grid(axes[0], RESULTS, learner)
        assert len(axes[0].lines) == len(RESULTS["config"]["grid_distances"]) + 1  # + L_train
    plt.close(fig)


def test_head_curves_read_every_check_and_skip_recurrent_layers():
    for variant in MODELS:
        curves = t4.head_curves(RESULTS, variant)
        history = RESULTS["variants"][variant]["history"]
        assert curves["step"] == history["check_step"]
        for key in ("previous_token", "induction"):
            values = [v for v in curves[key] if not math.isnan(v)]
            assert all(0 <= v <= 1 for v in values), variant
    recurrent = [v for v in MODELS if v.startswith("kimi_linear")]
    for variant in recurrent:  # its first layers have no weights: None, read past
        assert None in RESULTS["variants"][variant]["history"]["previous_token"][0]


def test_steps_to_learn_are_checks_and_the_learners_reached_the_criterion():
    stop, every = RESULTS["config"]["stop_accuracy"], RESULTS["config"]["check_every"]
    for variant in MODELS:
        entry = RESULTS["variants"][variant]
        for steps, accuracy, trained in zip(entry["steps_to_learn_by_seed"],
                                            entry["train_layout_accuracy_by_seed"],
                                            entry["steps_trained_by_seed"], strict=True):
            if steps is None:
                assert accuracy < stop and trained == RESULTS["config"]["steps"], variant
            else:
                assert accuracy >= stop and steps == trained and steps % every == 0, variant


def test_rank_correlation_against_a_monotone_map_and_its_reverse():
    x = [3.0, 1.0, 2.0, math.inf, 5.0]
    assert t4.rank_correlation(x, [v ** 3 for v in x]) == pytest.approx(1.0)
    assert t4.rank_correlation(x, [-v for v in x]) == pytest.approx(-1.0)
    # Spearman by hand on a small case with a tie: ranks (0.5, 0.5, 2), (0, 1, 2)
    expected = np.corrcoef([0.5, 0.5, 2.0], [0.0, 1.0, 2.0])[0, 1]
    assert t4.rank_correlation([1, 1, 2], [1, 2, 3]) == pytest.approx(expected)
    with pytest.raises(ValueError, match="same length >= 3"):
        t4.rank_correlation([1, 2], [1, 2])


def test_formation_step_is_the_first_check_at_the_level():
    for variant in MODELS[:5]:
        curves = t4.head_curves(RESULTS, variant)
        step = t4.formation_step(RESULTS, variant, "previous_token", 0.5)
        if step is None:
            assert all(not v >= 0.5 for v in curves["previous_token"])
        else:
            i = curves["step"].index(step)
            assert curves["previous_token"][i] >= 0.5
            assert all(not v >= 0.5 for v in curves["previous_token"][:i])


def _with_heads():
    """One model, two seeds, two checks, two layers of two heads: the best head per check
    is known by construction (layer 0 excluded for the induction-type scores)."""
    def seed(top):  # [check][layer][head]
        low, high = [[top, 0.1], [0.2, 0.3]], [[0.9, 0.0], [top, 0.05]]
        return {"step": [50, 100], "right": [100, 500], "previous_token": [low, high],
                "induction": [low, high], "value_to_key": [low, high],
                "query_to_value": [low, [[0.9, 0.0], None]]}
    entry = {"label": "A", "check_by_seed": [seed(0.6), seed(0.4)],
             "history": {"check_step": [50, 100]}, "steps_to_learn_by_seed": [100, None]}
    return {"variants": {"a": entry}}


def test_head_curves_read_each_seed_from_its_own_checks():
    made = _with_heads()
    first, second = (t4.head_curves(made, "a", s) for s in (0, 1))
    assert first["step"] == [50, 100]
    assert first["previous_token"] == [0.6, 0.9] and second["previous_token"] == [0.4, 0.9]
    assert first["query_to_value"][0] == 0.3 and math.isnan(first["query_to_value"][1])
    assert second["induction"] == [0.3, 0.4]  # layer 0 is not read for induction
    assert t4.formation_step(made, "a", "value_to_key", 0.5, seed=1) == 100
    with pytest.raises(ValueError, match="seed must be in"):
        t4.head_curves(made, "a", 2)
    with pytest.raises(ValueError, match="key must be one of"):
        t4.formation_step(made, "a", "copying", 0.5)
    # a file that kept only the first seed's scores (in its history, as take four's results
    # did before every check recorded them) has seed 0 alone
    history = {"check_step": [50, 100], **{k: v for k, v in made["variants"]["a"][
        "check_by_seed"][0].items() if k not in ("step", "right")}}
    older = {"variants": {"a": {**made["variants"]["a"], "history": history,
                                "check_by_seed": [{"step": [50, 100], "right": [100, 500]}] * 2}}}
    assert t4.head_curves(older, "a", 0) == first
    with pytest.raises(ValueError, match="first seed only"):
        t4.head_curves(older, "a", 1)


def _sweep_run(rate, steps):
    return {"config": {"learning_rate": rate, "steps": 2000},
            "variants": {v: {"label": v.upper(), "steps_to_learn_by_seed": [s, None]}
                         for v, s in steps.items()}}


def test_rate_sweep_reads_the_first_seed_at_each_rate_and_checks_the_rate():
    runs = {1e-3: _sweep_run(1e-3, {"a": 900, "b": None}),
            2e-3: _sweep_run(2e-3, {"a": 600, "b": 1500})}
    assert t4.rate_sweep(runs, ["a", "b"]) == {"a": {1e-3: 900, 2e-3: 600},
                                                "b": {1e-3: None, 2e-3: 1500}}
    with pytest.raises(ValueError, match="trained at learning rate"):
        t4.rate_sweep({1e-3: runs[2e-3], 2e-3: runs[2e-3]}, ["a"])
    with pytest.raises(ValueError, match="at least 2"):
        t4.rate_sweep({1e-3: runs[1e-3]}, ["a"])
    fig, ax = plt.subplots()
    t4.draw_rate_sweep(ax, {r: {**run, "variants": {m: run["variants"][v] for v, m in
                                                  (("a", "rope"), ("b", "alibi"))}}
                             for r, run in runs.items()}, ["rope", "alibi"], shared=2e-3)
    drawn = [(line.get_xdata()[0], line.get_marker()) for line in ax.lines
             if len(line.get_xdata()) == 1 and line.get_marker() not in ("None", None)]
    assert (2000, "x") in drawn and (1500, "o") in drawn and (900, "v") in drawn
    plt.close(fig)


def test_task_heads_are_drawn_against_each_seeds_own_steps_to_learn():
    made = _with_heads()
    made["variants"] = {"rope": made["variants"]["a"]}  # a name the course has a colour for
    fig, axes = plt.subplots(1, 2)
    t4.draw_task_heads(axes, made, ["rope"])
    curves = [line for line in axes[0].lines if len(line.get_xdata()) == 2
              and line.get_linestyle() != ":"]
    assert [list(c.get_xdata()) for c in curves] == [[0.5, 1.0], [0.5, 1.0]]  # 100 = learned / last
    assert [list(c.get_ydata()) for c in curves] == [[0.6, 0.9], [0.4, 0.9]]
    plt.close(fig)


def test_untrained_scores_show_what_a_distance_bias_gives_for_free():
    """Before training, ALiBi's steepest head already weights the key before each value;
    RoPE's heads, with random weights and no bias, spread theirs about evenly."""
    from posenc.data import load_stdlib_corpus
    from posenc.experiments.extrapolation import PRESETS

    heldout = load_stdlib_corpus().heldout
    alibi = t4.untrained_head_scores(PRESETS["main"], "alibi", heldout)
    rope = t4.untrained_head_scores(PRESETS["main"], "rope", heldout)
    assert set(alibi) == {"value_to_key", "query_to_value"}
    assert alibi["value_to_key"] > 2 * rope["value_to_key"]
    assert all(0 < x < 0.1 for x in (rope["value_to_key"], rope["query_to_value"],
                                     alibi["query_to_value"]))
