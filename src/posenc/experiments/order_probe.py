"""Where a hybrid's order comes from: the positional retrieval task, trained to a criterion.

A hybrid whose attention layers carry no position (Kimi Linear's pattern,
:data:`posenc.layer_patterns.PATTERNS` ``"kimi_linear"``) can still only solve the
positional task (:mod:`posenc.retrieval`, ``task="positional"``: a value is bound to its key
by sitting right after it) if something below the attention knows order. Its recurrent
layer (:class:`posenc.nn.GatedDecayRecurrence`) has two candidates: the short convolution
and the gated decay. This experiment trains the 2-layer hybrid (one recurrent layer, then
one attention layer with no position) four times, with both, each alone, and neither (the
control: a per-token layer, whose model is provably order-blind at the query: NoPE attention
over per-token features sees the tokens before it as a set).

Every run trains to a criterion: it stops when the accuracy on a fixed held-out batch laid
out as in training reaches ``criterion`` (95 %), or at ``max_steps``; AdamW at a constant
rate after 20 warm-up steps (no decay, which would make a slow learner look unable). What a
run reports is how many steps it took (or that it did not get there), and its accuracy
curve; chance for an order-blind reader is 1 / ``num_pairs``.

Run it in one process (the committed file: about 60 CPU-minutes on the course's machine)::

    python -m posenc.experiments.order_probe \
        --output src/posenc/course/results/order_probe/runs.json

or in two, each with two of the variants (``--variants NAME ...``), joined with
``--merge a.json b.json`` (how the committed file was made).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

import numpy as np

from .._validation import check_float, check_int

__all__ = ["RECURRENCE_VARIANTS", "hybrid_pattern", "train_order_probe", "run_order_probe",
           "SETTINGS", "swapped_values", "swap_sensitivity", "load_order_probe", "summarise",
           "order_blind_bound"]

#: The recurrent layer's variants: both sources of order, each alone, and neither (the
#: control: a per-token layer with the same projections and gates).
RECURRENCE_VARIANTS = {
    "convolution and decay": {"conv_size": 4, "decay": True},
    "decay only": {"conv_size": 0, "decay": True},
    "convolution only": {"conv_size": 4, "decay": False},
    "neither (control)": {"conv_size": 0, "decay": False},
}

#: The committed run's settings (the keywords of :func:`train_order_probe`).
SETTINGS = dict(num_layers=2, length=64, batch_size=32, num_pairs=4, num_queries=8, lr=1e-2,
                max_steps=6000, criterion=0.95, eval_every=100, eval_batch=128)


def hybrid_pattern(recurrence: dict):
    """Kimi Linear's layer pattern with its recurrent layers' options replaced by
    ``recurrence`` (a value of :data:`RECURRENCE_VARIANTS`): a
    :class:`~posenc.layer_patterns.LayerPattern` value, not registered."""
    from ..layer_patterns import get_pattern

    pattern = get_pattern("kimi_linear")
    cycle = tuple({**kind, "options": recurrence} if kind.get("mixer") == "recurrent" else kind
                  for kind in pattern.cycle)
    return replace(pattern, cycle=cycle)


def swapped_values(batch, num_pairs: int = 4):
    """``batch``'s inputs with the values of its first two pairs swapped, in every sequence,
    and the position of each sequence's first query (``[batch]``).

    The bytes before the first query are then the same *multiset* (a pair's value moved to
    the other pair's key), and the first query's right answer changes when it asks for one
    of those two keys: a model that sees no order answers both inputs alike.
    """
    import torch

    from .. import retrieval

    inputs = batch.inputs.clone()
    first = (batch.targets != retrieval.IGNORE).int().argmax(dim=1)  # [batch]
    for row, q in zip(inputs, first.tolist(), strict=True):
        head = row[:q]
        keys = [int(s) for s in torch.nonzero((head >= retrieval.KEY_BYTES[0])
                                              & (head <= retrieval.KEY_BYTES[-1]))[:, 0]]
        a, b = keys[0] + 1, keys[1] + 1  # the values after the first two keys
        row[a], row[b] = int(row[b]), int(row[a])
    return inputs, first


def swap_sensitivity(recurrence: dict, *, seed: int = 0, batch_size: int = 16,
                     length: int = 64, num_pairs: int = 4) -> float:
    """The largest change of any logit at the first query when two pairs swap values
    (:func:`swapped_values`), for an *untrained* float64 2-layer hybrid with ``recurrence``
    (weights drawn with ``seed``) on positional-task sequences of held-out text.

    0 (to rounding) means the model cannot tell the two inputs apart, whatever its weights:
    true of the control, whose attention sees the tokens before the query as a set.
    """
    import torch

    from .. import retrieval
    from ..data import load_stdlib_corpus
    from ..model import TinyLM, TinyLMConfig

    torch.manual_seed(seed)
    model = TinyLM(TinyLMConfig(pattern=hybrid_pattern(recurrence), num_layers=2,
                                pattern_length=length)).double().eval()
    batch = retrieval.training_batch(load_stdlib_corpus().heldout, batch_size, length,
                                     np.random.default_rng(seed), task="positional",
                                     num_pairs=num_pairs)
    swapped, first = swapped_values(batch, num_pairs)
    rows = torch.arange(len(first))
    with torch.no_grad():
        before = model(batch.inputs)[rows, first]  # [batch, 256]
        after = model(swapped)[rows, first]
    return float((before - after).abs().max())


def train_order_probe(train_text, heldout_text, recurrence: dict, *, seed: int = 0,
                      num_layers: int = 2, length: int = 64, batch_size: int = 32,
                      num_pairs: int = 4, num_queries: int = 8, lr: float = 1e-2,
                      max_steps: int = 3000, criterion: float = 0.95, eval_every: int = 100,
                      eval_batch: int = 128) -> dict:
    """Train one hybrid :class:`~posenc.model.TinyLM` (:func:`hybrid_pattern` of
    ``recurrence``) on the positional task alone until its held-out accuracy reaches
    ``criterion`` or ``max_steps`` steps have run (module docstring).

    Returns ``{"step": [...], "accuracy": [...], "loss": [...], "steps_to_criterion": int or
    None, "seconds": float}``; ``loss`` is the mean training loss on the answers over the
    steps since the previous evaluation (``nan`` at step 0).
    """
    import torch
    import torch.nn.functional as F

    from .. import retrieval
    from ..model import TinyLM, TinyLMConfig

    max_steps, eval_every = check_int("max_steps", max_steps), check_int("eval_every", eval_every)
    criterion = check_float("criterion", criterion, greater_than=0.0)
    torch.manual_seed(seed)
    model = TinyLM(TinyLMConfig(pattern=hybrid_pattern(recurrence), num_layers=num_layers,
                                pattern_length=length))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    task = dict(task="positional", num_pairs=num_pairs, num_queries=num_queries)
    train_rng = np.random.default_rng([seed, 1])
    held = retrieval.training_batch(heldout_text, eval_batch, length,
                                    np.random.default_rng([seed, 2]), **task)
    scored = held.targets != retrieval.IGNORE
    out = {"step": [], "accuracy": [], "loss": [], "steps_to_criterion": None}
    running, start = [], time.perf_counter()
    for step in range(max_steps + 1):
        if step % eval_every == 0 or step == max_steps:
            model.eval()
            with torch.no_grad():
                guess = model(held.inputs).argmax(-1)
            accuracy = float((guess[scored] == held.targets[scored]).float().mean())
            out["step"].append(step)
            out["accuracy"].append(accuracy)
            out["loss"].append(float(np.mean(running)) if running else float("nan"))
            running = []
            model.train()
            if accuracy >= criterion:
                out["steps_to_criterion"] = step
                break
        if step == max_steps:
            break
        for group in opt.param_groups:
            group["lr"] = lr * min(1.0, (step + 1) / 20)
        batch = retrieval.training_batch(train_text, batch_size, length, train_rng, **task)
        logits = model(batch.inputs)  # [batch, length, 256]
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch.targets.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running.append(loss.item())
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def run_order_probe(variants=tuple(RECURRENCE_VARIANTS), seeds=(0, 1, 2), *,
                    progress: bool = True, **settings) -> dict:
    """Every variant in ``variants`` for every seed: ``{"settings", "capability", "torch",
    "runs": {variant: {seed: train_order_probe(...)}}}``, on one thread."""
    import torch

    from ..data import load_stdlib_corpus

    settings = {**SETTINGS, **settings}
    torch.set_num_threads(1)
    corpus = load_stdlib_corpus()
    out = {"settings": settings, "torch": torch.__version__,
           "capability": torch.backends.cpu.get_cpu_capability(), "runs": {}}
    for name in variants:
        out["runs"][name] = {}
        for seed in seeds:
            run = train_order_probe(corpus.train, corpus.heldout, RECURRENCE_VARIANTS[name],
                                    seed=seed, **settings)
            out["runs"][name][str(seed)] = run
            if progress:
                print(f"{name}, seed {seed}: {run['accuracy'][-1]:.3f} at step "
                      f"{run['step'][-1]} ({run['seconds']} s)", file=sys.stderr, flush=True)
    return out


def load_order_probe(path=None) -> dict:
    """The committed results (``posenc/course/results/order_probe/runs.json``: a folder of
    their own, as the folder's ``*.json`` are the extrapolation experiment's), or ``path``'s."""
    from pathlib import Path

    committed = Path(__file__).parents[1] / "course/results/order_probe/runs.json"
    path = Path(path) if path else committed
    return json.loads(path.read_text())


def order_blind_bound(settings: dict, z: float = 4.0) -> float:
    """The most an order-blind model can score on the held-out batch, plus ``z`` standard
    errors of a binomial at that rate: ``1/p + z sqrt((1/p)(1 - 1/p) / answers)`` with ``p``
    pairs and ``eval_batch * num_queries`` answers. (An order-blind reader can do no better
    than guess among the ``p`` values present, :func:`posenc.retrieval.order_blind_answer`.)"""
    chance = 1 / settings["num_pairs"]
    answers = settings["eval_batch"] * settings["num_queries"]
    return chance + z * float(np.sqrt(chance * (1 - chance) / answers))


def summarise(results: dict) -> dict:
    """Per variant: ``{"seeds": [...], "steps": [steps to the criterion, or None, per seed],
    "beyond_blind": [the first evaluated step whose accuracy is above
    :func:`order_blind_bound`, or None], "final": [last accuracy], "best": [highest
    accuracy]}``, each list in the order of ``seeds``."""
    bound = order_blind_bound(results["settings"])
    out = {}
    for name, runs in results["runs"].items():
        seeds = sorted(runs, key=int)
        out[name] = {"seeds": [int(s) for s in seeds],
                     "steps": [runs[s]["steps_to_criterion"] for s in seeds],
                     "beyond_blind": [next((step for step, a in zip(runs[s]["step"],
                                                                     runs[s]["accuracy"],
                                                                     strict=True)
                                            if a > bound), None) for s in seeds],
                     "final": [runs[s]["accuracy"][-1] for s in seeds],
                     "best": [max(runs[s]["accuracy"]) for s in seeds]}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="the JSON file to write")
    parser.add_argument("--variants", nargs="+", choices=list(RECURRENCE_VARIANTS),
                        default=list(RECURRENCE_VARIANTS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--merge", nargs="+", metavar="FILE",
                        help="instead of training, join the runs of these result files (the "
                             "same settings, e.g. two processes' halves) in the order of "
                             "RECURRENCE_VARIANTS")
    args = parser.parse_args(argv)
    if args.merge:
        parts = [load_order_probe(f) for f in args.merge]
        if any(p["settings"] != parts[0]["settings"] for p in parts):
            parser.error("the files to merge were run with different settings")
        runs = {k: v for p in parts for k, v in p["runs"].items()}
        result = {**parts[0], "runs": {k: runs[k] for k in RECURRENCE_VARIANTS if k in runs}}
    else:
        result = run_order_probe(args.variants, args.seeds)
    with open(args.output, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
