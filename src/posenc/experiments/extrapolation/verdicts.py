"""The words chapters 9 and 13 may use about their results, as one rule each.

Every comparative sentence of the two chapters goes through these functions, so "learned", "at
chance" and "separated" mean one thing everywhere, and the tests pin that meaning.

* A **seed learned** the positional task when its run reached the stopping criterion: the
  held-out check, laid out as in training, at ``stop_accuracy`` (95 %) or more
  (:class:`.convergence.Checker`; ``steps_to_learn`` is not ``None``).
* A seed is **at chance** when its last check cannot be told from guessing: the 95 %
  Wilson interval of its share of right answers reaches down to the chance level (1/4,
  the 4 values present) or below. Otherwise it is **above chance** but short of the
  criterion ("partly").
* Two methods are **separated** on an accuracy when every seed of one is above every seed
  of the other by more than the seeds' own binomial noise: the lowest lower bound of the
  better one's 95 % intervals is above the highest upper bound of the worse one's. For a
  loss (no binomial count) the seed ranges must not overlap.
* A gap between two numbers is read against a noise scale: a gap no larger than it is
  **not established**, one up to twice it **narrow**, a larger one **clear**
  (:func:`gap_verdict`). With three seeds of every model (chapter 9's text runs), the gap is
  the one between the two models' seed means and the noise scale the larger of the two
  models' own **seed spreads**, max − min over their seeds (:func:`mean_gap_verdict`); a
  change along one model's curve (the same weights read at two lengths, or two ways) is
  paired: the mean of its per-seed changes against their spread.

The Wilson score interval (Wilson, 1927) keeps its coverage near 0 and 1, where the plain
normal interval does not (Brown, Cai & DasGupta, 2001, *Statistical Science* 16(2)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from ..._validation import check_bool, check_float, check_int
from .config import task_key

__all__ = ["CHANCE", "Z95", "wilson_interval", "seed_verdict", "method_verdict",
           "separated_counts", "separated_ranges", "gap_verdict", "GAP_WORDS",
           "seed_spread", "MeanGap", "mean_gap_verdict",
           "train_layout_counts", "seed_verdicts",
           "by_seed", "accuracy_counts", "steps_or_cap", "learns_faster"]

#: Guessing on the positional task: any of the 4 values present.
CHANCE = 0.25
#: The two-sided 95 % normal quantile.
Z95 = 1.959963984540054

#: The verdict of one seed.
LEARNED, ABOVE_CHANCE, AT_CHANCE = "learned", "above chance", "at chance"

#: The words of :func:`gap_verdict`, weakest first.
GAP_WORDS = ("not established", "narrow", "clear")


def wilson_interval(right: int, scored: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial share ``right / scored``: ``(low, high)``,
    both in ``[0, 1]``; ``z`` = 1.96 gives 95 %."""
    scored = check_int("scored", scored)
    right = check_int("right", right, minimum=0)
    if right > scored:
        raise ValueError(f"right must be at most scored = {scored}, got {right}")
    z = check_float("z", z, greater_than=0.0)
    p, n = right / scored, scored
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # at 0 (or all) right the bound is 0 (or 1) exactly: the formula leaves rounding there
    low = 0.0 if right == 0 else max(0.0, centre - half)
    high = 1.0 if right == scored else min(1.0, centre + half)
    return low, high


def seed_verdict(right: int, scored: int, *, reached_criterion: bool,
                 chance: float = CHANCE) -> str:
    """``"learned"`` (the run reached its stopping criterion), ``"at chance"`` (the
    interval of ``right / scored`` reaches ``chance`` or below) or ``"above chance"``."""
    check_bool("reached_criterion", reached_criterion)
    check_float("chance", chance, greater_than=0.0)
    low, _ = wilson_interval(right, scored)
    if reached_criterion:
        return LEARNED
    return AT_CHANCE if low <= chance else ABOVE_CHANCE


