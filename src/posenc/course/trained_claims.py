"""Every claim a chapter makes from a run it trains or fits live, as code.

A cell that trains or fits calls the function its claim names here (:attr:`TrainedClaim.run`,
the chapter's seed), then :func:`check_claim`, which evaluates each clause its prose states
about the result and fails naming the clause that does not hold. The prose says what holds
across seeds and the kernels torch may pick, because ``tests/test_trained_claims.py`` runs
every claim under ``ATEN_CPU_CAPABILITY`` = ``default``, ``avx2`` and the machine's own, for
the chapter's seed and two more: a claim true only on the machine where it was written fails
there, not on a reader's laptop. (Claims about the *committed* results, which every machine
reads from the same JSON, are not here; their seeds are shown in their chapters.)

Run them all, with a table of what every clause gave (``--json`` for the tests)::

    python -m posenc.course.trained_claims --offsets 0 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["TrainedClaim", "CLAIMS", "check_claim", "run_claims", "start_run", "finish_run"]


@dataclass(frozen=True)
class TrainedClaim:
    """One chapter's live training or fit and what its prose says about the result.

    ``run(seed)`` computes what the chapter's cell computes, with the chapter's own ``seed``;
    ``call`` is how the cell spells that call (the tests find it in the chapter's code);
    ``clauses(result)`` maps each clause of the prose, in words, to whether it holds.
    """

    name: str
    chapter: str
    call: str
    run: Callable[[int], object]
    clauses: Callable[[object], dict[str, bool]]
    seed: int = 0


def check_claim(name: str, result) -> dict[str, bool]:
    """Each clause of claim ``name`` evaluated on ``result``; ``AssertionError`` naming every
    clause that does not hold."""
    if name not in CLAIMS:
        raise ValueError(f"name must be one of {', '.join(CLAIMS)}, got {name!r}")
    clauses = CLAIMS[name].clauses(result)
    failed = [clause for clause, holds in clauses.items() if not holds]
    if failed:
        raise AssertionError(f"claim {name!r} does not hold: " + "; ".join(failed))
    return clauses


def _corpus():
    from ..data import load_stdlib_corpus

    return load_stdlib_corpus()


# ---------------------------------------------------------------- chapter 3: a learned table


def _table_clauses(result) -> dict[str, bool]:
    from ..learned_table import cosine_similarity_matrix, principal_components

    initial, trained, losses = result

    def offset(t, k):  # mean cosine of rows k apart
        return np.diagonal(cosine_similarity_matrix(t), k).mean()

    scores, explained = principal_components(trained, k=3)
    ramp = np.corrcoef(scores[:, 0], np.arange(len(trained)))[0, 1]
    return {
        "the loss falls": np.mean(losses[-50:]) < np.mean(losses[:20]) - 1.5,
        "before training, neighbours are unrelated (|cos| < 0.1)": abs(offset(initial, 1)) < 0.1,
        "after, neighbours are similar (mean cos 0.3 to 0.6)": 0.3 < offset(trained, 1) < 0.6,
        "similarity falls with distance (1, 8, 32 rows apart)":
            offset(trained, 1) > offset(trained, 8) > offset(trained, 32),
        "rows from opposite ends point apart (mean cos 32 apart < 0)": offset(trained, 32) < 0,
        "the first component carries 40 to 60 % of the variance (untrained: under 30 %)":
            0.4 < explained[0] < 0.6 and principal_components(initial)[1][0] < 0.3,
        "it is close to a ramp in p (correlation > 0.9)": ramp > 0.9,
        "the next components are small (each under a third of the first)":
            explained[1] < explained[0] / 3,
        "the band is not a function of the offset (std of neighbours' cos > 0.1)":
            np.diagonal(cosine_similarity_matrix(trained), 1).std() > 0.1,
    }


def learned_table_run(seed: int = 0):
    """Chapter 3: :func:`posenc.learned_table.train_learned_table`, 600 steps."""
    from ..learned_table import train_learned_table

    return train_learned_table(_corpus().train, steps=600, length=64, d_model=32, seed=seed)


# ---------------------------------------------------------------- chapter 9: text, small


def _text_clauses(result) -> dict[str, bool]:
    from .results import load_results

    loss = {name: np.array(v["loss"]) for name, v in result["variants"].items()}
    committed = load_results("extrapolation_results.json")["variants"]
    sinusoidal, alibi = loss["sinusoidal"], loss["alibi"]
    return {
        "sinusoidal's loss climbs at every doubling, by over 0.05 nats at 8x":
            bool(np.all(np.diff(sinusoidal) > 0)) and sinusoidal[-1] - sinusoidal[0] > 0.05,
        "ALiBi's does not (never 0.01 above its 1x loss)": alibi.max() <= alibi[0] + 0.01,
        "the losses are high (each 0.5 nats above the full run's at 1x)":
            all(loss[n][0] > committed[n]["loss"][0] + 0.5 for n in loss),
        "some gaps are narrow (RoPE and ALiBi within 0.04 at 1x)":
            abs(loss["rope"][0] - loss["alibi"][0]) < 0.04,
    }


def text_small_run(seed: int = 0) -> dict:
    """Chapter 9's live run: ``PRESETS["text-small"]``."""
    from ..experiments.extrapolation import PRESETS, run_experiment

    return run_experiment(PRESETS["text-small"].replace(seed=seed), progress=False)


# ---------------------------------------------------------------- chapter 12: FIRE fits


def _fire_clauses(fits) -> dict[str, bool]:
    from .figures.learned_biases import fire_fit_targets

    targets, first = fire_fit_targets(), min(next(iter(fits.values()))["snapshots"])
    out = {}
    for name, fit in fits.items():
        span = np.ptp(targets[name])
        start = np.abs(fit["snapshots"][first] - targets[name]).max()
        end = np.abs(fit["fit"] - targets[name]).max()
        out[f"{name}: max error from over half the range to under a tenth of it"] = (
            start > span / 2 and end < span / 10)
    line = fits["ALiBi-like"]
    out["ALiBi-like: the line is matched to within 3 % of its range"] = (
        np.abs(line["fit"] - line["target"]).max() < 0.03 * np.ptp(line["target"]))
    out["ALiBi-like: |c| shrinks at least tenfold from 0.1"] = abs(fits["ALiBi-like"]["c"]) < 0.01
    return out


def fire_fit_run(seed: int = 0) -> dict:
    """Chapter 12: :func:`posenc.course.figures.learned_biases.fire_fits`."""
    from .figures.learned_biases import fire_fits

    return fire_fits(steps=(0, 50, 200, 1000), seed=seed)


# ---------------------------------------------------------------- chapter 13: content, small


def _small_clauses(result) -> dict[str, bool]:
    from .results import load_results

    committed = load_results("full.json")["variants"]
    accuracy = {v: result["variants"][v]["retrieval_accuracy"][0] for v in ("rope", "alibi")}
    return {
        "the content look-up has begun (RoPE and ALiBi above twice chance, 2/15, at 1x)":
            min(accuracy.values()) > 2 / 15,
        "far from the committed models (each 0.2 below their 1x accuracy)":
            all(a < committed[v]["retrieval_accuracy"][0] - 0.2 for v, a in accuracy.items()),
    }


def content_small_run(seed: int = 0) -> dict:
    """Chapter 13's live run: ``PRESETS["small"]``."""
    from ..experiments.extrapolation import PRESETS, run_experiment

    return run_experiment(PRESETS["small"].replace(seed=seed), progress=False)


# ---------------------------------------------------------------- chapter 14: sinks


def _sink_clauses(runs) -> dict[str, bool]:
    full = 1  # the second layer attends to everything
    with_sinks, without, gated = runs["sinks"], runs["no sinks"], runs["gated"]
    start, end = with_sinks[0], with_sinks[max(with_sinks)]
    control, gate_end = without[max(without)], gated[max(gated)]
    sink = end["sink"][full]  # [heads]: each head's mass on its sink
    share = end["by_key"][full][:, 0] / end["uniform"]  # token 0's weight / a uniform head's
    token0 = max(run["by_key"][full][:, 0].max() for run in (end, control, gate_end))
    gate = gate_end["gate"]  # [layers, heads]: each head's mean output gate
    return {
        "the busiest sink grows over 5-fold, to over 15 % of its head's attention":
            sink.max() / start["sink"][full].max() > 5 and sink.max() > 0.15,
        "every head with over 30 % on its sink gives token 0 under half a uniform share":
            bool(np.all(share[sink > 0.3] < 0.5)),
        "no head puts 10 % of its attention on token 0, with sinks, without (control) or "
        "with the gate": token0 < 0.1,
        "every gate starts within 0.01 of 1/2": bool(np.all(abs(gated[0]["gate"] - 0.5) < 0.01)),
        "every head of the full layer closes its gate to under 0.4 on average":
            gate[full].max() < 0.4,
        "further than any head of the banded layer": gate[full].max() < gate[0].min(),
    }


def sinks_run(seed: int = 0) -> dict:
    """Chapter 14: :func:`posenc.course.figures.local_global.train_sink_runs`, with sinks,
    the control without them and the gated output without sinks (same seed, batches and
    other initial weights)."""
    from .figures.local_global import train_sink_runs

    return train_sink_runs(_corpus(), steps=200, checkpoints=(0, 50, 100, 200), seed=seed)


# ---------------------------------------------------------- chapter 16: positions at inference


def _inference_clauses(losses) -> dict[str, bool]:
    return {
        "the checkpoint loaded in the half layout without the permutation loses over 0.05 "
        "nats per byte": losses["unpermuted"] > losses["original"] + 0.05,
        "dropping YaRN's factor from the model trained with it moves its loss by less than "
        "0.05 nats per byte": abs(losses["yarn dropped"] - losses["yarn kept"]) < 0.05,
    }


def inference_run(seed: int = 0) -> dict:
    """Chapter 16: :func:`posenc.inference.train_briefly`, a RoPE model and one trained with
    YaRN (s = 4, L0 = 16) and its factor; losses on :func:`posenc.inference.held_out_windows`
    of the model, of it converted to the half layout without the permutation, and of the
    YaRN model with and without its factor."""
    from ..inference import held_out_windows, next_byte_loss, train_briefly, with_layout
    from ..model import TinyLMConfig
    from ..scaling import rope_scaling_frequencies

    corpus, config = _corpus(), TinyLMConfig(position="rope", num_layers=2)
    x, y = held_out_windows(corpus)
    model = train_briefly(config, corpus, steps=150, seed=seed).double()
    freqs, factor = rope_scaling_frequencies("yarn", config.head_dim, factor=4.0,
                                             original_max_position_embeddings=16)
    yarn = train_briefly(config, corpus, steps=150, seed=seed, frequencies=freqs,
                         attention_factor=factor).double()
    return {"original": next_byte_loss(model, x, y),
            "unpermuted": next_byte_loss(with_layout(model, "half", permute=False), x, y),
            "yarn kept": next_byte_loss(yarn, x, y),
            "yarn dropped": next_byte_loss(yarn, x, y, attention_factor=1.0)}


#: Every trained claim, by name, in chapter order.
CLAIMS: dict[str, TrainedClaim] = {claim.name: claim for claim in (
    TrainedClaim("learned_table", "03_learned", "train_learned_table(corpus.train, steps=600, "
                 "length=64, d_model=32, seed=0)", learned_table_run, _table_clauses),
    TrainedClaim("text_small", "09_extrapolation", 'live = PRESETS["text-small"]',
                 text_small_run, _text_clauses),
    TrainedClaim("fire_fit", "12_learned_biases", "fire_fits(steps=(0, 50, 200, 1000), seed=0)",
                 fire_fit_run, _fire_clauses),
    TrainedClaim("content_small", "13_long_context", 'run_experiment(PRESETS["small"]',
                 content_small_run, _small_clauses),
    TrainedClaim("sinks", "14_local_global", "train_sink_runs(corpus, steps=200, checkpoints=(0, "
                 "50, 100, 200), seed=0)", sinks_run, _sink_clauses),
    TrainedClaim("inference", "16_inference", "train_briefly(config, corpus, steps=150, seed=0, "
                 "frequencies=freqs,", inference_run, _inference_clauses),
)}


# ---------------------------------------------------------------- running them all


def run_claims(offsets=(0, 1, 2), names=None) -> dict:
    """Every claim (or those in ``names``) for its chapter's seed plus each of ``offsets``:
    ``{"capability", "claims": {name: {seed: {clause: holds}}}, "seconds": {name: s}}``, on
    one thread, as the chapters run."""
    import torch

    torch.set_num_threads(1)
    names = list(CLAIMS) if names is None else list(names)
    out = {"capability": torch.backends.cpu.get_cpu_capability(), "claims": {}, "seconds": {}}
    for name in names:
        claim, start = CLAIMS[name], time.perf_counter()
        out["claims"][name] = {str(claim.seed + k): {c: bool(v) for c, v in claim.clauses(
            claim.run(claim.seed + k)).items()} for k in offsets}
        out["seconds"][name] = round(time.perf_counter() - start, 1)
    return out


def start_run(capability: str | None, offsets=(0, 1, 2)) -> subprocess.Popen:
    """``python -m posenc.course.trained_claims --json --offsets ...`` in a new process, one
    thread, with ``ATEN_CPU_CAPABILITY=capability`` (``None``: unset, the machine's own
    kernels; torch reads it once, when it loads); started, not waited for."""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    env["OMP_NUM_THREADS"] = "1"
    if capability is not None:
        env["ATEN_CPU_CAPABILITY"] = capability
    return subprocess.Popen([sys.executable, "-m", __name__, "--json",
                             "--offsets", *map(str, offsets)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_run(process: subprocess.Popen, timeout: float | None = None) -> dict:
    """The result of a :func:`start_run` (:func:`run_claims`'s dict); ``RuntimeError`` with
    the end of its stderr if it failed."""
    out, err = process.communicate(timeout=timeout)
    if process.returncode:
        raise RuntimeError(f"trained claims exited {process.returncode}:\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--offsets", type=int, nargs="+", default=[0, 1, 2],
                        help="seeds to run, as offsets from each chapter's own (0: its own)")
    parser.add_argument("--claims", nargs="+", choices=sorted(CLAIMS), default=None)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = run_claims(args.offsets, args.claims)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"torch CPU capability: {result['capability']}")
    failed = 0
    for name, by_seed in result["claims"].items():
        print(f"{name} ({CLAIMS[name].chapter}, {result['seconds'][name]} s), seeds "
              f"{', '.join(by_seed)}:")
        for clause in next(iter(by_seed.values())):
            marks = " ".join("yes" if v[clause] else " NO" for v in by_seed.values())
            failed += sum(not v[clause] for v in by_seed.values())
            print(f"  {marks}  {clause}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
