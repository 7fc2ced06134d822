"""Converge, then extrapolate (chapter 13, take four): the constant schedule, the held-out
check that stops a run, the grid, and what a run records."""

import numpy as np
import pytest

from posenc import retrieval
from posenc.data import load_stdlib_corpus
from posenc.experiments.extrapolation import PRESETS, ExtrapolationConfig, run_experiment
from posenc.experiments.extrapolation import convergence as convergence_module
from posenc.experiments.extrapolation.convergence import CHECK_SEED, Checker
from posenc.experiments.extrapolation.training import learning_rate_at, train_model

#: Take four's protocol at a size that trains in seconds.
TINY = PRESETS["main"].replace(
    encodings=("alibi",), nope_encodings=(), patterns=(), train_length=32, d_model=16,
    num_heads=2, num_layers=2, d_ff=32, options={"t5": {"max_distance": 32},
                                                "fire": {"fire_init_L": 32.0}},
    steps=60, batch_size=4, retrieval_batch_sizes=(2, 4), warmup_steps=5, check_every=20,
    check_sequences=16, eval_tokens=1024, retrieval_distances=2, retrieval_per_distance=4,
    grid_distances=(4, 12), log_every=10)


@pytest.fixture(scope="module")
def corpus():
    return load_stdlib_corpus()


def test_the_constant_schedule_holds_the_peak_after_the_warm_up():
    constant = TINY.replace(schedule="constant")
    cosine = TINY.replace(schedule="cosine")
    peak = TINY.learning_rate
    for step in range(TINY.warmup_steps):  # the same warm-up
        assert learning_rate_at(step, constant) == learning_rate_at(step, cosine)
    assert all(learning_rate_at(s, constant) == peak for s in range(5, 10 * TINY.steps))
    assert learning_rate_at(TINY.steps - 1, cosine) < 0.2 * peak  # decayed


def test_the_check_sequences_are_laid_out_as_in_training_and_the_same_for_every_run(corpus):
    one, two = Checker(TINY, corpus.heldout), Checker(TINY, corpus.heldout)
    assert np.array_equal(one.batch.inputs, two.batch.inputs)
    retrieval.check_answers(one.batch, "positional")  # each answer follows its key
    half = TINY.train_length // 2
    answered = one.batch.targets != retrieval.IGNORE
    assert answered.sum() == TINY.check_sequences * TINY.retrieval_queries == one.scored
    assert bool(answered[:, :half - 1].sum() == 0)  # queries in the second half, as trained
    assert CHECK_SEED not in range(10)  # not a training seed


def test_a_run_stops_at_the_first_check_that_reaches_the_criterion(corpus, monkeypatch):
    answers = iter([(10, 64), (40, 64), (61, 64), (64, 64)])
    monkeypatch.setattr(convergence_module, "answers_right",
                        lambda model, batch, size: next(answers))
    _, history = train_model(TINY.replace(stop_accuracy=0.95, steps=200), "alibi",
                             corpus.train, progress=False, heldout=corpus.heldout)
    assert history["check_step"] == [20, 40, 60] and history["check_right"] == [10, 40, 61]
    assert history["steps_to_learn"] == 60 == history["steps_trained"]  # 61/64 >= 0.95
    assert history["step"][-1] == 60  # the loss curve ends where training did
    for key in ("previous_token", "induction", "value_to_key", "query_to_value"):
        assert len(history[key]) == 3 and len(history[key][0]) == 2, key  # [check][layer]
        assert all(0 <= v <= 1 for check in history[key] for layer in check for v in layer)


def test_a_run_that_never_reaches_it_trains_to_the_cap(corpus, monkeypatch):
    monkeypatch.setattr(convergence_module, "answers_right", lambda model, batch, size: (1, 64))
    _, history = train_model(TINY.replace(stop_accuracy=0.95), "alibi", corpus.train,
                             progress=False, heldout=corpus.heldout)
    assert history["steps_to_learn"] is None and history["steps_trained"] == TINY.steps
    assert history["check_step"] == [20, 40, 60]


def test_checks_need_held_out_text():
    with pytest.raises(ValueError, match="pass heldout"):
        train_model(TINY, "alibi", np.zeros(5000, dtype=np.uint8), progress=False)


