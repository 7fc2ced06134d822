"""Time :func:`posenc.nn.recurrence.gated_decay` (forward and backward) for each chunk size,
at the course's training sizes (batch 32, 64 tokens, 64 channels), on one thread.

    .venv/bin/python benchmarks/bench_recurrence.py
"""

import argparse
import time

import torch
import torch.nn.functional as F

from posenc.nn.recurrence import gated_decay


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x = torch.randn(32, 64, 64, requires_grad=True)
    log_a = F.logsigmoid(torch.randn(32, 64, 64)).requires_grad_()
    print(f"torch {torch.__version__}, {torch.backends.cpu.get_cpu_capability()}, one thread")
    for chunk in (4, 8, 16, 32, 64):
        gated_decay(x, log_a, chunk=chunk).sum().backward()  # warm up
        start = time.perf_counter()
        for _ in range(args.repeats):
            gated_decay(x, log_a, chunk=chunk).sum().backward()
        ms = (time.perf_counter() - start) / args.repeats * 1e3
        print(f"chunk {chunk:>2}: {ms:6.1f} ms per forward and backward")


if __name__ == "__main__":
    main()
