"""Reading a results file: the helpers the chapters and figures use on the numbers a run
wrote (no training here, so a figure needs nothing from the runner)."""

from __future__ import annotations

import numpy as np

from ..._validation import check_int
from ...relative import t5_relative_bucket
from .results import Results
from .variants import VariantKey

__all__ = ["binned_mean", "t5_bias_by_distance", "losses_by_seed"]


def binned_mean(values, bin_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean of consecutive bins of ``bin_size`` values: ``(bin centres, means)``.

    Shape: ``values`` ``[n]`` with ``n`` a multiple of ``bin_size``; both outputs
    ``[n // bin_size]``. Centres are in position units (first position is 0).
    """
    values = np.asarray(values, dtype=np.float64)
    bin_size = check_int("bin_size", bin_size)
    if values.ndim != 1 or len(values) % bin_size:
        raise ValueError(f"values must be 1-D with a length divisible by bin_size={bin_size}, "
                         f"got shape {values.shape}")
    means = values.reshape(-1, bin_size).mean(axis=1)
    centres = np.arange(len(means)) * bin_size + (bin_size - 1) / 2
    return centres, means


def losses_by_seed(results, variant: str) -> np.ndarray:
    """The loss of ``variant`` per seed and evaluation length, ``[seed, length]``: the rows
    of ``loss_by_seed`` in a several-seed file, the one row ``loss`` otherwise; NaN where
    the loss is not defined (the plain learned table past ``L_train``)."""
    entry = results["variants"][variant]
    rows = entry["loss_by_seed"] if "loss_by_seed" in entry else [entry["loss"]]
    return np.array([[np.nan if x is None else x for x in row] for row in rows],
                    dtype=np.float64)


def t5_bias_by_distance(results: dict, variant: str = "t5", max_distance: int | None = None):
    """The learned T5 bias as a function of distance ``i - j`` for every head.

    Returns ``(distances, bias)`` with ``distances`` ``[0 .. max_distance]`` (default: the
    longest evaluation length minus one) and ``bias`` ``[num_heads, len(distances)]``,
    looked up through :func:`posenc.relative.t5_relative_bucket` (causal buckets) with
    the options the model was trained with (read from the results' config, an older
    file's through :func:`.results.migrate`).
    """
    results = Results.from_dict(results)
    config = results.config
    options = config.method_options(VariantKey.parse(variant).source)
    table = np.asarray(results["variants"][variant]["t5_bias"])  # [buckets, heads]
    max_distance = results["eval_lengths"][-1] - 1 if max_distance is None else max_distance
    distances = np.arange(max_distance + 1)
    buckets = t5_relative_bucket(-distances, bidirectional=False,
                                 num_buckets=options["num_buckets"],
                                 max_distance=options["max_distance"])
    return distances, table[buckets].T
