"""The words of chapter 13 (posenc.experiments.extrapolation.verdicts): each rule against its
definition, and the reading of a results file."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.experiments.extrapolation.verdicts import (
    CHANCE,
    Z95,
    accuracy_counts,
    learns_faster,
    method_verdict,
    seed_verdict,
    seed_verdicts,
    separated_counts,
    separated_ranges,
    train_layout_counts,
    wilson_interval,
)


def _score_statistic(p: float, share: float, n: int) -> float:
    """The score test's statistic, whose two roots in p are Wilson's bounds."""
    return (share - p) ** 2 - Z95 ** 2 * p * (1 - p) / n


def _root(lo: float, hi: float, share: float, n: int) -> float:
    """Bisection on the score statistic between a point inside the interval (negative) and
    one outside (positive)."""
    f_lo = _score_statistic(lo, share, n)
    for _ in range(200):
        mid = (lo + hi) / 2
        if (_score_statistic(mid, share, n) > 0) == (f_lo > 0):
            lo, f_lo = mid, _score_statistic(mid, share, n)
        else:
            hi = mid
    return (lo + hi) / 2


@given(st.integers(1, 2000), st.data())
@settings(max_examples=200, deadline=None)
def test_wilson_bounds_are_the_roots_of_the_score_test(n, data):
    """A second formulation: Wilson's interval is where the score statistic equals z²."""
    right = data.draw(st.integers(0, n))
    low, high = wilson_interval(right, n)
    share = right / n
    assert 0 <= low <= share <= high <= 1
    if right > 0:
        assert low == pytest.approx(_root(share, 0.0, share, n), abs=1e-9)
    if right < n:
        assert high == pytest.approx(_root(share, 1.0, share, n), abs=1e-9)


def test_wilson_at_no_success_and_a_textbook_value():
    n = 128
    assert wilson_interval(0, n) == (0.0, pytest.approx(Z95 ** 2 / (n + Z95 ** 2)))
    # 81 of 263 (Newcombe, 1998, Stat. Med. 17, p. 857, method 3): 0.2553 to 0.3662
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


@given(st.integers(10, 600))
def test_guessing_at_one_in_four_is_at_chance_and_a_clear_lead_is_not(n):
    assert seed_verdict(round(n * CHANCE), n, reached_criterion=False) == "at chance"
    assert seed_verdict(0, n, reached_criterion=False) == "at chance"  # below counts too
    low, _ = wilson_interval(round(0.6 * n), n)
    expected = "above chance" if low > CHANCE else "at chance"
    assert seed_verdict(round(0.6 * n), n, reached_criterion=False) == expected
    assert seed_verdict(round(0.3 * n), n, reached_criterion=True) == "learned"


def test_a_seed_verdict_needs_a_bool_criterion():
    with pytest.raises(TypeError, match="reached_criterion must be True or False"):
        seed_verdict(3, 10, reached_criterion=None)
    with pytest.raises(ValueError, match="right must be at most scored = 10"):
        seed_verdict(11, 10, reached_criterion=False)


@pytest.mark.parametrize("verdicts, word", [
    (["learned"] * 3, "learned in every seed"),
    (["at chance"] * 3, "at chance in every seed"),
    (["above chance"] * 2, "above chance in every seed"),
    (["learned", "at chance", "learned"], "learned in 2 of 3 seeds"),
    (["learned", "above chance", "above chance"], "learned in 1 of 3 seeds"),
    (["at chance", "above chance", "above chance"], "mixed")])
def test_a_method_word_follows_its_seeds(verdicts, word):
    assert method_verdict(verdicts) == word


def test_a_method_word_refuses_an_unknown_verdict():
    with pytest.raises(ValueError, match="seed_verdicts"):
        method_verdict(["learnt"])
    with pytest.raises(ValueError, match="seed_verdicts"):
        method_verdict([])


@given(st.lists(st.integers(0, 512), min_size=1, max_size=4),
       st.lists(st.integers(0, 512), min_size=1, max_size=4))
def test_separated_is_never_both_ways_and_needs_more_than_the_ranges_apart(a, b):
    better, worse = [(r, 512) for r in a], [(r, 512) for r in b]
    assert not (separated_counts(better, worse) and separated_counts(worse, better))
    if separated_counts(better, worse):
        assert min(a) > max(b)  # the intervals apart means the seeds apart
        assert separated_ranges(b, a)


