"""Train short, test long: length extrapolation of position encodings on a laptop CPU.

The protocol of Press, Smith & Lewis (ALiBi, ICLR 2022), scaled down: train one tiny
byte-level language model (:class:`posenc.model.TinyLM`) per position encoding, all with
the same data order, steps and seed, on sequences of ``train_length`` bytes of Python
standard-library source (:mod:`posenc.data`); then, without further training, measure
the held-out loss at every position of sequences ``1x, 2x, 4x, 8x`` as long. Two
evaluation-time variants reuse trained weights:

* ``rope_pi``: the RoPE model with Position Interpolation (Chen et al., 2023): all
  frequencies divided by ``s = L_eval / L_train`` (``posenc.scaling``, ``method="linear"``),
  so every position maps back into the trained range.
* ``learned_interp``: the learned-table model with its table linearly stretched to
  ``L_eval`` rows. The plain ``learned`` model is *not defined* past ``train_length``
  (there is no row to look up): its entries there are ``null``.

Run it (the full configuration takes minutes; see the chapter for timings)::

    python -m posenc.experiments.extrapolation \
        --output src/posenc/results/extrapolation_results.json

``--preset small`` is the configuration the chapter runs live; every field can be
overridden (``--help``). The same command on the same machine gives the same numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import platform
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .._validation import check_choice, check_float, check_int
from ..data import contiguous_windows, load_stdlib_corpus, random_windows
from ..model import TinyLM, TinyLMConfig
from ..nn import POSITION_METHODS, T5RelativeBias
from ..scaling import rope_scaling_frequencies

__all__ = [
    "ENCODINGS",
    "DERIVED_VARIANTS",
    "VARIANT_LABELS",
    "ExtrapolationConfig",
    "PRESETS",
    "config_hash",
    "learning_rate_at",
    "train_model",
    "t5_bias_table",
    "per_position_loss",
    "rope_pi_frequencies",
    "run_experiment",
    "summary_rows",
    "format_summary",
    "PUBLISHED_WIKITEXT103",
    "binned_mean",
    "plot_loss_by_position",
    "plot_loss_by_length",
    "plot_training_curves",
    "t5_bias_by_distance",
    "variant_color",
    "main",
]

#: The encodings trained by default: those of the ALiBi paper's comparison plus NoPE and learned.
ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")

#: Evaluation-time variants: name -> the trained encoding whose weights they reuse.
DERIVED_VARIANTS = {"learned_interp": "learned", "rope_pi": "rope"}

VARIANT_LABELS = {
    "none": "NoPE", "sinusoidal": "sinusoidal", "learned": "learned",
    "learned_interp": "learned + interpolation", "rope": "RoPE",
    "rope_pi": "RoPE + PI", "alibi": "ALiBi", "t5": "T5 bias", "shaw": "Shaw",
}

_SOURCE_FILES = ("model.py", "data.py", "experiments/extrapolation.py", "nn/attention.py",
                 "nn/absolute.py", "nn/bias.py", "nn/rotary.py", "nn/shaw.py", "rope.py",
                 "alibi.py", "relative.py", "sinusoidal.py", "scaling.py")


@dataclass(frozen=True)
class ExtrapolationConfig:
    """Everything that decides the numbers (threads and output path do not).

    Model: ``d_model``, ``num_heads``, ``num_layers``, ``d_ff``, ``base``; T5's buckets
    ``t5_num_buckets`` / ``t5_max_distance`` (the defaults put ``max_distance`` at
    ``train_length``, so every bucket is trained, as in the paper where 128 < 512);
    ``t5_bias_lr_scale`` multiplies the learning rate of the T5 bias table (a learned bias
    must grow to several units to act like a recency penalty, and Adam moves a parameter
    by about one learning rate per step: at the shared rate 1000 steps cannot get there).
    Training: ``steps`` AdamW steps of ``batch_size`` random windows of
    ``train_length`` bytes, learning rate warmed up linearly for ``warmup_steps`` then
    cosine-decayed to ``min_lr_ratio`` times the peak; gradients clipped to ``grad_clip``.
    Evaluation: the first ``eval_tokens`` held-out bytes, split into non-overlapping
    windows of ``m * train_length`` for each ``m`` in ``eval_multipliers``.
    """

    encodings: tuple[str, ...] = ENCODINGS
    train_length: int = 128
    eval_multipliers: tuple[int, ...] = (1, 2, 4, 8)
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 4
    d_ff: int = 256
    base: float = 10000.0
    t5_num_buckets: int = 32
    t5_max_distance: int = 128
    t5_bias_lr_scale: float = 10.0
    steps: int = 1000
    batch_size: int = 16
    learning_rate: float = 2e-3
    warmup_steps: int = 50
    min_lr_ratio: float = 0.1
    grad_clip: float = 1.0
    eval_tokens: int = 65536
    eval_batch_size: int = 16
    seed: int = 0
    log_every: int = 25

    def __post_init__(self):
        object.__setattr__(self, "encodings", tuple(self.encodings))
        object.__setattr__(self, "eval_multipliers", tuple(self.eval_multipliers))
        if not self.encodings or len(set(self.encodings)) != len(self.encodings):
            raise ValueError(f"encodings must be a non-empty list without repeats, "
                             f"got {self.encodings}")
        for encoding in self.encodings:
            check_choice("encodings", encoding, POSITION_METHODS)
        mults = self.eval_multipliers
        if (not mults or mults[0] != 1 or list(mults) != sorted(set(mults))
                or not all(isinstance(m, int) and not isinstance(m, bool) for m in mults)):
            raise ValueError(f"eval_multipliers must be increasing integers starting at 1, "
                             f"got {mults}")
        for name in ("train_length", "steps", "batch_size", "eval_tokens", "eval_batch_size",
                     "log_every"):
            check_int(name, getattr(self, name))
        check_int("warmup_steps", self.warmup_steps, minimum=0)
        check_int("seed", self.seed, minimum=0)
        check_float("learning_rate", self.learning_rate, greater_than=0.0)
        check_float("min_lr_ratio", self.min_lr_ratio, at_least=0.0)
        check_float("grad_clip", self.grad_clip, greater_than=0.0)
        check_float("t5_bias_lr_scale", self.t5_bias_lr_scale, greater_than=0.0)
        if self.eval_tokens % self.max_eval_length:
            raise ValueError(f"eval_tokens ({self.eval_tokens}) must be a multiple of the "
                             f"longest evaluation length ({self.max_eval_length})")
        self.model_config("none")  # validate the model fields now

    @property
    def eval_lengths(self) -> tuple[int, ...]:
        return tuple(m * self.train_length for m in self.eval_multipliers)

    @property
    def max_eval_length(self) -> int:
        return self.train_length * self.eval_multipliers[-1]

    @property
    def variants(self) -> tuple[str, ...]:
        """Trained encodings, each followed by the evaluation-time variants derived from it."""
        out = []
        for encoding in self.encodings:
            out.append(encoding)
            out += [d for d, src in DERIVED_VARIANTS.items() if src == encoding]
        return tuple(out)

    def model_config(self, position: str) -> TinyLMConfig:
        """The :class:`TinyLMConfig` trained for ``position``."""
        return TinyLMConfig(
            vocab_size=256, d_model=self.d_model, num_heads=self.num_heads,
            num_layers=self.num_layers, d_ff=self.d_ff, position=position,
            max_positions=self.train_length, base=self.base,
            t5_num_buckets=self.t5_num_buckets, t5_max_distance=self.t5_max_distance)

    def to_dict(self) -> dict:
        """JSON-ready: tuples become lists."""
        return {k: list(v) if isinstance(v, tuple) else v
                for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_dict(cls, values: dict) -> ExtrapolationConfig:
        return cls(**values)


#: ``full``: the committed results (minutes). ``small``: the chapter's live run (seconds).
PRESETS = {
    "full": ExtrapolationConfig(),
    "small": ExtrapolationConfig(
        encodings=("sinusoidal", "rope", "alibi"), train_length=32, d_model=32, num_heads=4,
        num_layers=2, d_ff=128, t5_num_buckets=16, t5_max_distance=32, steps=200,
        batch_size=16, learning_rate=5e-3, warmup_steps=20, eval_tokens=8192, log_every=10),
}


def config_hash(config: ExtrapolationConfig) -> str:
    """SHA-256 of the config's canonical JSON: equal hashes, equal configurations."""
    text = json.dumps(config.to_dict(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _code_hash() -> str:
    """SHA-256 over the source files that decide the numbers (for the record only)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in _SOURCE_FILES:
        path = root / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
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
    return encoding.embedding.weight.detach().double().numpy().copy()


def train_model(config: ExtrapolationConfig, position: str, train_data: np.ndarray, *,
                progress: bool = True) -> tuple[TinyLM, dict]:
    """Train one :class:`TinyLM` with ``position`` at ``config.train_length``.

    Every encoding gets the same initial seed and the same batches (a generator seeded
    with ``config.seed``). Returns the model (in eval mode) and a history dict with the
    mean training loss over each ``log_every`` steps, the time taken and the 1-minute
    load average seen while training.
    """
    from tqdm.auto import tqdm

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
    return (total / inputs.shape[0]).numpy()


def rope_pi_frequencies(config: ExtrapolationConfig, eval_length: int) -> np.ndarray:
    """Position Interpolation for ``eval_length``: ``theta_i / s`` with ``s = L_eval / L_train``.

    From :func:`posenc.scaling.rope_scaling_frequencies` (``method="linear"``); ``s = 1``
    (no change) at or below the training length. Shape ``[head_dim // 2]``.
    """
    factor = max(eval_length / config.train_length, 1.0)
    inv_freq, attention_factor = rope_scaling_frequencies(
        "linear", config.d_model // config.num_heads, base=config.base, factor=factor,
        original_max_position_embeddings=config.train_length, seq_len=eval_length)
    assert attention_factor == 1.0  # PI rescales nothing else
    return inv_freq


def _evaluate_variant(variant: str, model: TinyLM, config: ExtrapolationConfig,
                      heldout: np.ndarray) -> dict:
    """Loss at every evaluation length (``None`` where undefined) and the per-position
    curve at the longest defined length."""
    start = time.perf_counter()
    losses, curve = [], None
    if variant == "learned_interp":
        model_config = dataclasses.replace(model.config, interpolate="linear")
        stretched = TinyLM(model_config)
        stretched.load_state_dict(model.state_dict())
        model = stretched.eval()
    for length in config.eval_lengths:
        if variant == "learned" and length > config.train_length:
            losses.append(None)  # not defined: no table row past train_length
            continue
        if variant == "rope_pi":
            model.set_rope_frequencies(rope_pi_frequencies(config, length))
        inputs, targets = contiguous_windows(heldout, length, config.eval_tokens)
        curve = per_position_loss(model, inputs, targets, config.eval_batch_size)
        losses.append(float(curve.mean()))
    if variant == "rope_pi":
        model.set_rope_frequencies(None)
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
        derived = [d for d, src in DERIVED_VARIANTS.items() if src == encoding]
        for variant in [encoding, *derived]:
            result = _evaluate_variant(variant, model, config, heldout)
            entry = {
                "label": VARIANT_LABELS.get(variant, variant),
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
            if variant == "learned":
                entry["not_defined"] = (f"no learned row for positions >= "
                                        f"{config.train_length}: loss is null past 1x")
            if variant == "rope_pi":
                entry["note"] = ("RoPE weights, frequencies / (L_eval / L_train) at "
                                 "evaluation (Position Interpolation, no fine-tuning)")
            if variant == "learned_interp":
                entry["note"] = ("learned weights, table linearly stretched to L_eval rows "
                                 "at evaluation (no fine-tuning)")
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


# --- reading the results (used by the chapter) ----------------------------------------------

#: ALiBi paper, WikiText-103 validation perplexity (see /work/shared/reference-facts.md):
#: ``(L_train, L_eval) -> {encoding: perplexity}``; a third-party transcription of the
#: appendix tables. Word-level perplexity of 247M-parameter models: compare shapes, not values.
PUBLISHED_WIKITEXT103 = {
    (512, 512): {"sinusoidal": 20.05, "rope": 20.07, "t5": 19.65, "alibi": 19.73},
    (512, 1012): {"sinusoidal": 43.54, "rope": 21.37, "t5": 18.79, "alibi": 18.73},
    (512, 2512): {"sinusoidal": 132.41, "rope": 31.58, "t5": 20.41, "alibi": 18.41},
    (1024, 2024): {"sinusoidal": 51.09, "rope": 31.17, "t5": 18.34, "alibi": 18.05},
}

#: Line style per variant: derived variants share their source's colour, dashed.
LINESTYLES = {"learned_interp": "--", "rope_pi": "--"}


def variant_color(variant: str) -> str:
    """The course colour of a variant (that of the encoding it was trained with)."""
    from ..figures.style import METHOD_COLORS

    return METHOD_COLORS[DERIVED_VARIANTS.get(variant, variant)]


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


def plot_loss_by_position(ax, results: dict, variants=None, *, bin_size: int = 16,
                          highlight: str | None = None) -> None:
    """Held-out loss against position in the longest evaluation windows, one line per
    variant (binned by ``bin_size``), the training length marked. ``highlight`` draws one
    variant bold and the others faint."""
    variants = list(results["variants"]) if variants is None else list(variants)
    train = results["train_length"]
    for variant in variants:
        entry = results["variants"][variant]
        x, y = binned_mean(entry["per_position_loss"], bin_size)
        faint = highlight is not None and variant != highlight
        ax.plot(x, y, color=variant_color(variant), ls=LINESTYLES.get(variant, "-"),
                lw=2.4 if variant == highlight else 1.5, alpha=0.25 if faint else 1.0,
                label=entry["label"], zorder=3 if variant == highlight else 2)
    ax.axvline(train, color="#555555", ls=":", lw=1.2)
    ax.text(train, 0.98, " $L_{train}$", transform=ax.get_xaxis_transform(), va="top",
            fontsize=9, color="#555555")
    ax.set_xlabel(f"position in a window of {results['eval_lengths'][-1]} bytes")
    ax.set_ylabel("loss (nats / byte)")


def plot_loss_by_length(ax, results: dict, variants=None) -> None:
    """Mean held-out loss against evaluation length (ALiBi paper, Figure 1 style)."""
    variants = list(results["variants"]) if variants is None else list(variants)
    lengths = np.asarray(results["eval_lengths"])
    for variant in variants:
        entry = results["variants"][variant]
        y = np.array([np.nan if v is None else v for v in entry["loss"]])
        ax.plot(lengths, y, marker="o", ms=4, color=variant_color(variant),
                ls=LINESTYLES.get(variant, "-"), label=entry["label"])
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.minorticks_off()
    ax.axvline(results["train_length"], color="#555555", ls=":", lw=1.2)
    ax.set_xlabel("evaluation length $L_{eval}$ (bytes)")
    ax.set_ylabel("mean loss (nats / byte)")


def t5_bias_by_distance(results: dict, variant: str = "t5", max_distance: int | None = None):
    """The learned T5 bias as a function of distance ``i - j`` for every head.

    Returns ``(distances, bias)`` with ``distances`` ``[0 .. max_distance]`` (default: the
    longest evaluation length minus one) and ``bias`` ``[num_heads, len(distances)]``,
    looked up through :func:`posenc.relative.t5_relative_bucket` (causal buckets).
    """
    from ..relative import t5_relative_bucket

    config = results["config"]
    table = np.asarray(results["variants"][variant]["t5_bias"])  # [buckets, heads]
    max_distance = results["eval_lengths"][-1] - 1 if max_distance is None else max_distance
    distances = np.arange(max_distance + 1)
    buckets = t5_relative_bucket(-distances, bidirectional=False,
                                 num_buckets=config["t5_num_buckets"],
                                 max_distance=config["t5_max_distance"])
    return distances, table[buckets].T


def plot_training_curves(ax, results: dict) -> None:
    """Training loss (mean over each logging interval) against step, per trained encoding."""
    for variant, entry in results["variants"].items():
        if "history" in entry:
            ax.plot(entry["history"]["step"], entry["history"]["loss"],
                    color=variant_color(variant), label=entry["label"], lw=1.3)
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (nats / byte)")


def _as_text(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


def _comma_list(kind):
    def convert(text: str) -> tuple:
        return tuple(kind(item) for item in text.split(","))
    return convert


def _parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m posenc.experiments.extrapolation",
        description="Train a tiny byte-level LM per position encoding at one length and "
                    "evaluate it at 1x..8x that length (Press et al., 2022, scaled down).")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full",
                        help="starting configuration (default: full); options below override it")
    helps = {"encodings": f"comma-separated subset of {','.join(POSITION_METHODS)}",
             "eval_multipliers": "comma-separated, increasing, starting at 1 (e.g. 1,2,4,8)",
             "train_length": "training length L_train in bytes",
             "steps": "training steps per encoding", "batch_size": "windows per step",
             "eval_tokens": "held-out bytes evaluated at each length"}
    for field in dataclasses.fields(ExtrapolationConfig):
        default = getattr(PRESETS["full"], field.name)
        convert = _comma_list(type(default[0])) if isinstance(default, tuple) else type(default)
        parser.add_argument("--" + field.name.replace("_", "-"), type=convert,
                            help=f"{helps.get(field.name, field.name.replace('_', ' '))} "
                                 f"(full: {_as_text(default)})")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads (default 1: for models this small a "
                             "second thread gains little and, on a busy CPU, costs a lot)")
    parser.add_argument("--output", default="extrapolation_results.json",
                        help="where to write the results JSON")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = _parse_args(argv)
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(ExtrapolationConfig)
                 if getattr(args, f.name, None) is not None}
    config = dataclasses.replace(PRESETS[args.preset], **overrides)
    results = run_experiment(config, threads=args.threads, progress=not args.no_progress)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=1) + "\n")
    print(format_summary(results))
    print(f"\nwall time {results['runtime']['wall_time_s']:.0f} s on "
          f"{results['runtime']['threads']} threads; wrote {output}")
    return results


if __name__ == "__main__":
    main()
