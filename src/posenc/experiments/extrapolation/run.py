"""Training and evaluation: one tiny LM per position method, evaluated at 1x..8x.

See :mod:`posenc.experiments.extrapolation` for the protocol; the configuration is in
:mod:`.config` and the command line in :mod:`.__main__`.
"""

from __future__ import annotations

import hashlib
import math
import os
import platform
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from ..._validation import check_int, to_numpy
from ...data import contiguous_windows, load_stdlib_corpus, random_windows
from ...model import TinyLM
from ...nn import POSITIONS, T5RelativeBias
from ...nn.rotary import pi_frequencies
from ...relative import t5_relative_bucket
from .config import (
    DERIVED_VARIANTS,
    PRESETS,
    VARIANT_LABELS,
    ExtrapolationConfig,
    _variants,
    config_hash,
)

__all__ = [
    "seed_everything",
    "learning_rate_at",
    "train_model",
    "t5_bias_table",
    "per_position_loss",
    "rope_pi_frequencies",
    "run_experiment",
    "summary_rows",
    "format_summary",
    "binned_mean",
    "t5_bias_by_distance",
]

#: The library files whose code decides the numbers (hashed into the results, for the record).
_SOURCE_FILES = ("model.py", "data.py", "rope.py", "alibi.py", "relative.py", "sinusoidal.py",
                 "scaling.py", "nn/*.py", "experiments/extrapolation/*.py")


def _code_hash() -> str:
    """SHA-256 over the source files that decide the numbers (for the record only)."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for pattern in _SOURCE_FILES:
        for path in sorted(root.glob(pattern)):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch, and ask torch for deterministic kernels."""
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 -- nothing here draws from it; seeded for additions
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


