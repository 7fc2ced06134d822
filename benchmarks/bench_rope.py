"""RoPE and sinusoidal timings against their peers, on this CPU.

    make bench            (or: .venv/bin/python benchmarks/bench_rope.py)

* torch ``apply_rope`` (both layouts) on batch 8 x 16 heads x 2048 positions x
  head_dim 128, float32, beside
  - the complex-number form of the source notes / Meta's llama
    (``precompute_freqs_cis`` once, then ``apply_rotary_emb``), and
  - the ``rotary-embedding-torch`` package (``RotaryEmbedding.rotate_queries_or_keys``),
    installed for the benchmark only (``make bench`` does it; skipped if absent);
* ``sinusoidal_encoding(2048, 512)`` against the notes' double Python loop.

Each timing is the median of repeated runs after a warm-up, with the thread count
fixed (``--threads``, default 2). Prints a table and writes benchmarks/results/rope.json.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from posenc.nn.rope_kernel import apply_rope
from posenc.sinusoidal import sinusoidal_encoding

RESULTS = Path(__file__).resolve().parent / "results"


def median_seconds(fn, repeat: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def complex_rope_peer(x: torch.Tensor, freqs_cis: torch.Tensor) -> torch.Tensor:
    """Meta llama's apply_rotary_emb (the source notes use the same complex form)."""
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs_cis).flatten(-2).type_as(x)


def rotate_half_peer(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Hugging Face's apply_rotary_pos_emb (half layout), cos/sin precomputed as there."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def precompute_freqs_cis(dim: int, seq: int, base: float = 10000.0) -> torch.Tensor:
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    angles = torch.outer(torch.arange(seq, dtype=torch.float32), freqs)
    return torch.polar(torch.ones_like(angles), angles)


def loop_sinusoidal(n: int, d: int) -> np.ndarray:
    """The notes' version: one entry at a time."""
    pe = np.zeros((n, d))
    for pos in range(n):
        for i in range(0, d, 2):
            pe[pos, i] = math.sin(pos / 10000 ** (i / d))
            pe[pos, i + 1] = math.cos(pos / 10000 ** (i / d))
    return pe


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--head-dim", type=int, default=128)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    x = torch.randn(args.batch, args.heads, args.seq, args.head_dim)
    freqs_cis = precompute_freqs_cis(args.head_dim, args.seq)
    emb = torch.cat([freqs_cis.angle()] * 2, dim=-1)  # HF's cat((freqs, freqs))
    cos_full, sin_full = emb.cos(), emb.sin()

    rope = {
        "posenc apply_rope, interleaved": lambda: apply_rope(x, layout="interleaved"),
        "posenc apply_rope, half": lambda: apply_rope(x, layout="half"),
        "complex (Meta llama / notes)": lambda: complex_rope_peer(x, freqs_cis),
        "rotate_half (Hugging Face)": lambda: rotate_half_peer(x, cos_full, sin_full),
    }
    layout_of = {"posenc apply_rope, interleaved": "interleaved",
                 "posenc apply_rope, half": "half",
                 "complex (Meta llama / notes)": "interleaved",
                 "rotate_half (Hugging Face)": "half",
                 "rotary-embedding-torch": "interleaved"}
    try:
        from rotary_embedding_torch import RotaryEmbedding as PeerRotary

        peer = PeerRotary(dim=args.head_dim)
        rope["rotary-embedding-torch"] = lambda: peer.rotate_queries_or_keys(x)
        # same maths: check before timing (it uses the interleaved layout)
        torch.testing.assert_close(peer.rotate_queries_or_keys(x), apply_rope(x),
                                   atol=2e-3, rtol=1e-3)
    except ImportError:
        print("rotary-embedding-torch not installed: `make bench` installs it")
    torch.testing.assert_close(complex_rope_peer(x, freqs_cis), apply_rope(x),
                               atol=1e-3, rtol=1e-4)
    torch.testing.assert_close(rotate_half_peer(x, cos_full, sin_full),
                               apply_rope(x, layout="half"), atol=1e-3, rtol=1e-4)

    results = {name: median_seconds(fn, args.repeat) for name, fn in rope.items()}
    peers = {k: v for k, v in results.items() if not k.startswith("posenc")}
    fastest_peer = min(peers.values())
    fastest_same_layout = {
        layout: min(v for k, v in peers.items() if layout_of[k] == layout)
        for layout in ("interleaved", "half")}
    print(f"\nRoPE, float32, x = [{args.batch}, {args.heads}, {args.seq}, {args.head_dim}], "
          f"{args.threads} threads, median of {args.repeat}")
    print(f"{'implementation':34s} {'layout':>12s} {'ms':>8s} {'x fastest peer':>15s} "
          f"{'x fastest same-layout peer':>27s}")
    for name, sec in results.items():
        layout = layout_of[name]
        print(f"{name:34s} {layout:>12s} {sec * 1e3:8.1f} {sec / fastest_peer:15.2f} "
              f"{sec / fastest_same_layout[layout]:27.2f}")

    n, d = 2048, 512
    vec = median_seconds(lambda: sinusoidal_encoding(n, d), 7)
    loop = median_seconds(lambda: loop_sinusoidal(n, d), 1, warmup=0)
    print(f"\nsinusoidal_encoding({n}, {d}): {vec * 1e3:.2f} ms; notes' double loop: "
          f"{loop * 1e3:.0f} ms ({loop / vec:.0f}x slower)")

    RESULTS.mkdir(exist_ok=True)
    out = {
        "machine": {"cpu_count": torch.get_num_threads(), "platform": platform.platform(),
                    "torch": torch.__version__, "numpy": np.__version__},
        "rope_shape": [args.batch, args.heads, args.seq, args.head_dim],
        "rope_ms": {k: round(v * 1e3, 2) for k, v in results.items()},
        "rope_ratio_to_fastest_peer": {k: round(v / fastest_peer, 3) for k, v in results.items()},
        "rope_ratio_to_fastest_same_layout_peer": {
            k: round(v / fastest_same_layout[layout_of[k]], 3) for k, v in results.items()},
        "sinusoidal_ms": {"posenc": round(vec * 1e3, 3), "double_loop": round(loop * 1e3, 1)},
    }
    (RESULTS / "rope.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