def method_verdict(seed_verdicts: Sequence[str]) -> str:
    """A method's word from its seeds' verdicts: ``"learned in every seed"``, ``"at chance
    in every seed"``, ``"above chance in every seed"`` (none learned, none at chance), or
    ``"learned in k of n seeds"``, or ``"mixed"`` (none learned, some at chance)."""
    verdicts = list(seed_verdicts)
    allowed = (LEARNED, ABOVE_CHANCE, AT_CHANCE)
    if not verdicts or any(v not in allowed for v in verdicts):
        raise ValueError(f"seed_verdicts must be a non-empty list of {allowed}, got {verdicts}")
    for word in allowed:
        if all(v == word for v in verdicts):
            return f"{word} in every seed"
    learned = verdicts.count(LEARNED)
    if learned:
        return f"learned in {learned} of {len(verdicts)} seeds"
    return "mixed"


def separated_counts(better: Sequence[tuple[int, int]], worse: Sequence[tuple[int, int]]
                     ) -> bool:
    """Whether ``better`` beats ``worse`` beyond the noise: each is a list of one
    ``(right, scored)`` per seed, and every seed interval of ``better`` lies above every
    seed interval of ``worse`` (lowest low > highest high)."""
    if not better or not worse:
        raise ValueError("better and worse need at least one (right, scored) seed each")
    low = min(wilson_interval(r, n)[0] for r, n in better)
    high = max(wilson_interval(r, n)[1] for r, n in worse)
    return low > high


def separated_ranges(lower: Sequence[float], higher: Sequence[float]) -> bool:
    """Whether every seed of ``lower`` is below every seed of ``higher`` (for a loss: no
    binomial count, so the seed ranges alone; with 3 seeds, the only difference the chapter
    calls a finding)."""
    if not lower or not higher:
        raise ValueError("lower and higher need at least one seed each")
    return max(lower) < min(higher)


def gap_verdict(gap: float, seed_change: float) -> str:
    """How firmly a gap between two numbers is established, against a measured noise scale
    ``seed_change`` (how far the same number moved with the seed alone, > 0;
    :func:`mean_gap_verdict` takes both from each model's own seeds):
    ``"not established"`` (``|gap| <= seed_change``), ``"narrow"`` (up to twice it) or
    ``"clear"`` (more than twice). The sign of ``gap`` is the reader's (which side leads);
    the word depends on its size only."""
    gap = check_float("gap", gap)
    seed_change = check_float("seed_change", seed_change, greater_than=0.0)
    if abs(gap) <= seed_change:
        return GAP_WORDS[0]
    return GAP_WORDS[1] if abs(gap) <= 2 * seed_change else GAP_WORDS[2]


def _seed_values(name: str, values) -> list[float]:
    """``values`` as finite floats, one per seed, at least two."""
    values = [check_float(name, v) for v in values]
    if len(values) < 2:
        raise ValueError(f"{name} needs at least 2 seeds, got {len(values)}")
    return values


def seed_spread(values_by_seed: Sequence[float]) -> float:
    """How far one number moved with the seed alone: max − min over its seeds (at least
    two, all finite)."""
    values = _seed_values("values_by_seed", values_by_seed)
    return max(values) - min(values)


class MeanGap(NamedTuple):
    """:func:`mean_gap_verdict`'s answer: the ``gap`` between the seed means (a − b), the
    ``noise`` scale it was read against and :func:`gap_verdict`'s ``word`` on the two."""

    gap: float
    noise: float
    word: str


