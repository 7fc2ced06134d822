"""FIRE (Li et al., ICLR 2024): a small MLP of the progressively normalised distance.

The ``score_bias`` hook: head ``h`` adds ``f(psi(i-j) / psi(max(L, i)))[h]`` with
``psi(x) = log(c x + 1)``, ``f`` an MLP ``1 -> width -> num_heads`` (ReLU), and ``c``
and the threshold ``L`` learned. The normalised distance is
:func:`posenc.learned_bias.fire_normalized_distance`.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .._validation import check_bool, check_float, check_int
from ..learned_bias import causal_distances, fire_normalized_distance
from .positions import AttentionSpec, PositionEncoding, register_position

__all__ = ["FIREBias", "fit_fire"]


class FIREBias(PositionEncoding):
    """FIRE's bias ``[num_heads, q, k]``, as in the paper's reference code.

    ``c`` starts at ``init_c = 0.1``; the threshold is ``|L_multiplier * init_L|``
    with ``init_L = 512`` a fixed buffer and ``L_multiplier`` a parameter starting at 1
    (the reference code's way of learning ``L`` at a sensible scale); ``eps = 1e-6``.
    The MLP has ``width`` (32) hidden units, PyTorch's default initialisation.

    FIRE is defined for causal attention (query ``i`` sees keys ``j <= i``, so
    ``i - j <= i``). In a bidirectional layer this module uses ``|i - j|`` normalised
    by ``max(L, i, j)``: the course's extension, so that any layer can run it.
    Distances and the normalisation are computed in at least float32; the MLP runs in its own
    dtype; the bias is returned in the queries' dtype.
    """

    def __init__(self, num_heads: int, *, width: int = 32, init_c: float = 0.1,
                 init_L: float = 512.0, causal: bool = True, eps: float = 1e-6):
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads)
        width = check_int("width", width)
        check_bool("causal", causal)
        self.causal = causal
        self.eps = check_float("eps", eps, greater_than=0.0)
        self.mlp = nn.Sequential(nn.Linear(1, width), nn.ReLU(), nn.Linear(width, num_heads))
        self.c = nn.Parameter(torch.tensor(check_float("init_c", init_c, greater_than=0.0)))
        self.register_buffer("init_L", torch.tensor(check_float("init_L", init_L,
                                                                at_least=0.0)))
        self.L_multiplier = nn.Parameter(torch.tensor(1.0))

    @property
    def threshold(self) -> torch.Tensor:
        """The learned threshold ``L = |L_multiplier * init_L|`` (a 0-d tensor)."""
        return (self.L_multiplier * self.init_L).abs()

    def normalized_distance(self, query_length: int,
                            key_length: int | None = None) -> torch.Tensor:
        """``psi(i - j) / psi(max(L, i))``: ``[q, k]``, at least float32, differentiable
        in ``c`` and ``L``."""
        key_length = query_length if key_length is None else key_length
        distance = torch.from_numpy(causal_distances(query_length, key_length,
                                                     causal=self.causal)).float()
        i = torch.arange(key_length - query_length, key_length, dtype=torch.float32)[:, None]
        if not self.causal:  # the course's bidirectional extension: normalise by max(i, j)
            i = torch.maximum(i, torch.arange(key_length, dtype=torch.float32)[None, :])
        device = self.c.device
        dtype = torch.promote_types(self.c.dtype, torch.float32)
        return fire_normalized_distance(distance.to(device, dtype), i.to(device, dtype),
                                        self.c.to(dtype), self.threshold.to(dtype), self.eps)

    def forward(self, query_length: int, key_length: int | None = None) -> torch.Tensor:
        x = self.normalized_distance(query_length, key_length)
        weight = self.mlp[0].weight
        bias = self.mlp(x.to(weight.dtype).unsqueeze(-1))  # [q, k, h]
        return bias.permute(2, 0, 1)  # [h, q, k]

    def score_bias(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return self(q.shape[-2], k.shape[-2]).to(q.device, q.dtype)


def _fire_cost(b: int, h: int, n: int, d: int, width: int = 32) -> dict[str, int]:
    """The MLP on every (query, key) pair: ``2 L^2 (width + width h)`` FLOPs, plus adding
    the ``[h, L, L]`` bias (``b h L^2``); memory: the ``[L, L, width]`` hidden layer and
    the bias."""
    mlp = 2 * n * n * (width + width * h)
    return {"matmul_flops": mlp, "elementwise_flops": b * h * n * n + n * n * width,
            "memory": n * n * width + h * n * n}


def _build_fire(spec: AttentionSpec, *, fire_width: int = 32, fire_init_L: float = 512.0):
    return FIREBias(spec.num_heads, width=fire_width, init_L=fire_init_L, causal=spec.causal)


register_position("fire", FIREBias, build=_build_fire)


def fit_fire(target, *, threshold: float | None = None, width: int = 32, steps: int = 1000,
             learning_rate: float = 0.05, seed: int = 0, snapshots=()) -> dict:
    """Fit one FIRE head to a bias that depends on the distance only.

    ``target`` is ``[n]``: the bias wanted at distances ``0 .. n-1``. With the threshold
    ``L`` at least ``n - 1`` (the default ``n - 1``) the normaliser is the constant
    ``psi(L)`` for every query, so FIRE is then a function of the distance alone, and the
    MLP and ``c`` are trained (Adam, mean squared error, fixed ``seed``) to match the
    target at every distance. Returns ``{"distance", "target", "fit", "c", "snapshots"}``
    (numpy float64 arrays; ``snapshots`` maps each step in ``snapshots`` to the fit then).

    The fit runs in float64 with the rate decayed to 0 on a cosine over ``steps``. At a
    constant rate it is chaotic: ``psi`` takes ``|c x|``, so a line drives ``c`` to the
    kink at 0, where Adam's steps can throw the fit off a near-perfect solution, and
    which run that happens to depends on rounding, i.e. on the CPU kernels torch picks
    (a float32 fit at 0.03 ended at 1 % of the range with one kernel and 17 % with
    another). Decayed, every seed and kernel tried ends within a few percent.
    """
    target = torch.as_tensor(np.asarray(target, dtype=np.float64), dtype=torch.float64)
    n = check_int("len(target)", target.numel(), minimum=2)
    steps = check_int("steps", steps, minimum=0)
    learning_rate = check_float("learning_rate", learning_rate, greater_than=0.0)
    threshold = float(n - 1) if threshold is None else check_float("threshold", threshold,
                                                                     at_least=n - 1)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        fire = FIREBias(1, width=width, init_L=threshold)
    fire = fire.double()
    fire.L_multiplier.requires_grad_(False)  # L stays >= n - 1: a function of distance
    optimiser = torch.optim.Adam([p for p in fire.parameters() if p.requires_grad],
                                 lr=learning_rate)

    def current():  # the last query's row, keys n-1 .. 0: distances 0 .. n-1
        x = fire.normalized_distance(1, n)[0].flip(0)
        return fire.mlp(x.unsqueeze(-1))[:, 0]

    taken = {}
    for step in range(steps + 1):
        if step in snapshots:
            taken[step] = current().detach().numpy().copy()
        if step == steps:
            break
        for group in optimiser.param_groups:  # cosine decay, from the full rate to 0
            group["lr"] = learning_rate * 0.5 * (1 + math.cos(math.pi * step / steps))
        optimiser.zero_grad()
        loss = (current() - target).pow(2).mean()
        loss.backward()
        optimiser.step()
    return {"distance": np.arange(n, dtype=np.float64), "target": target.numpy().copy(),
            "fit": current().detach().numpy().copy(), "c": fire.c.item(), "snapshots": taken}
