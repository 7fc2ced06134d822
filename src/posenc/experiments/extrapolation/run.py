"""Training and evaluation: one tiny LM per position method, evaluated at 1x..8x.

See :mod:`posenc.experiments.extrapolation` for the protocol; the configuration is in
:mod:`.config` and the command line in :mod:`.__main__`.
"""

from __future__ import annotations

import concurrent.futures
import copy
import hashlib
import importlib
import importlib.util
import math
import multiprocessing
import os
import platform
import random
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ... import retrieval
from ..._validation import check_int, to_numpy
from ...data import contiguous_windows, load_stdlib_corpus, random_windows
from ...model import TinyLM
from ...nn import POSITIONS, T5RelativeBias
from ...scaling import rope_scaling_frequencies
from .config import (
    PRESETS,
    ExtrapolationConfig,
    config_hash,
    finetune_variant,
    nope_variant,
    variant_label,
)

__all__ = [
    "seed_everything",
    "learning_rate_at",
    "train_model",
    "t5_bias_table",
    "per_position_loss",
    "scaled_rope_frequencies",
    "finetune_rope",
    "retrieval_accuracy",
    "run_experiment",
    "format_summary",
]

def _progress(iterable, *, total: int, desc: str, enabled: bool):
    """``iterable`` with a progress bar on stderr when ``enabled`` (``set_postfix`` and
    ``close`` as tqdm's): tqdm's if it is installed (it is optional), else a plain line."""
    if enabled:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            pass
        else:
            return tqdm(iterable, total=total, desc=desc, file=sys.stderr, mininterval=0.5,
                        leave=True)
    return _PlainProgress(iterable, total, desc, enabled)


class _PlainProgress:
    """A progress line on stderr, rewritten at most twice a second (no tqdm needed)."""

    def __init__(self, iterable, total: int, desc: str, enabled: bool):
        self.iterable, self.total, self.desc, self.enabled = iterable, total, desc, enabled
        self.postfix, self.done, self.last = "", 0, 0.0

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.done += 1
            if self.enabled and time.perf_counter() - self.last > 0.5:
                self._write()

    def set_postfix(self, **values):
        self.postfix = ", ".join(f"{k}={v}" for k, v in values.items())

    def _write(self, end: str = ""):
        self.last = time.perf_counter()
        postfix = f" [{self.postfix}]" if self.postfix else ""
        sys.stderr.write(f"\r{self.desc}: {self.done}/{self.total}{postfix}{end}")
        sys.stderr.flush()

    def close(self):
        if self.enabled:
            self._write("\n")


def _code_hash() -> str:
    """SHA-256 over the source of every ``posenc`` module this process has imported (the
    code that can decide the numbers; for the record only), in module-name order."""
    root = Path(__file__).resolve().parents[2]  # the posenc package
    digest = hashlib.sha256()
    for name in sorted(sys.modules):
        path = getattr(sys.modules[name], "__file__", None)
        if (name == "posenc" or name.startswith("posenc.")) and path:
            path = Path(path)
            if path.suffix == ".py" and path.is_file():
                digest.update(str(path.resolve().relative_to(root)).encode() + b"\0"
                              + path.read_bytes())
    return digest.hexdigest()


def import_registration(module: str):
    """Import ``module``, a module name (``my_positions``) or the path of a ``.py`` file,
    for the position methods it registers; returns the module."""
    if not isinstance(module, str) or not module:
        raise TypeError(f"register: expected a module name or a .py path, got {module!r}")
    if module.endswith(".py") or os.sep in module or "/" in module:
        path = Path(module).resolve()
        if not path.is_file():
            raise ValueError(f"register: no file {module!r}")
        name = path.stem
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) == str(path):
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
        return loaded
    return importlib.import_module(module)


def registration_record(modules) -> list[dict]:
    """``[{"module", "sha256"}]``: each ``--register`` module and the SHA-256 of its source."""
    record = []
    for module in modules:
        path = getattr(import_registration(module), "__file__", None)
        source = Path(path).read_bytes() if path else b""
        record.append({"module": module, "sha256": hashlib.sha256(source).hexdigest()})
    return record


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