def test_two_seeds_a_point_apart_are_not_separated_but_far_apart_ones_are():
    assert not separated_counts([(260, 512)], [(250, 512)])
    assert separated_counts([(400, 512), (380, 512)], [(130, 512), (140, 512)])
    assert separated_ranges([2.01, 2.02], [2.03, 2.05]) and not separated_ranges([2.0, 2.04],
                                                                                 [2.03])


def _results():
    """A results dict of two methods and three seeds, as run_experiment writes it."""
    config = {"retrieval_distances": 8, "retrieval_per_distance": 64}
    return {"config": config, "variants": {
        "a": {"train_layout_scored": 512, "train_layout_accuracy_by_seed": [0.96, 0.97, 0.26],
              "steps_to_learn_by_seed": [700, 950, None],
              "positional_accuracy_by_seed": [[0.9, 0.5], [0.95, 0.4], [0.3, 0.25]]},
        "b": {"train_layout_scored": 512, "train_layout_accuracy": 0.5,
              "steps_to_learn": None, "positional_accuracy": [0.5, 0.3]}}}


def test_reading_a_results_file_gives_counts_and_verdicts_per_seed():
    results = _results()
    assert train_layout_counts(results, "a") == [(492, 512), (497, 512), (133, 512)]
    assert seed_verdicts(results, "a") == ["learned", "learned", "at chance"]
    assert method_verdict(seed_verdicts(results, "a")) == "learned in 2 of 3 seeds"
    assert seed_verdicts(results, "b") == ["above chance"]  # one seed: no _by_seed
    assert accuracy_counts(results, "a", "positional", 1) == [(256, 512), (205, 512),
                                                              (128, 512)]
    assert math.isclose(accuracy_counts(results, "b", "positional", 0)[0][0] / 512, 0.5)


def test_faster_means_every_seed_before_every_seed_and_never_is_slowest():
    results = {"variants": {
        "quick": {"steps_to_learn_by_seed": [300, 350, 400]},
        "slow": {"steps_to_learn_by_seed": [900, None, 1000]},
        "never": {"steps_to_learn_by_seed": [None, None, None]},
        "overlapping": {"steps_to_learn_by_seed": [380, 500, 600]}}}
    assert learns_faster(results, "quick", "slow") and not learns_faster(results, "slow", "quick")
    assert learns_faster(results, "quick", "never")
    assert not learns_faster(results, "slow", "never")  # its None seed ties with never
    assert not learns_faster(results, "never", "never")
    assert not learns_faster(results, "quick", "overlapping")  # 400 > 380


# chapter 9's one-seed rule


def test_gap_verdict_reads_a_gap_against_the_seed_change():
    from posenc.experiments.extrapolation.verdicts import GAP_WORDS, gap_verdict
    assert [gap_verdict(g, 0.1) for g in (0.05, 0.1, 0.15, 0.2, 0.21)] == [
        "not established", "not established", "narrow", "narrow", "clear"]
    assert gap_verdict(-0.28, 0.2) == "narrow" and GAP_WORDS[-1] == "clear"
    with pytest.raises(ValueError, match="seed_change must be > 0"):
        gap_verdict(0.1, 0.0)
    with pytest.raises(TypeError, match="gap must be a real number"):
        gap_verdict("0.1", 0.1)
    with pytest.raises(ValueError, match="gap must be finite"):
        gap_verdict(float("nan"), 0.1)


@settings(max_examples=200, deadline=None)
@given(st.floats(-10, 10), st.floats(1e-3, 5), st.floats(1.001, 4))
def test_gap_verdict_grows_with_the_gap_and_scales_with_the_noise(gap, noise, k):
    """Monotone in |gap|, symmetric in its sign, and unchanged when both are scaled."""
    from posenc.experiments.extrapolation.verdicts import GAP_WORDS, gap_verdict
    word = gap_verdict(gap, noise)
    assert gap_verdict(-gap, noise) == word
    assert GAP_WORDS.index(gap_verdict(gap * k, noise)) >= GAP_WORDS.index(word)
    assert GAP_WORDS.index(gap_verdict(gap, noise * k)) <= GAP_WORDS.index(word)
    assert gap_verdict(gap * 2.0, noise * 2.0) == word
