"""The command line: ``python -m posenc.experiments.extrapolation [--preset small] ...``."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
from pathlib import Path

from ...nn import POSITION_METHODS
from .config import PRESETS, ExtrapolationConfig
from .run import format_summary, run_experiment

__all__ = ["main"]


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
    parser.add_argument("--register", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (repeatable): a module that registers your "
                             "own position method with posenc.nn.register_position, whose "
                             "name --encodings may then use")
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = _parse_args(argv)
    for module in args.register:
        importlib.import_module(module)  # registers its position methods
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