def mean_gap_verdict(a_by_seed: Sequence[float], b_by_seed: Sequence[float], *,
                     paired: bool = False) -> MeanGap:
    """How firmly the number ``a`` differs from ``b``, each given once per seed (at least
    two seeds; chapter 9 has three):

    * unpaired (two models): the gap between the seed means, mean(a) − mean(b), against
      the larger of the two models' own seed spreads (:func:`seed_spread`);
    * ``paired=True`` (the same weights of each seed read two ways, e.g. a model's loss at
      8x and at 1x): the mean of the per-seed differences a_i − b_i against their spread.

    The word is :func:`gap_verdict`'s: ``"not established"`` up to the noise scale,
    ``"narrow"`` up to twice it, ``"clear"`` beyond. It depends only on the sizes: swapping
    ``a`` and ``b`` flips the gap's sign, adding one constant to every seed of both changes
    nothing (paired: adding any per-seed constant to both).

    Why this scale: each model's spread is measured on its own seeds, not borrowed from
    other models, and the larger of the two covers the noisier one. For normal seed noise
    of equal size σ and no true difference, three seeds each read a gap beyond the scale
    about 5 % of the time and beyond twice it about 0.5 % (if one model's σ is ten times
    the other's: 8 % and 2 %; paired, three seeds: 8 % and 2 %). The rule this replaces
    read one seed per model against the larger of two other models' two-run differences:
    a third and an eighth of the time (the tests simulate both).

    What three seeds cannot show: a true difference of 2σ reads "not established" more
    often than not, and "clear" needs over 4σ to come out half of the time; a three-seed
    range is itself rough (its standard deviation is about half its mean, 0.89σ against
    1.69σ), so one model's small spread may be luck; and the seeds change only the initial
    weights and the batch order: every seed reads the same held-out text at the same
    settings, so the spread says nothing of another text, another learning rate or another
    size.
    """
    check_bool("paired", paired)
    a, b = _seed_values("a_by_seed", a_by_seed), _seed_values("b_by_seed", b_by_seed)
    if paired:
        if len(a) != len(b):
            raise ValueError(f"paired seeds need as many values in a_by_seed as in b_by_seed, "
                             f"got {len(a)} and {len(b)}")
        changes = [x - y for x, y in zip(a, b, strict=True)]
        gap, noise = math.fsum(changes) / len(changes), seed_spread(changes)
    else:
        gap = math.fsum(a) / len(a) - math.fsum(b) / len(b)
        noise = max(seed_spread(a), seed_spread(b))
    if noise == 0:
        raise ValueError("the seeds do not differ (spread 0): there is no noise scale to "
                         "read the gap against")
    return MeanGap(gap, noise, gap_verdict(gap, noise))


# Reading a results file (full.json): the counts the rules above take.

def by_seed(entry, key: str) -> list:
    """A run's value per seed: ``<key>_by_seed`` of a several-seed file, else ``[key]``."""
    return list(entry[f"{key}_by_seed"]) if f"{key}_by_seed" in entry else [entry[key]]


def train_layout_counts(results, variant: str) -> list[tuple[int, int]]:
    """``(right, scored)`` per seed of the last held-out check (laid out as in training:
    the config's ``check_task`` at 1x)."""
    entry = results["variants"][variant]
    scored = entry["train_layout_scored"]
    return [(round(a * scored), scored) for a in by_seed(entry, "train_layout_accuracy")]


def seed_verdicts(results, variant: str) -> list[str]:
    """Each seed's verdict (:func:`seed_verdict`) at the training length."""
    entry = results["variants"][variant]
    learned = [s is not None for s in by_seed(entry, "steps_to_learn")]
    return [seed_verdict(r, n, reached_criterion=done)
            for (r, n), done in zip(train_layout_counts(results, variant), learned, strict=True)]


def accuracy_counts(results, variant: str, task: str, length_index: int
                    ) -> list[tuple[int, int]]:
    """``(right, scored)`` per seed of a retrieval task (one of
    :data:`posenc.retrieval.TASKS`: ``"content"``, ``"positional"``, ``"rebinding"``) at the
    evaluation length ``length_index``: one query per sequence, the config's
    ``retrieval_distances * retrieval_per_distance`` sequences."""
    config = results["config"]
    scored = config["retrieval_distances"] * config["retrieval_per_distance"]
    return [(round(a[length_index] * scored), scored)
            for a in by_seed(results["variants"][variant], task_key(task, "accuracy"))]


def steps_or_cap(results, variant: str) -> list[float]:
    """Each seed's steps to learn, ``inf`` for a seed that did not learn by the cap."""
    entry = results["variants"][variant]
    return [math.inf if s is None else float(s) for s in by_seed(entry, "steps_to_learn")]


def learns_faster(results, a: str, b: str) -> bool:
    """Whether ``a`` learned the positional task faster than ``b`` in every seed pair:
    ``a``'s slowest seed learned before ``b``'s fastest (a seed that never learned is
    slower than any that did; two that never learned are not told apart)."""
    faster, slower = steps_or_cap(results, a), steps_or_cap(results, b)
    return max(faster) < min(slower)
