"""The experiment as a whole: every training run (in parallel processes), the results
dict with what reproduces it (argv, registered modules, code hash), and its summary.

Training is in :mod:`.training`, evaluation in :mod:`.evaluation`, fine-tuning in
:mod:`.finetuning`; see :mod:`posenc.experiments.extrapolation` for the protocol, the
configuration in :mod:`.config` and the command line in :mod:`.cli`.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import importlib
import importlib.util
import multiprocessing
import os
import platform
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import torch

from ..._validation import check_int
from ...data import load_stdlib_corpus
from ...model import TinyLM
from ...nn import POSITIONS
from ...retrieval import TASKS
from .config import PRESETS, ExtrapolationConfig, config_hash, task_key
from .convergence import HEAD_SCORES
from .evaluation import _evaluate
from .finetuning import finetune_rope
from .methods import experiment_method
from .results import SCHEMA
from .training import _progress, train_model
from .variants import VariantKey

__all__ = ["run_experiment", "format_summary"]


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


def _rounded(values, digits: int = 4):
    return [None if v is None else round(float(v), digits) for v in values]


def _rounded_array(values, digits: int = 4):
    """Nested lists of ``values`` (any shape), each number rounded to ``digits``."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 0:
        return round(float(values), digits)
    return [_rounded_array(v, digits) for v in values]


def _recorded(method, model: TinyLM) -> dict:
    """The extra numbers the ``record`` function of a method's experiment entry
    (:func:`.methods.experiment_method`) gives for its trained modules, rounded for the
    JSON: one module's (T5's table is shared by every block) or, when each layer has its
    own (FIRE's threshold), a list with one value per layer. ``method`` is the registered
    :class:`~posenc.nn.PositionMethod`."""
    record = experiment_method(method.name).record
    if record is None:
        return {}
    modules = list({id(m): m for m in model.modules() if isinstance(m, method.module)}.values())
    if not modules:
        return {}
    records = [record(module) for module in modules]
    if len(records) == 1:
        return {key: _rounded_array(value) for key, value in records[0].items()}
    return {key: [_rounded_array(r[key]) for r in records] for key in records[0]}


def _entry(key: VariantKey, config: ExtrapolationConfig, result: dict) -> dict:
    """The JSON entry of one evaluated variant (one seed)."""
    entry = {"label": key.label(config), "trained_encoding": key.trained_encoding,
             "loss": _rounded(result["loss"], 5),
             "per_position_loss": _rounded(result["per_position_loss"]),
             "eval_time_s": round(result["eval_time_s"], 2)}
    for task in config.retrieval_tasks if config.retrieval else ():
        accuracy, by_distance = task_key(task, "accuracy"), task_key(task, "by_distance")
        entry[accuracy] = _rounded(result[accuracy])
        entry[task_key(task, "distances")] = result[task_key(task, "distances")]
        entry[by_distance] = [None if a is None else _rounded(a) for a in result[by_distance]]
    grid = task_key("positional", "grid")
    if grid in result:
        entry[grid] = [None if a is None else _rounded(a) for a in result[grid]]
    return entry


#: History keys kept as they are (counts, steps); the head scores (HEAD_SCORES) are rounded
#: to 3 digits, the other curves to 4.
_EXACT = ("step", "check_step", "check_right", "check_scored", "steps_to_learn",
          "steps_trained")


def _with_history(entry: dict, model: TinyLM, history: dict) -> dict:
    """The entry with its training run: parameters, time, the history (curves rounded) and,
    for a run with held-out checks (:class:`.convergence.Checker`), at the top level
    ``steps_to_learn``, ``steps_trained`` and ``train_layout_accuracy`` (the last check's
    share of answers right: the config's ``check_task`` at 1x, laid out as in training)."""
    entry["num_parameters"] = model.num_parameters()
    entry["train_time_s"] = round(history["train_time_s"], 2)

    def rounded(key, value):
        if key in _EXACT:
            return value
        if key in HEAD_SCORES:  # [check][layer][head], None for a recurrent layer
            return [[None if layer is None else _rounded(layer, 3) for layer in check]
                    for check in value]
        return _rounded(value, 2) if key == "load_average" else _rounded(value)

    entry["history"] = {k: rounded(k, v) for k, v in history.items()
                        if k not in ("train_time_s", "steps_trained", "steps_to_learn")}
    if "steps_trained" in history and "check_step" in history:
        entry["steps_trained"] = history["steps_trained"]
        entry["steps_to_learn"] = history["steps_to_learn"]
        entry["train_layout_accuracy"] = round(
            history["check_right"][-1] / history["check_scored"], 4)
        entry["train_layout_scored"] = history["check_scored"]
    return entry


