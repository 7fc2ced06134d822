"""Time one evaluation forward pass per sequence, by pass size, for the methods whose
attention builds several ``[rows, heads, L, L]`` tensors, at 1x-8x chapter 13's training
length, on one thread (as each job of ``--jobs 2`` runs): the measurement behind
:data:`posenc.experiments.extrapolation.evaluation.SCORES_PER_PASS`. Also checks that each
sequence's logits are the same in every pass size.

    .venv/bin/python benchmarks/bench_eval_rows.py
"""

import argparse
import time

import torch

from posenc.experiments.extrapolation.config import PRESETS
from posenc.experiments.extrapolation.evaluation import rows_per_pass
from posenc.model import TinyLM


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="cope,stick_breaking,shaw,alibi,rope")
    parser.add_argument("--sizes", default="16,8,4,2,1")
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = PRESETS["full"]
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"torch {torch.__version__}, {torch.backends.cpu.get_cpu_capability()}, one thread; "
          f"ms per sequence by sequences per pass (* = rows_per_pass)")
    for method in args.methods.split(","):
        torch.manual_seed(0)
        model = TinyLM(config.model_config(method)).eval()
        for multiplier in config.eval_multipliers:
            length = config.train_length * multiplier
            tokens = torch.randint(0, 256, (16, length))
            cells = []
            with torch.no_grad():
                whole = model(tokens)
                for rows in sizes:
                    start = time.perf_counter()
                    split = torch.cat([model(tokens[i:i + rows]) for i in range(0, 16, rows)])
                    ms = (time.perf_counter() - start) / 16 * 1e3
                    same = "" if torch.equal(split, whole) else " (differs)"
                    mark = "*" if rows == rows_per_pass(length, 16) else " "
                    cells.append(f"{rows:>2}{mark}{ms:7.1f}{same}")
            print(f"{method:<15} L={length:<4} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