def _train_steps(model: TinyLM, optimizer, config: ExtrapolationConfig, *, steps: int,
                 length: int, batch_size: int, retrieval_batch_size: int, lr_at, train_data,
                 seed: int, desc: str, progress: bool) -> dict:
    """The training loop: AdamW steps on text windows (plus retrieval sequences when
    ``retrieval_batch_size`` > 0), learning rate ``lr_at(step)`` times each group's scale.

    Batches come from generators seeded with ``seed`` only, so every method sees the same
    text and the same retrieval sequences. Returns the history dict of :func:`train_model`.
    """
    batches = torch.Generator().manual_seed(seed)
    sequences = np.random.default_rng([seed, 1])  # retrieval: its own stream, drawn only if used
    history = {"step": [], "loss": [], "load_average": []}
    if retrieval_batch_size:
        history["retrieval_loss"] = []
    running, running_retrieval, count = 0.0, 0.0, 0
    start = time.perf_counter()
    model.train()
    bar = _progress(range(steps), total=steps, desc=f"{desc:>10}", enabled=progress)
    for step in bar:
        for group in optimizer.param_groups:
            group["lr"] = group["lr_scale"] * lr_at(step)
        inputs, targets = random_windows(train_data, batch_size, length, batches)
        logits = model(inputs)  # [batch, length, 256]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        total = loss
        if retrieval_batch_size:
            task = retrieval.training_batch(
                train_data, retrieval_batch_size, length, sequences,
                num_pairs=config.retrieval_pairs, num_queries=config.retrieval_queries)
            logits = model(task.inputs)  # [retrieval batch, length, 256]
            answer_loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                          task.targets.reshape(-1))  # answers only
            total = loss + config.retrieval_weight * answer_loss
            running_retrieval += answer_loss.item()
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        running, count = running + loss.item(), count + 1
        if count == config.log_every or step == steps - 1:
            history["step"].append(step + 1)
            history["loss"].append(running / count)
            if retrieval_batch_size:
                history["retrieval_loss"].append(running_retrieval / count)
            history["load_average"].append(os.getloadavg()[0])
            bar.set_postfix(loss=f"{running / count:.3f}")
            running, running_retrieval, count = 0.0, 0.0, 0
    bar.close()
    history["train_time_s"] = time.perf_counter() - start
    model.eval()
    return history


def _optimizer(model: TinyLM, config: ExtrapolationConfig):
    return torch.optim.AdamW(_parameter_groups(model, config), lr=config.learning_rate,
                             betas=(0.9, 0.95), weight_decay=0.0)


def train_model(config: ExtrapolationConfig, position: str, train_data: np.ndarray, *,
                progress: bool = True, seed: int | None = None,
                nope: bool = False) -> tuple[TinyLM, dict]:
    """Train one :class:`TinyLM` with ``position`` at ``config.train_length``.

    Every encoding gets the same initial seed and the same batches (generators seeded
    with ``seed``, default ``config.seed``); ``nope=True`` trains the model with NoPE
    layers (``config.nope_every``). Returns the model (in eval mode) and a history dict
    with the mean training loss over each ``log_every`` steps (and the retrieval loss,
    when the config trains retrieval), the time taken and the 1-minute load average seen
    while training.
    """
    seed = config.seed if seed is None else check_int("seed", seed, minimum=0)
    seed_everything(seed)
    model = TinyLM(config.model_config(position, nope=nope))
    history = _train_steps(
        model, _optimizer(model, config), config, steps=config.steps,
        length=config.train_length, batch_size=config.batch_size,
        retrieval_batch_size=config.retrieval_batch_size,
        lr_at=lambda step: learning_rate_at(step, config), train_data=train_data, seed=seed,
        desc=nope_variant(position) if nope else position, progress=progress)
    return model, history


def scaled_rope_frequencies(config: ExtrapolationConfig, scaling: str,
                            factor: float) -> tuple[np.ndarray, float]:
    """``(frequencies [head_dim // 2], attention factor)`` of ``scaling`` ("none" or a
    :func:`posenc.scaling.rope_scaling_frequencies` method) by ``factor`` for the
    config's head size, base and training length."""
    method = "default" if scaling == "none" else scaling
    return rope_scaling_frequencies(method, config.d_model // config.num_heads,
                                    base=config.base, factor=factor,
                                    original_max_position_embeddings=config.train_length)


