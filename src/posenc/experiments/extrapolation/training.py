"""Training: one tiny LM per position method, every method on the same batches.

Seeding, the learning-rate schedule, the parameter groups and the training loop that
:func:`train_model` and the fine-tuning (:mod:`.finetuning`) share. See
:mod:`posenc.experiments.extrapolation` for the protocol.
"""

from __future__ import annotations

import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from ... import retrieval
from ..._validation import check_int
from ...data import random_windows
from ...model import TinyLM
from .config import ExtrapolationConfig, task_key
from .convergence import Checker
from .variants import VariantKey

__all__ = ["seed_everything", "learning_rate_at", "train_model"]


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


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch, and ask torch for deterministic kernels."""
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 -- nothing here draws from it; seeded for additions
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


def learning_rate_at(step: int, config: ExtrapolationConfig) -> float:
    """Linear warm-up over ``warmup_steps``, then (``config.schedule``) cosine decay to
    ``min_lr_ratio * lr`` at ``steps``, or the peak held (``"constant"``)."""
    peak = config.learning_rate
    if step < config.warmup_steps:
        return peak * (step + 1) / config.warmup_steps
    if config.schedule == "constant":
        return peak
    span = max(config.steps - config.warmup_steps, 1)
    progress = min((step - config.warmup_steps) / span, 1.0)
    floor = config.min_lr_ratio * peak
    return floor + (peak - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def _parameter_groups(model: TinyLM) -> list[dict]:
    """One group for everything, then one per learning-rate scale that a module asks for
    (:attr:`posenc.nn.PositionEncoding.param_lr_scale`, e.g. T5's ``bias_lr_scale``),
    whatever the method; each group's ``lr_scale`` multiplies the scheduled rate."""
    scales = {}  # parameter id -> its module's scale
    for module in model.modules():
        scale = getattr(module, "param_lr_scale", None)
        if scale is not None:
            scales.update({id(p): float(scale) for p in module.parameters()})
    groups = [{"params": [p for p in model.parameters() if id(p) not in scales],
               "lr_scale": 1.0}]
    for scale in dict.fromkeys(scales.values()):  # in order of first appearance
        groups.append({"params": [p for p in model.parameters() if scales.get(id(p)) == scale],
                       "lr_scale": scale})
    return groups


def _train_steps(model: TinyLM, optimizer, config: ExtrapolationConfig, *, steps: int,
                 length: int, batch_size: int, retrieval_batch_size: int, lr_at, train_data,
                 seed: int, desc: str, progress: bool, check=None) -> dict:
    """The training loop: AdamW steps on text windows (plus retrieval sequences when
    ``retrieval_batch_size`` > 0), learning rate ``lr_at(step)`` times each group's scale.

    Batches come from generators seeded with ``seed`` only, so every method sees the same
    text and the same retrieval sequences. ``check`` (a :class:`.convergence.Checker`, or
    ``None``) is called after every ``config.check_every``-th step and stops the loop when
    it says so. Returns the history dict of :func:`train_model`.
    """
    batches = torch.Generator().manual_seed(seed)
    tasks = config.task_batch_sizes if retrieval_batch_size else {}
    # each task its own stream, fixed by the task (not by its place in the config) and drawn
    # only if used; content's is the one the single task always had
    streams = {task: np.random.default_rng([seed, 1 + retrieval.TASKS.index(task)])
               for task in tasks}
    history = {"step": [], "loss": [], "load_average": []}
    history.update({task_key(task, "loss"): [] for task in tasks})
    running, count = 0.0, 0
    running_tasks = dict.fromkeys(tasks, 0.0)
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
        for task in tasks:
            task_batch = tasks[task] * retrieval_batch_size // config.retrieval_batch_size
            sequences = retrieval.training_batch(
                train_data, task_batch, length, streams[task],
                num_pairs=config.retrieval_pairs, num_queries=config.retrieval_queries,
                task=task)
            logits = model(sequences.inputs)  # [retrieval batch, length, 256]
            answer_loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                          sequences.targets.reshape(-1))  # answers only
            total = total + config.retrieval_weight * answer_loss
            running_tasks[task] += answer_loss.item()
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        optimizer.step()
        running, count = running + loss.item(), count + 1
        done = False
        if check is not None and (step + 1) % config.check_every == 0:
            model.eval()
            done = check(model, step + 1)
            model.train()
        # a run that stops early logs its last, shorter stretch of training loss too
        if count == config.log_every or step == steps - 1 or done:
            history["step"].append(step + 1)
            history["loss"].append(running / count)
            for task in tasks:
                history[task_key(task, "loss")].append(running_tasks[task] / count)
            history["load_average"].append(os.getloadavg()[0])
            bar.set_postfix(loss=f"{running / count:.3f}")
            running, count = 0.0, 0
            running_tasks = dict.fromkeys(tasks, 0.0)
        if done:
            break
    bar.close()
    history["steps_trained"] = step + 1
    if check is not None:
        history.update(check.record())
    history["train_time_s"] = time.perf_counter() - start
    model.eval()
    return history


def _optimizer(model: TinyLM, config: ExtrapolationConfig):
    return torch.optim.AdamW(_parameter_groups(model), lr=config.learning_rate,
                             betas=(0.9, 0.95), weight_decay=0.0)


def train_model(config: ExtrapolationConfig, position: str, train_data: np.ndarray, *,
                progress: bool = True, seed: int | None = None, nope: bool = False,
                pattern: bool = False, heldout: np.ndarray | None = None
                ) -> tuple[TinyLM, dict]:
    """Train one :class:`TinyLM` with ``position`` at ``config.train_length``.

    Every encoding gets the same initial seed and the same batches (generators seeded
    with ``seed``, default ``config.seed``); ``nope=True`` trains the model with NoPE
    layers (``config.nope_every``); ``pattern=True`` reads ``position`` as a per-layer
    pattern's name (:meth:`ExtrapolationConfig.pattern_config`). Returns the model (in
    eval mode) and a history dict with the mean training loss over each ``log_every``
    steps (and each retrieval task's loss, when the config trains retrieval), the time
    taken and the 1-minute load average seen while training. With ``config.check_every``
    the held-out text ``heldout`` is needed: the checks (:class:`.convergence.Checker`)
    add their curves to the history, and ``steps_trained`` says where the run stopped.
    """
    seed = config.seed if seed is None else check_int("seed", seed, minimum=0)
    seed_everything(seed)
    if pattern:
        model = TinyLM(config.pattern_config(position))
        desc = VariantKey("pattern", position).name
    else:
        model = TinyLM(config.model_config(position, nope=nope))
        desc = VariantKey("nope" if nope else "trained", position).name
    check = None
    if config.check_every:
        if heldout is None:
            raise ValueError("config.check_every > 0 checks on held-out text: pass heldout")
        check = Checker(config, heldout)
    history = _train_steps(
        model, _optimizer(model, config), config, steps=config.steps,
        length=config.train_length, batch_size=config.batch_size,
        retrieval_batch_size=config.retrieval_batch_size,
        lr_at=lambda step: learning_rate_at(step, config), train_data=train_data, seed=seed,
        desc=desc, progress=progress, check=check)
    return model, history