def test_a_run_records_what_the_chapter_reads(corpus):
    results = run_experiment(TINY.replace(num_seeds=2, encodings=("alibi", "rope")),
                             progress=False, corpus=corpus)
    for name in ("alibi", "rope"):
        entry = results["variants"][name]
        assert entry["steps_trained_by_seed"] == [60, 60] or all(
            s <= 60 for s in entry["steps_trained_by_seed"])
        assert len(entry["train_layout_accuracy_by_seed"]) == 2
        assert entry["train_layout_scored"] == TINY.check_sequences * TINY.retrieval_queries
        grid = entry["positional_grid"]
        assert len(grid) == len(TINY.eval_lengths) and all(len(row) == 2 for row in grid)
        assert [c["step"] for c in entry["check_by_seed"]] == [[20, 40, 60]] * 2 or all(
            c["step"][-1] == s for c, s in zip(entry["check_by_seed"],
                                               entry["steps_trained_by_seed"], strict=True))
        last = [c["right"][-1] / entry["train_layout_scored"] for c in entry["check_by_seed"]]
        assert last == pytest.approx(entry["train_layout_accuracy_by_seed"], abs=1e-4)
        for checks in entry["check_by_seed"]:  # every seed's heads, one row per check
            for key in ("previous_token", "induction", "value_to_key", "query_to_value"):
                assert len(checks[key]) == len(checks["step"]), key
        assert entry["check_by_seed"][0]["value_to_key"] == entry["history"]["value_to_key"]


@pytest.mark.parametrize("changes, match", [
    (dict(schedule="linear"), "schedule"),
    (dict(stop_accuracy=1.5), "stop_accuracy must be in"),
    (dict(check_every=0), "stop_accuracy=0.95 needs check_every"),
    (dict(retrieval_tasks=("content",), retrieval_batch_sizes=(), stop_accuracy=0.0,
          grid_distances=()), "check_every > 0 checks check_task='positional'"),
    (dict(check_task="rebinding"), "check_every > 0 checks check_task='rebinding'"),
    (dict(check_task="order"), "check_task"),
    (dict(grid_distances=(40,)), "grid_distances must be distances seen in training"),
    (dict(check_sequences=0), "check_sequences"),
])
def test_the_protocol_refuses_what_it_cannot_do(changes, match):
    with pytest.raises((ValueError, TypeError), match=match):
        TINY.replace(**changes)


def test_take_fours_presets_train_to_the_criterion_with_a_constant_rate():
    for name in ("main", "full"):
        config = PRESETS[name]
        assert (config.schedule, config.stop_accuracy, config.steps) == ("constant", 0.95, 2000)
        assert config.retrieval_per_distance >= 64  # at least 64 sequences per distance
    assert PRESETS["take3"].schedule == "cosine" and PRESETS["take3"].stop_accuracy == 0.0
    assert isinstance(PRESETS["full"], ExtrapolationConfig)


def test_the_check_reads_the_configs_check_task(corpus):
    """The rebinding preset stops on held-out rebinding answers: the check sequences are
    that task's, laid out as in training (each scored answer is the key's later value)."""
    config = TINY.replace(retrieval_tasks=("positional", "rebinding"), retrieval_pairs=3,
                          retrieval_batch_sizes=(2, 2), check_task="rebinding",
                          grid_distances=())
    rebinding = Checker(config, corpus.heldout)
    positional = Checker(config.replace(check_task="positional"), corpus.heldout)
    retrieval.check_answers(rebinding.batch, "rebinding")
    assert not np.array_equal(rebinding.batch.inputs, positional.batch.inputs)
    with pytest.raises(AssertionError):  # some rebound keys: not the positional layout
        retrieval.check_answers(rebinding.batch, "positional")


def test_the_rebinding_preset_is_main_stopped_on_the_rebinding_task():
    main, rebinding = PRESETS["main"], PRESETS["rebinding"]
    assert rebinding.encodings == main.encodings and rebinding.check_task == "rebinding"
    assert rebinding.task_batch_sizes == {"positional": 16, "rebinding": 16}
    assert (rebinding.patterns, rebinding.nope_encodings, rebinding.grid_distances) == ((), (), ())
    same = ("train_length", "d_model", "num_layers", "learning_rate", "schedule", "steps",
            "stop_accuracy", "check_every", "options")
    assert all(getattr(rebinding, f) == getattr(main, f) for f in same)
    assert main.check_task == "positional"