def finetune_rope(model: TinyLM, config: ExtrapolationConfig, scaling: str,
                  train_data: np.ndarray, *, seed: int | None = None,
                  progress: bool = True) -> tuple[TinyLM, dict]:
    """Extend a trained RoPE model to ``finetune_multiplier * train_length``: a copy with
    the scaling's frequencies (and attention factor) by that factor, fine-tuned for
    ``finetune_steps`` steps at the longer length.

    Same bytes per step as training (batch sizes divided by the multiplier); a fresh
    AdamW; learning rate warmed up over a tenth of the steps to ``finetune_lr_ratio``
    times the peak, then cosine-decayed as in training. The copy keeps the scaling.
    """
    seed = config.seed if seed is None else check_int("seed", seed, minimum=0)
    factor = config.finetune_multiplier
    tuned = copy.deepcopy(model)
    tuned.set_rope_frequencies(*scaled_rope_frequencies(config, scaling, factor))
    seed_everything(seed)
    schedule = config.replace(steps=config.finetune_steps,
                              warmup_steps=max(config.finetune_steps // 10, 1),
                              learning_rate=config.learning_rate * config.finetune_lr_ratio)
    history = _train_steps(
        tuned, _optimizer(tuned, config), config, steps=config.finetune_steps,
        length=config.train_length * factor, batch_size=config.batch_size // factor,
        retrieval_batch_size=config.retrieval_batch_size // factor,
        lr_at=lambda step: learning_rate_at(step, schedule), train_data=train_data,
        seed=seed + 1000, desc=finetune_variant(scaling), progress=progress)
    return tuned, history


@torch.no_grad()
def retrieval_accuracy(model: TinyLM, config: ExtrapolationConfig, text: np.ndarray,
                       length: int) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy of the retrieval task at ``length``, per answer distance.

    ``config.retrieval_distances`` distances spread over the length
    (:func:`posenc.retrieval.evaluation_distances`), ``retrieval_per_distance`` sequences
    each, drawn from ``text`` with the seed ``length`` (the same sequences for every
    method and seed). A sequence counts as right when the most likely next byte after
    the query is the value. Returns ``(distances, accuracy)``, both ``[distances]``.
    """
    distances = retrieval.evaluation_distances(length, config.retrieval_distances)
    batch = retrieval.evaluation_batch(text, length, distances, config.retrieval_per_distance,
                                       seed=length, num_pairs=config.retrieval_pairs)
    right = []
    for i in range(0, batch.inputs.shape[0], config.eval_batch_size):
        logits = model(batch.inputs[i:i + config.eval_batch_size])[:, -1]  # [b, 256]
        right.append(logits.argmax(-1) == batch.targets[i:i + config.eval_batch_size, -1])
    accuracy = torch.cat(right).double().view(len(distances), -1).mean(1)  # [distances]
    return distances, to_numpy(accuracy)


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


def _evaluate(model: TinyLM, config: ExtrapolationConfig, heldout: np.ndarray, *,
              adapt=None, may_be_undefined: bool = False) -> dict:
    """Loss at every evaluation length, the per-position curve at the longest defined
    length and, when the config has the retrieval task, its accuracy per length and
    distance. Entries are ``None`` where a method that registered an ``undefined_note``
    cannot run (its model raises ``ValueError``, as a learned table does past its last
    row). ``adapt(model, train_length, eval_length)`` (a registered evaluation-time
    variant) gives the model evaluated at each length."""
    start = time.perf_counter()
    losses, curve, accuracy, distances = [], None, [], []
    for length in config.eval_lengths:
        evaluated = model if adapt is None else adapt(model, config.train_length, length)
        inputs, targets = contiguous_windows(heldout, length, config.eval_tokens)
        try:
            values = per_position_loss(evaluated, inputs, targets, config.eval_batch_size)
        except ValueError:
            if not may_be_undefined:
                raise
            losses.append(None)  # not defined at this length
            accuracy.append(None)
            distances.append(None)
            continue
        curve = values
        losses.append(float(curve.mean()))
        if config.retrieval:
            at, right = retrieval_accuracy(evaluated, config, heldout, length)
            distances.append(at.tolist())
            accuracy.append(right)
    result = {"loss": losses, "per_position_loss": curve}
    if config.retrieval:
        result["retrieval_distances"] = distances
        result["retrieval_by_distance"] = accuracy
        result["retrieval_accuracy"] = [None if a is None else float(np.mean(a))
                                        for a in accuracy]
    result["eval_time_s"] = time.perf_counter() - start
    return result


def _rounded(values, digits: int = 4):
    return [None if v is None else round(float(v), digits) for v in values]


def _entry(variant: str, source: str, config: ExtrapolationConfig, result: dict) -> dict:
    """The JSON entry of one evaluated variant (one seed)."""
    entry = {"label": variant_label(variant, config), "trained_encoding": source,
             "loss": _rounded(result["loss"], 5),
             "per_position_loss": _rounded(result["per_position_loss"]),
             "eval_time_s": round(result["eval_time_s"], 2)}
    if config.retrieval:
        entry["retrieval_accuracy"] = _rounded(result["retrieval_accuracy"])
        entry["retrieval_distances"] = result["retrieval_distances"]
        entry["retrieval_by_distance"] = [None if a is None else _rounded(a)
                                          for a in result["retrieval_by_distance"]]
    return entry


def _with_history(entry: dict, model: TinyLM, history: dict) -> dict:
    entry["num_parameters"] = model.num_parameters()
    entry["train_time_s"] = round(history["train_time_s"], 2)
    entry["history"] = {k: (_rounded(v, 2) if k == "load_average" else
                            v if k == "step" else _rounded(v))
                        for k, v in history.items() if k != "train_time_s"}
    return entry


def _train_and_evaluate(config: ExtrapolationConfig, encoding: str, seed: int, nope: bool,
                        corpus, progress: bool) -> dict:
    """One training run (a method, a seed) and every variant that reuses it: the
    registered evaluation-time variants and, for RoPE, the fine-tuned models.
    Returns ``{variant: entry}`` in the order of ``config.variants``."""
    heldout = corpus.heldout
    model, history = train_model(config, encoding, corpus.train, progress=progress,
                                 seed=seed, nope=nope)
    method = POSITIONS[encoding]
    name = nope_variant(encoding) if nope else encoding
    result = _evaluate(model, config, heldout, may_be_undefined=bool(method.undefined_note))
    entry = _with_history(_entry(name, encoding, config, result), model, history)
    table = t5_bias_table(model)
    if table is not None:
        entry["t5_bias"] = [_rounded(row, 4) for row in table]
    if None in result["loss"]:
        entry["not_defined"] = method.undefined_note.format(train_length=config.train_length)
    entries = {name: entry}
    if nope:
        return entries
    for variant in method.variants:
        result = _evaluate(model, config, heldout, adapt=variant.adapt)
        entries[variant.name] = _entry(variant.name, encoding, config, result)
        if variant.note:
            entries[variant.name]["note"] = variant.note
    if encoding == "rope":
        for scaling in config.finetune_scalings:
            tuned, tuned_history = finetune_rope(model, config, scaling, corpus.train,
                                                 seed=seed, progress=progress)
            variant = finetune_variant(scaling)
            result = _evaluate(tuned, config, heldout)
            entries[variant] = _with_history(_entry(variant, encoding, config, result),
                                             tuned, tuned_history)
    return entries


_NUMBERS = ("loss", "retrieval_accuracy")


def _merge_seeds(runs: list[dict]) -> dict:
    """One entry from the same variant's entries of several seeds: ``loss`` and
    ``retrieval_accuracy`` become the mean over seeds, with ``*_min``, ``*_max`` and
    ``*_by_seed``; curves (per-position loss, accuracy by distance) the mean; the
    training history that of the first seed; times the sum."""
    if len(runs) == 1:
        return runs[0]
    merged = dict(runs[0])

    def mean(rows, digits):
        rows = [r for r in rows if r is not None]
        if not rows:
            return None
        return _rounded(np.mean(np.asarray(rows, dtype=np.float64), axis=0), digits)

    for key in _NUMBERS:
        if key not in merged:
            continue
        by_seed = [run[key] for run in runs]
        columns = list(zip(*by_seed, strict=True))
        merged[key] = [None if None in c else round(float(np.mean(c)), 5) for c in columns]
        merged[f"{key}_min"] = [None if None in c else min(c) for c in columns]
        merged[f"{key}_max"] = [None if None in c else max(c) for c in columns]
        merged[f"{key}_by_seed"] = by_seed
    merged["per_position_loss"] = mean([run["per_position_loss"] for run in runs], 4)
    if "retrieval_by_distance" in merged:
        merged["retrieval_by_distance"] = [
            mean(list(rows), 4)
            for rows in zip(*(run["retrieval_by_distance"] for run in runs), strict=True)]
    for key in ("eval_time_s", "train_time_s"):
        if key in merged:
            merged[key] = round(sum(run[key] for run in runs), 2)
    if "history" in merged:
        merged["final_train_loss_by_seed"] = [run["history"]["loss"][-1] for run in runs]
    return merged


def _tasks(config: ExtrapolationConfig) -> list[tuple[int, str, bool]]:
    """``(seed, encoding, nope)`` of every training run, in the order they are run."""
    return [(seed, encoding, nope) for seed in config.seeds for encoding in config.encodings
            for nope in (False, True) if not nope or encoding in config.nope_encodings]


def _worker_setup(modules: tuple[str, ...]) -> None:
    torch.set_num_threads(1)
    for module in modules:
        import_registration(module)  # a reader's registered methods, in the worker too


def _run_task(args):
    config, encoding, seed, nope, corpus = args
    return _train_and_evaluate(config, encoding, seed, nope, corpus, progress=False)


def run_experiment(config: ExtrapolationConfig = PRESETS["text"], *, threads: int | None = 1,
                   progress: bool = True, corpus=None, jobs: int = 1,
                   register: tuple[str, ...] = (), command: list[str] | None = None) -> dict:
    """Train every encoding in ``config`` (every seed) and evaluate every variant; return
    the results.

    ``threads`` sets ``torch.set_num_threads`` (``None`` leaves it). ``jobs`` > 1 runs
    that many training runs at once in worker processes (one thread each; ``register``
    names modules each worker imports first, for methods registered outside
    :mod:`posenc`); the numbers do not depend on ``jobs``. The dict is what ``main``
    writes as JSON: ``command`` (the exact command line when ``main`` ran it, as a list
    in ``argv``), ``register`` (each registered module and its source's SHA-256),
    ``config`` (``config.to_dict()``, the methods' options included), ``config_hash``,
    ``code_hash`` (of every ``posenc`` module imported), ``corpus``
    (files, sizes, SHA-256), ``eval_lengths``, ``runtime`` (threads, jobs, versions, wall
    time, load average) and ``variants``: per variant its ``label``,
    ``trained_encoding``, ``loss`` per evaluation length (nats per byte, ``null`` = not
    defined), ``per_position_loss`` (at the longest defined length), with the retrieval
    task ``retrieval_accuracy`` per length and ``retrieval_by_distance`` (at
    ``retrieval_distances``), and for trained encodings the training-loss ``history`` and
    ``num_parameters``. With several seeds the numbers are means, with ``*_min``,
    ``*_max`` and ``*_by_seed`` beside them.
    """
    if threads is not None:
        torch.set_num_threads(check_int("threads", threads))
    jobs = check_int("jobs", jobs)
    wall_start = time.perf_counter()
    load_start = os.getloadavg()
    code_hash = _code_hash()  # of the code as it starts
    corpus = load_stdlib_corpus() if corpus is None else corpus
    if len(corpus.heldout) < config.eval_tokens + 1:
        raise ValueError(f"eval_tokens={config.eval_tokens} needs {config.eval_tokens + 1} "
                         f"held-out bytes; the corpus has {len(corpus.heldout)}")
    tasks = _tasks(config)
    if jobs == 1:
        outputs = [_train_and_evaluate(config, encoding, seed, nope, corpus, progress)
                   for seed, encoding, nope in tasks]
    else:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(
                jobs, mp_context=context, initializer=_worker_setup,
                initargs=(tuple(register),)) as pool:
            futures = [pool.submit(_run_task, (config, encoding, seed, nope, corpus))
                       for seed, encoding, nope in tasks]
            bar = _progress(concurrent.futures.as_completed(futures), total=len(futures),
                            desc="training runs", enabled=progress)
            for _ in bar:
                pass
            outputs = [future.result() for future in futures]
    by_variant: dict[str, list] = {}
    for entries in outputs:
        for name, entry in entries.items():
            by_variant.setdefault(name, []).append(entry)
    variants = {name: _merge_seeds(by_variant[name]) for name in config.variants}
    loads = [v for entries in outputs for e in entries.values()
             for v in e.get("history", {}).get("load_average", [])]
    results = {
        "experiment": "train short, test long (Press et al., 2022 protocol, scaled down)",
        "command": ("run_experiment (from Python)" if command is None
                    else shlex.join(command)),
        **({} if command is None else {"argv": list(command)}),
        **({"register": registration_record(register)} if register else {}),
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
    if jobs > 1:
        results["runtime"]["jobs"] = jobs
    if config.num_seeds > 1:
        results["seeds"] = list(config.seeds)
    return results


def format_summary(results: dict) -> str:
    """A plain-text table of loss (nats/byte) per variant and evaluation length, and of
    retrieval accuracy when the results have it (means over seeds)."""
    lengths = results["eval_lengths"]
    train = results["train_length"]
    width = min(max(len(e["label"]) for e in results["variants"].values()) + 2, 40)
    head = f"{'variant':<{width}}" + "".join(f"{f'{n // train}x = {n}':>12}" for n in lengths)
    tables = [("loss (nats/byte)", "loss", lambda x: f"{x:.4f}")]
    if any("retrieval_accuracy" in v for v in results["variants"].values()):
        tables.append(("retrieval accuracy", "retrieval_accuracy", lambda x: f"{x:.1%}"))
    lines = []
    for title, key, fmt in tables:
        lines += ["" if lines else None, title, head, "-" * len(head)]
        for entry in results["variants"].values():
            cells = "".join(f"{'not defined' if x is None else fmt(x):>12}"
                            for x in entry[key])
            lines.append(f"{entry['label'][:width - 1]:<{width}}{cells}")
    return "\n".join(line for line in lines if line is not None)
