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


# chapter 9's three-seed rule


def test_seed_spread_and_mean_gap_verdict_by_hand():
    """Binary fractions, so every mean and spread is exact and the thresholds are hit."""
    from posenc.experiments.extrapolation.verdicts import MeanGap, mean_gap_verdict, seed_spread
    a = [1.0, 1.25, 1.125]  # mean 1.125, spread 0.25
    assert seed_spread(a) == 0.25 and seed_spread([3.0, -1.0]) == 4.0
    assert mean_gap_verdict(a, [1.25, 1.3125, 1.375]) == MeanGap(-0.1875, 0.25, "not established")
    assert mean_gap_verdict(a, [1.125, 1.375, 1.25]) == (-0.125, 0.25, "not established")
    assert mean_gap_verdict(a, [1.5, 1.625, 1.75]).word == "narrow"  # 0.5 = twice: narrow
    assert mean_gap_verdict([1.5, 1.625, 1.75], a).gap == 0.5
    assert mean_gap_verdict(a, [1.75, 1.875, 2.0]) == (-0.75, 0.25, "clear")
    # the noisier model sets the scale: b's spread of 1 swallows the same gap
    assert mean_gap_verdict(a, [1.375, 1.875, 2.375]) == (-0.75, 1.0, "not established")
    # paired: the per-seed changes are steady although the levels spread over 2
    up, down = [1.0, 2.0, 3.0], [0.5, 1.625, 2.5]  # changes 0.5, 0.375, 0.5
    assert mean_gap_verdict(up, down, paired=True) == (pytest.approx(1.375 / 3), 0.125, "clear")
    assert mean_gap_verdict(up, down).word == "not established"  # unpaired: spread 2


def test_mean_gap_verdict_refuses_what_it_cannot_read():
    from posenc.experiments.extrapolation.verdicts import mean_gap_verdict, seed_spread
    with pytest.raises(ValueError, match="at least 2 seeds, got 1"):
        seed_spread([1.0])
    with pytest.raises(ValueError, match="b_by_seed needs at least 2 seeds"):
        mean_gap_verdict([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="a_by_seed must be finite"):
        mean_gap_verdict([1.0, float("nan")], [1.0, 2.0])  # e.g. a loss that is not defined
    with pytest.raises(ValueError, match="as many values"):
        mean_gap_verdict([1.0, 2.0, 3.0], [1.0, 2.0], paired=True)
    with pytest.raises(ValueError, match="spread 0"):
        mean_gap_verdict([1.0, 1.0], [2.0, 2.0])
    with pytest.raises(ValueError, match="spread 0"):
        mean_gap_verdict([1.0, 2.0], [0.5, 1.5], paired=True)  # the same change in each seed
    with pytest.raises(TypeError, match="paired must be True or False"):
        mean_gap_verdict([1.0, 2.0], [1.0, 2.0], paired=1)


SEEDS = st.lists(st.floats(-10, 10), min_size=2, max_size=5)


def _off_threshold(verdict) -> bool:
    """Not within rounding of a threshold, where adding a constant may tip the word."""
    ratio = abs(verdict.gap) / verdict.noise
    return abs(ratio - 1) > 1e-6 and abs(ratio - 2) > 1e-6


@settings(max_examples=300, deadline=None)
@given(SEEDS, SEEDS, st.floats(-100, 100), st.floats(0.01, 100))
def test_mean_gap_verdict_ignores_the_order_a_common_shift_and_the_unit(a, b, shift, unit):
    """Swapping a and b flips the gap's sign only; one constant added to every seed of both,
    or one positive factor on all of them, leaves the word as it was."""
    from hypothesis import assume

    from posenc.experiments.extrapolation.verdicts import mean_gap_verdict, seed_spread
    assume(max(seed_spread(a), seed_spread(b)) > 1e-3)
    verdict = mean_gap_verdict(a, b)
    assume(_off_threshold(verdict))
    swapped = mean_gap_verdict(b, a)
    assert (swapped.gap, swapped.noise, swapped.word) == (-verdict.gap, verdict.noise,
                                                          verdict.word)
    assert mean_gap_verdict([x + shift for x in a], [x + shift for x in b]).word == verdict.word
    assert mean_gap_verdict([x * unit for x in a], [x * unit for x in b]).word == verdict.word
    assert verdict.noise == max(seed_spread(a), seed_spread(b))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(-10, 10), st.floats(-10, 10), st.floats(-100, 100)),
                min_size=2, max_size=5))
def test_a_paired_verdict_ignores_what_each_seed_adds_to_both(rows):
    """Paired, a per-seed constant (a seed's better or worse weights, added to both of its
    readings) changes nothing: only the per-seed changes count."""
    from hypothesis import assume

    from posenc.experiments.extrapolation.verdicts import mean_gap_verdict, seed_spread
    a, b, offsets = (list(column) for column in zip(*rows, strict=True))
    assume(seed_spread([x - y for x, y in zip(a, b, strict=True)]) > 1e-3)
    verdict = mean_gap_verdict(a, b, paired=True)
    assume(_off_threshold(verdict))
    assert mean_gap_verdict(b, a, paired=True).word == verdict.word
    shifted = mean_gap_verdict([x + c for x, c in zip(a, offsets, strict=True)],
                               [y + c for y, c in zip(b, offsets, strict=True)], paired=True)
    assert shifted.word == verdict.word
    assert shifted.gap == pytest.approx(verdict.gap, abs=1e-9)


def test_the_three_seed_rule_errs_as_its_docstring_says():
    """Monte Carlo under no true difference, normal seed noise: three seeds each read a gap
    beyond the scale ~5 % of the time and beyond twice it ~0.5 % (paired: ~8 % and ~2 %);
    the rule it replaced (one seed each against the larger of two other models' two-run
    differences) a third and an eighth of the time."""
    import numpy as np

    from posenc.experiments.extrapolation.verdicts import gap_verdict, mean_gap_verdict
    rng = np.random.default_rng(9)
    draws = rng.standard_normal((20_000, 2, 3))
    words = [mean_gap_verdict(a, b).word for a, b in draws]
    assert 0.04 < 1 - words.count("not established") / len(words) < 0.06
    assert words.count("clear") / len(words) < 0.01
    paired = [mean_gap_verdict(a, b, paired=True).word for a, b in draws]
    assert 0.07 < 1 - paired.count("not established") / len(paired) < 0.095
    assert 0.015 < paired.count("clear") / len(paired) < 0.03
    one = rng.standard_normal((20_000, 6))  # a, b once each; two other models twice
    old = [gap_verdict(x[0] - x[1], max(abs(x[2] - x[3]), abs(x[4] - x[5]))) for x in one]
    assert 0.30 < 1 - old.count("not established") / len(old) < 0.36
    assert 0.11 < old.count("clear") / len(old) < 0.15
