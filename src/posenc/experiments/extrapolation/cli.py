"""The command line: ``python -m posenc.experiments.extrapolation [--preset main] ...``,
and ``python -m posenc.experiments.extrapolation migrate FILE...``, which rewrites results
files of an older schema in the current one (:func:`.results.rewrite_results`)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from ...catalogue import METHOD_ORDER
from ...nn import POSITIONS
from .config import PRESETS, ExtrapolationConfig
from .methods import experiment_method
from .results import rewrite_results
from .run import format_summary, import_registration, run_experiment

#: What ``--help`` says about the presets (timings: benchmarks/README.md).
PRESET_HELP = """presets (all: python -m posenc.experiments.extrapolation --preset NAME):
  text        chapter 9's committed run: 6 methods, text only, L_train=128, 1000 steps
              (about 13 min, 1 thread)
  text-small  chapter 9's live run (seconds)
  main        chapter 13, take four: every built-in method for text, RoPE with every
              4th layer NoPE, and the Gemma 3, Llama 4, Command A, GPT-OSS, Kimi
              Linear and Qwen3-Next layer patterns (a --register'ed method joins only
              through --encodings); text + content and positional key-value
              retrieval, L_train=64, a constant learning rate, each run trained until
              95 % of held-out positional answers are right or 2,000 steps; 1 seed
              (<= 30 min, --jobs 2)
  full        main with 3 seeds, plus RoPE fine-tuned at 4x L_train with no scaling,
              PI, NTK-aware and YaRN (<= 90 min, --jobs 2)
  take3-main  chapter 13's take three, 1 seed: 14 methods, 4 patterns, 1,000 steps of
              a cosine-decayed rate (its results: take3_main.json)
  take3       take three with 3 seeds and the fine-tuning (take3_full.json)
  rebinding   main's 16 methods trained on the rebinding task (a key bound twice, the
              query asking for the later value; order alone cannot solve it) beside
              the positional one, each until 95 % of held-out rebinding answers are
              right or 2,000 steps; no patterns; 1 seed (rebinding.json, --jobs 2)
  small       chapter 13's live run (<= 30 s)
  large       main scaled up for an accelerator: L_train=256, d_model=256, 6 layers,
              4,000 steps (not run for the committed results: no GPU was lent, and
              the runner trains on the CPU)

The committed results: src/posenc/course/results/full.json, made with
  python -m posenc.experiments.extrapolation --preset full --jobs 2 \\
      --output src/posenc/course/results/full.json
(chapter 9's text run is extrapolation_results.json, take three's take3_*.json).
Files of an older schema:
  python -m posenc.experiments.extrapolation migrate FILE...
rewrites them in the current one (numbers unchanged)."""

__all__ = ["main", "config_from_command_line"]


def _as_text(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


def _comma_list(kind):
    def convert(text: str) -> tuple:
        return tuple(kind(item) for item in text.split(",") if item)  # "" -> ()
    return convert


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _method_options(text: str) -> tuple[str, dict]:
    """``"NAME:key=value,key=value"`` -> ``(NAME, {key: value})``."""
    name, colon, rest = text.partition(":")
    pairs = [item.partition("=") for item in rest.split(",") if item]
    if not colon or not name or any(not eq or not key for key, eq, _ in pairs):
        raise argparse.ArgumentTypeError(f"expected NAME:key=value,..., got {text!r}")
    return name, {key: _value(value) for key, _, value in pairs}


def _parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m posenc.experiments.extrapolation",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a tiny byte-level LM per position encoding at one length and "
                    "evaluate it at 1x..8x that length (Press et al., 2022, scaled down):\n"
                    "held-out loss and, with the long-context presets, retrieval accuracy.",
        epilog=PRESET_HELP)
    parser.add_argument("--preset", choices=list(PRESETS), default="main",
                        help="starting configuration (default: main; see below); the options "
                             "below override it")
    helps = {"encodings": f"comma-separated subset of {','.join(METHOD_ORDER)}",
             "eval_multipliers": "comma-separated, increasing, starting at 1 (e.g. 1,2,4,8)",
             "train_length": "training length L_train in bytes",
             "steps": "training steps per encoding", "batch_size": "windows per step",
             "eval_tokens": "held-out bytes evaluated at each length"}
    for field in dataclasses.fields(ExtrapolationConfig):
        if field.name == "options":
            continue  # --options NAME:key=value, below
        default = getattr(PRESETS["main"], field.name)
        if isinstance(default, tuple):
            convert = _comma_list(int if "int" in str(field.type) else str)
        else:
            convert = type(default)
        parser.add_argument("--" + field.name.replace("_", "-"), type=convert,
                            help=f"{helps.get(field.name, field.name.replace('_', ' '))} "
                                 f"(main: {_as_text(default)})")
    parser.add_argument("--options", action="append", default=[], type=_method_options,
                        metavar="NAME:KEY=VALUE,...",
                        help="options of method NAME, its constructor's keywords (repeatable), "
                             "e.g. --options axial_rope:base=100,grid_cols=8; values are read "
                             "as JSON (numbers, true/false, null), else as text")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads (default 1: for models this small a "
                             "second thread gains little and, on a busy CPU, costs a lot)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="training runs at once, in worker processes of one thread each "
                             "(default 1; 2 on a 2-core machine halves the wall time; the "
                             "numbers do not change)")
    parser.add_argument("--output", default="extrapolation_results.json",
                        help="where to write the results JSON")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--register", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (repeatable): a module name or a .py path "
                             "that registers your own position method with "
                             "posenc.nn.register_position (and, for evaluation-time "
                             "variants and the like, its experiment entry with "
                             "register_experiment_method), whose name --encodings may then "
                             "use; recorded in the results with its source's SHA-256")
    return parser.parse_args(argv)


def _config(args: argparse.Namespace) -> ExtrapolationConfig:
    """The preset with the options given on the command line."""
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(ExtrapolationConfig)
                 if f.name != "options" and getattr(args, f.name, None) is not None}
    preset = PRESETS[args.preset]
    if args.options:
        options = {name: dict(opts) for name, opts in preset.options}
        for name, opts in args.options:
            options[name] = {**options.get(name, {}), **opts}
        overrides["options"] = options
    if "encodings" in overrides:  # the preset's extras follow the methods chosen, unless given
        if "nope_encodings" not in overrides:
            overrides["nope_encodings"] = tuple(e for e in preset.nope_encodings
                                                if e in overrides["encodings"])
        tunable = [e for e in overrides["encodings"]
                   if e in POSITIONS and experiment_method(e).finetunable]
        if "finetune_scalings" not in overrides and not tunable:
            overrides["finetune_scalings"] = ()
    return dataclasses.replace(preset, **overrides)


def config_from_command_line(argv) -> ExtrapolationConfig:
    """The configuration ``python -m posenc.experiments.extrapolation ARGV`` would run."""
    return _config(_parse_args(argv))


def main(argv=None) -> dict:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["migrate"]:
        if len(argv) == 1:
            raise SystemExit("migrate: name the results files to rewrite")
        rewrite_results(argv[1:])
        return {}
    args = _parse_args(argv)
    for module in args.register:
        import_registration(module)  # registers its position methods
    config = _config(args)
    command = [Path(sys.executable).name, "-m", "posenc.experiments.extrapolation", *argv]
    results = run_experiment(config, threads=args.threads, progress=not args.no_progress,
                             jobs=args.jobs, register=tuple(args.register), command=command)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=1) + "\n")
    print(format_summary(results))
    print(f"\nwall time {results['runtime']['wall_time_s']:.0f} s on "
          f"{results['runtime']['threads']} threads; wrote {output}")
    return results