def learning_rate_at(step: int, config: ExtrapolationConfig) -> float:
    """Linear warm-up over ``warmup_steps``, then cosine decay to ``min_lr_ratio * lr``."""
    peak = config.learning_rate
    if step < config.warmup_steps:
        return peak * (step + 1) / config.warmup_steps
    span = max(config.steps - config.warmup_steps, 1)
    progress = min((step - config.warmup_steps) / span, 1.0)
    floor = config.min_lr_ratio * peak
    return floor + (peak - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def _parameter_groups(model: TinyLM, config: ExtrapolationConfig) -> list[dict]:
    """One group for everything, another (learning rate times ``t5_bias_lr_scale``) for
    T5 bias tables."""
    bias = {id(p) for m in model.modules() if isinstance(m, T5RelativeBias)
            for p in m.parameters()}
    rest = [p for p in model.parameters() if id(p) not in bias]
    groups = [{"params": rest, "lr_scale": 1.0}]
    if bias:
        groups.append({"params": [p for p in model.parameters() if id(p) in bias],
                       "lr_scale": config.t5_bias_lr_scale})
    return groups


def t5_bias_table(model: TinyLM) -> np.ndarray | None:
    """The learned T5 bias of the first block, ``[num_buckets, num_heads]`` (shared by all
    blocks by default), or ``None`` for other encodings."""
    encoding = model.blocks[0].attn.encoding
    if not isinstance(encoding, T5RelativeBias):
        return None
    return to_numpy(encoding.embedding.weight).astype(np.float64)


def train_model(config: ExtrapolationConfig, position: str, train_data: np.ndarray, *,
                progress: bool = True) -> tuple[TinyLM, dict]:
    """Train one :class:`TinyLM` with ``position`` at ``config.train_length``.

    Every encoding gets the same initial seed and the same batches (a generator seeded
    with ``config.seed``). Returns the model (in eval mode) and a history dict with the
    mean training loss over each ``log_every`` steps, the time taken and the 1-minute
    load average seen while training.
    """
    seed_everything(config.seed)
    model = TinyLM(config.model_config(position))
    optimizer = torch.optim.AdamW(_parameter_groups(model, config), lr=config.learning_rate,
                                  betas=(0.9, 0.95), weight_decay=0.0)
    batches = torch.Generator().manual_seed(config.seed)
    history = {"step": [], "loss": [], "load_average": []}
    running, count = 0.0, 0
    start = time.perf_counter()
    model.train()
    bar = tqdm(range(config.steps), desc=f"{position:>10}", disable=not progress,
               file=sys.stderr, mininterval=0.5, leave=True)
    for step in bar:
        for group in optimizer.param_groups:
            group["lr"] = group["lr_scale"] * learning_rate_at(step, config)
        inputs, targets = random_windows(train_data, config.batch_size, config.train_length,
                                         batches)
        logits = model(inputs)  # [batch, length, 256]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        running, count = running + loss.item(), count + 1
        if count == config.log_every or step == config.steps - 1:
            history["step"].append(step + 1)
            history["loss"].append(running / count)
            history["load_average"].append(os.getloadavg()[0])
            bar.set_postfix(loss=f"{running / count:.3f}")
            running, count = 0.0, 0
    bar.close()
    history["train_time_s"] = time.perf_counter() - start
    model.eval()
    return model, history


@torch.no_grad()
def per_position_loss(model: TinyLM, inputs: torch.Tensor, targets: torch.Tensor,
                      batch_size: int = 16) -> np.ndarray:
    """Cross-entropy (nats) at each position, averaged over windows.

    Shape: ``inputs``/``targets`` int64 ``[windows, length]``; returns float64 ``[length]``.
    """
    total = torch.zeros(inputs.shape[1], dtype=torch.float64)
    for i in range(0, inputs.shape[0], batch_size):
        logits = model(inputs[i:i + batch_size])  # [b, length, vocab]
        loss = F.cross_entropy(logits.transpose(1, 2), targets[i:i + batch_size],
                               reduction="none")  # [b, length]
        total += loss.double().sum(0)
    return to_numpy(total / inputs.shape[0])


def rope_pi_frequencies(config: ExtrapolationConfig, eval_length: int) -> np.ndarray:
    """Position Interpolation for ``eval_length`` (:func:`posenc.nn.rotary.pi_frequencies`
    for the config's head size and training length). Shape ``[head_dim // 2]``."""
    return pi_frequencies(config.d_model // config.num_heads, config.base,
                          config.train_length, eval_length)


def _evaluate_variant(variant: str, model: TinyLM, config: ExtrapolationConfig,
                      heldout: np.ndarray) -> dict:
    """Loss at every evaluation length and the per-position curve at the longest defined
    length. The loss is ``None`` where a trained method that registered an
    ``undefined_note`` cannot run (its model raises ``ValueError``, as a learned table
    does past its last row). A derived variant evaluates the model its registered
    ``adapt`` returns for each length."""
    adapt = _variants()[variant][1].adapt if variant in DERIVED_VARIANTS else None
    may_be_undefined = adapt is None and bool(POSITIONS[variant].undefined_note)
    start = time.perf_counter()
    losses, curve = [], None
    for length in config.eval_lengths:
        evaluated = model if adapt is None else adapt(model, config.train_length, length)
        inputs, targets = contiguous_windows(heldout, length, config.eval_tokens)
        try:
            values = per_position_loss(evaluated, inputs, targets, config.eval_batch_size)
        except ValueError:
            if not may_be_undefined:
                raise
            losses.append(None)  # not defined at this length
            continue
        curve = values
        losses.append(float(curve.mean()))
    return {"loss": losses, "per_position_loss": curve, "eval_time_s":
            time.perf_counter() - start}


def _rounded(values, digits: int = 4):
    return [None if v is None else round(float(v), digits) for v in values]


def run_experiment(config: ExtrapolationConfig = PRESETS["full"], *, threads: int | None = 1,
                   progress: bool = True, corpus=None) -> dict:
    """Train every encoding in ``config`` and evaluate every variant; return the results.

    ``threads`` sets ``torch.set_num_threads`` (``None`` leaves it). The dict is what
    ``main`` writes as JSON: ``config`` (``config.to_dict()``), ``config_hash``,
    ``corpus`` (files, sizes, SHA-256), ``eval_lengths``, ``runtime`` (threads,
    versions, wall time, load average) and ``variants``: per variant its ``label``,
    ``trained_encoding``, ``loss`` per evaluation length (nats per byte, ``null`` = not
    defined), ``per_position_loss`` (at the longest defined length), and for trained
    encodings the training-loss ``history`` and ``num_parameters``.
    """
    if threads is not None:
        torch.set_num_threads(check_int("threads", threads))
    wall_start = time.perf_counter()
    load_start = os.getloadavg()
    code_hash = _code_hash()  # of the code as it starts
    corpus = load_stdlib_corpus() if corpus is None else corpus
    heldout = corpus.heldout
    if len(heldout) < config.eval_tokens + 1:
        raise ValueError(f"eval_tokens={config.eval_tokens} needs {config.eval_tokens + 1} "
                         f"held-out bytes; the corpus has {len(heldout)}")
    variants = {}
    for encoding in config.encodings:
        model, history = train_model(config, encoding, corpus.train, progress=progress)
        method = POSITIONS[encoding]
        for variant in (encoding, *(v.name for v in method.variants)):
            result = _evaluate_variant(variant, model, config, heldout)
            entry = {
                "label": VARIANT_LABELS[variant],
                "trained_encoding": encoding,
                "loss": _rounded(result["loss"], 5),
                "per_position_loss": _rounded(result["per_position_loss"]),
                "eval_time_s": round(result["eval_time_s"], 2),
            }
            if variant == encoding:
                entry["num_parameters"] = model.num_parameters()
                entry["train_time_s"] = round(history["train_time_s"], 2)
                entry["history"] = {"step": history["step"],
                                    "loss": _rounded(history["loss"]),
                                    "load_average": _rounded(history["load_average"], 2)}
            table = t5_bias_table(model)
            if variant == encoding and table is not None:
                entry["t5_bias"] = [_rounded(row, 4) for row in table]
            if variant == encoding and None in result["loss"]:
                entry["not_defined"] = method.undefined_note.format(
                    train_length=config.train_length)
            if variant in DERIVED_VARIANTS and _variants()[variant][1].note:
                entry["note"] = _variants()[variant][1].note
            variants[variant] = entry
    loads = [v for e in variants.values() for v in e.get("history", {}).get("load_average", [])]
    return {
        "experiment": "train short, test long (Press et al., 2022 protocol, scaled down)",
        "command": "python -m posenc.experiments.extrapolation",
        "config": config.to_dict(),
        "config_hash": config_hash(config),
        "code_hash": code_hash,
        "corpus": corpus.info,
        "train_length": config.train_length,
        "eval_lengths": list(config.eval_lengths),
        "loss_unit": "nats per byte (cross-entropy of the next byte)",
        "runtime": {
            "threads": torch.get_num_threads(),
            "wall_time_s": round(time.perf_counter() - wall_start, 1),
            "load_average_start": _rounded(load_start, 2),
            "load_average_end": _rounded(os.getloadavg(), 2),
            "load_average_during_training_mean": round(float(np.mean(loads)), 2)
            if loads else None,
            "cpu_count": os.cpu_count(),
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "numpy": np.__version__,
            "platform": platform.platform(),
        },
        "variants": variants,
    }


def summary_rows(results: dict) -> list[tuple]:
    """``(label, loss at each eval length...)`` per variant, ``None`` where undefined."""
    return [(v["label"], *v["loss"]) for v in results["variants"].values()]


def format_summary(results: dict) -> str:
    """A plain-text table of loss (nats/byte) per variant and evaluation length."""
    lengths = results["eval_lengths"]
    train = results["train_length"]
    head = f"{'variant':<24}" + "".join(f"{f'{n // train}x = {n}':>14}" for n in lengths)
    lines = [head, "-" * len(head)]
    for label, *losses in summary_rows(results):
        cells = "".join(f"{'not defined' if x is None else f'{x:.4f}':>14}" for x in losses)
        lines.append(f"{label:<24}{cells}")
    return "\n".join(lines)


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


def t5_bias_by_distance(results: dict, variant: str = "t5", max_distance: int | None = None):
    """The learned T5 bias as a function of distance ``i - j`` for every head.

    Returns ``(distances, bias)`` with ``distances`` ``[0 .. max_distance]`` (default: the
    longest evaluation length minus one) and ``bias`` ``[num_heads, len(distances)]``,
    looked up through :func:`posenc.relative.t5_relative_bucket` (causal buckets).
    """
    config = results["config"]
    table = np.asarray(results["variants"][variant]["t5_bias"])  # [buckets, heads]
    max_distance = results["eval_lengths"][-1] - 1 if max_distance is None else max_distance
    distances = np.arange(max_distance + 1)
    buckets = t5_relative_bucket(-distances, bidirectional=False,
                                 num_buckets=config["t5_num_buckets"],
                                 max_distance=config["t5_max_distance"])
    return distances, table[buckets].T