def _train_and_evaluate(config: ExtrapolationConfig, encoding: str, seed: int, layout: str,
                        corpus, progress: bool) -> dict:
    """One training run (a method or a pattern, a seed) and every variant that reuses it:
    the evaluation-time variants of the method's experiment entry (:mod:`.methods`) and,
    for a method whose entry has ``finetunable=True`` when the config fine-tunes, the
    fine-tuned models. ``layout``: ``""`` (the method in every layer), ``"nope"`` (with
    NoPE layers) or ``"pattern"`` (``encoding`` names a per-layer pattern). Returns
    ``{variant: entry}`` in the order of ``config.variants``."""
    heldout = corpus.heldout
    model, history = train_model(config, encoding, corpus.train, progress=progress,
                                 seed=seed, nope=layout == "nope",
                                 pattern=layout == "pattern", heldout=heldout)
    if layout == "pattern":
        key = VariantKey("pattern", encoding)
        result = _evaluate(model, config, heldout)
        return {key.name: _with_history(_entry(key, config, result), model, history)}
    method, protocol = POSITIONS[encoding], experiment_method(encoding)
    key = VariantKey(layout or "trained", encoding)  # the layouts are kinds of variant
    result = _evaluate(model, config, heldout, may_be_undefined=bool(protocol.undefined_note))
    entry = _with_history(_entry(key, config, result), model, history)
    entry.update(_recorded(method, model))  # e.g. T5's bias table
    if None in result["loss"]:
        entry["not_defined"] = protocol.undefined_note.format(train_length=config.train_length)
    entries = {key.name: entry}
    if layout == "nope":
        return entries
    for variant in protocol.variants:
        result = _evaluate(model, config, heldout, adapt=variant.adapt)
        entries[variant.name] = _entry(VariantKey.derived(encoding, variant.name), config,
                                       result)
        if variant.note:
            entries[variant.name]["note"] = variant.note
    if encoding in config.finetuned_encodings:
        for scaling in config.finetune_scalings:
            tuned, tuned_history = finetune_rope(model, config, scaling, corpus.train,
                                                 seed=seed, progress=progress)
            key = VariantKey.finetuned(encoding, scaling)
            result = _evaluate(tuned, config, heldout)
            entries[key.name] = _with_history(_entry(key, config, result), tuned,
                                              tuned_history)
    return entries


_NUMBERS = ("loss", *(task_key(task, "accuracy") for task in TASKS))
#: A run's own numbers, kept per seed only (``<key>_by_seed``): a mean of steps to learn
#: would hide the seeds that never learned.
_PER_SEED = ("steps_to_learn", "steps_trained", "train_layout_accuracy")


def _merge_seeds(runs: list[dict]) -> dict:
    """One entry from the same variant's entries of several seeds: ``loss`` and
    ``retrieval_accuracy`` become the mean over seeds, with ``*_min``, ``*_max`` and
    ``*_by_seed``; curves (per-position loss, accuracy by distance) the mean; the
    training history that of the first seed (every seed's checks and head scores in
    ``check_by_seed``); times the sum."""
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
    if task_key("positional", "grid") in merged:  # chapter 13 reads it per learned seed
        merged[task_key("positional", "grid") + "_by_seed"] = [
            run[task_key("positional", "grid")] for run in runs]
    for key in _PER_SEED:
        if key in merged:
            merged[f"{key}_by_seed"] = [run[key] for run in runs]
            del merged[key]
    merged["per_position_loss"] = mean([run["per_position_loss"] for run in runs], 4)
    for key in (*(task_key(task, "by_distance") for task in TASKS),
                task_key("positional", "grid")):
        if key in merged:
            merged[key] = [mean(list(rows), 4)
                           for rows in zip(*(run[key] for run in runs), strict=True)]
    for key in ("eval_time_s", "train_time_s"):
        if key in merged:
            merged[key] = round(sum(run[key] for run in runs), 2)
    if "history" in merged:
        merged["final_train_loss_by_seed"] = [run["history"]["loss"][-1] for run in runs]
        if "check_step" in merged["history"]:  # every seed's learning curve and heads
            merged["check_by_seed"] = [
                {"step": run["history"]["check_step"], "right": run["history"]["check_right"],
                 **{k: run["history"][k] for k in HEAD_SCORES if k in run["history"]}}
                for run in runs]
    return merged


def _tasks(config: ExtrapolationConfig) -> list[tuple[int, str, str]]:
    """``(seed, encoding or pattern, layout)`` of every training run, in the order they
    are run (layout as :func:`_train_and_evaluate`'s)."""
    runs = []
    for seed in config.seeds:
        for encoding in config.encodings:
            runs.append((seed, encoding, ""))
            if encoding in config.nope_encodings:
                runs.append((seed, encoding, "nope"))
        runs += [(seed, pattern, "pattern") for pattern in config.patterns]
    return runs


def _worker_setup(modules: tuple[str, ...]) -> None:
    torch.set_num_threads(1)
    for module in modules:
        import_registration(module)  # a reader's registered methods, in the worker too


def _run_task(args):
    config, encoding, seed, layout, corpus = args
    return _train_and_evaluate(config, encoding, seed, layout, corpus, progress=False)


def run_experiment(config: ExtrapolationConfig = PRESETS["text"], *, threads: int | None = 1,
                   progress: bool = True, corpus=None, jobs: int = 1,
                   register: tuple[str, ...] = (), command: list[str] | None = None) -> dict:
    """Train every encoding in ``config`` (every seed) and evaluate every variant; return
    the results (a results dict of :data:`.results.SCHEMA`; :func:`.results.read_results`
    reads its file as typed records).

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
        outputs = [_train_and_evaluate(config, encoding, seed, layout, corpus, progress)
                   for seed, encoding, layout in tasks]
    else:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(
                jobs, mp_context=context, initializer=_worker_setup,
                initargs=(tuple(register),)) as pool:
            futures = [pool.submit(_run_task, (config, encoding, seed, layout, corpus))
                       for seed, encoding, layout in tasks]
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
        "schema": SCHEMA,
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
    for task in TASKS:
        key = task_key(task, "accuracy")
        if any(key in v for v in results["variants"].values()):
            tables.append((f"{task} retrieval accuracy", key, lambda x: f"{x:.1%}"))
    lines = []
    for title, key, fmt in tables:
        lines += ["" if lines else None, title, head, "-" * len(head)]
        for entry in results["variants"].values():
            cells = "".join(f"{'not defined' if x is None else fmt(x):>12}"
                            for x in entry[key])
            lines.append(f"{entry['label'][:width - 1]:<{width}}{cells}")
    return "\n".join(line for line in lines if line is not None)
