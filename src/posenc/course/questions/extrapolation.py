"""Self-check questions of chapter 9, "Train short, test long" (``09_extrapolation``).

Each has the id ``"extrapolation.<slug>"``; the numbers are read from the committed results
the chapter plots (``extrapolation_results.json``) or computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "09_extrapolation"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...alibi import alibi_slopes
    from ...experiments.extrapolation import binned_mean
    from ..results import load_results

    results = load_results("extrapolation_results.json")
    train = results["train_length"]
    variants = results["variants"]
    loss = {name: np.array(v["loss"], dtype=float) for name, v in variants.items()
            if name != "learned"}
    # the loss-by-position figure: 1024-byte windows, bins of 32 positions
    bins = {name: binned_mean(variants[name]["per_position_loss"], 32)[1]
            for name in ("sinusoidal", "rope", "rope_pi")}
    first = train // 32  # the bin of positions L_train .. L_train + 31
    sinusoidal, rope = bins["sinusoidal"], bins["rope"]
    assert sinusoidal[first] > sinusoidal[first - 1] + 0.5  # jumps at once
    assert rope[first] <= rope[:first].max() and rope[first + 2] > rope[first] + 0.5
    per_position = {n: np.array(variants[n]["per_position_loss"]) for n in ("rope", "rope_pi")}
    pi_gap = per_position["rope_pi"][:train].mean() - per_position["rope"][:train].mean()
    assert pi_gap > 1
    # ALiBi's flat loss: its gain at 8x, and the weight its gentlest head leaves at 1000 back
    gain = loss["alibi"][0] - loss["alibi"][-1]
    t5_lead = loss["alibi"][0] - loss["t5"][0]
    gentlest = float(alibi_slopes(4)[-1])
    assert 0 < gain < 0.02 and t5_lead > 0.1 and loss["t5"][0] == min(v[0] for v in loss.values())
    return [
        mc("extrapolation.learned-table-past-training",
           f"A model trained on {train}-byte sequences with a learned absolute table is run on "
           f"{4 * train} bytes. What do positions {train} to {4 * train - 1} use?",
           "Nothing trained: there are no rows for them",
           {f"The rows of positions 0 to {train - 1} again, wrapped around":
                "Only if you wrap the index yourself, which the model never saw.",
            "Rows learned during evaluation, from the first windows":
                "Nothing is learned at test time.",
            f"Copies of row {train - 1}, the last row that was trained":
                "Only if you clamp the index yourself; then every position past it gets the "
                "same vector and they can no longer be told apart."},
           "This is why the chapter also tries a stretched (interpolated) table.",
           understanding=True),
        mc("extrapolation.loss-by-position",
           "Why does the chapter compare losses by position rather than only one average "
           "per length?",
           "An average hides where past L_train the loss starts to rise",
           {"Because the average over a window is the same at every length":
                "It is not; but it mixes seen and unseen positions.",
            "Because position 0 is never scored": "Position is about where the failure "
                                                  "starts.",
            "Because a per-position curve is less noisy than an average":
                "It is noisier: each point averages fewer bytes. It is kept because it shows "
                "where past the training length a model fails, and how."},
           "Loss by position shows whether the model fails right after L_train or later.",
           understanding=True),
        mc("extrapolation.rope-past-training",
           f"In the loss-by-position figure (1024-byte windows, trained at {train}), what does "
           f"RoPE's curve do just past position {train}?",
           "It holds for about 32 positions, then jumps",
           {"It jumps at once, as sinusoidal's does":
                f"That is sinusoidal's curve, which goes from {sinusoidal[first - 1]:.2f} to "
                f"{sinusoidal[first]:.2f} right at position {train}. RoPE's is still "
                f"{rope[first]:.2f} for positions {train} to {train + 31}.",
            "It stays flat: RoPE's scores depend only on i − j":
                "Being relative is not enough: past L_train the slow pairs meet angles training "
                "never produced, and the loss climbs by most of a nat.",
            "It rises slowly and evenly to the end of the window":
                f"It does not rise evenly: it stays at {rope[first]:.2f} for 32 positions, then "
                f"jumps to {rope[first + 2]:.2f} within the next 64."},
           f"In bins of 32 positions RoPE's loss is {rope[first]:.2f} for {train} to "
           f"{train + 31}, no worse than before, then {rope[first + 1]:.2f} and "
           f"{rope[first + 2]:.2f}. A little past L_train the slow pairs' angles are still close "
           f"to trained ones; farther on they are not.",
           understanding=True),
        mc("extrapolation.rope-pi-from-the-start",
           "At 8× the training length, RoPE + PI's per-position curve is high from the very "
           "first positions, where plain RoPE is on familiar ground. Why?",
           "PI squeezes the fast pairs: neighbours look 1/8 apart",
           {"It was trained with PI and learned worse weights":
                "It was not trained with PI: RoPE + PI reuses plain RoPE's trained weights and "
                "changes only the frequencies at evaluation.",
            "The first bytes of each window have almost no context":
                f"That early-token curse hits every model alike; plain RoPE, with the same "
                f"weights, is {pi_gap:.2f} nats lower over the first {train} positions.",
            "Its slow pairs meet angles they never saw in training":
                "That is plain RoPE's trouble past L_train; PI keeps every slow pair inside its "
                "trained range. What it breaks is the fast pairs."},
           f"Dividing every frequency by s = 8 keeps the slow pairs in range, but it rotates "
           f"neighbours by θ₀/8, a distance of 1/8 byte the model never saw: over the first "
           f"{train} positions its loss is {pi_gap:.2f} nats above plain RoPE's, with the same "
           f"weights. Chen et al. fine-tune after interpolating; this experiment does not.",
           understanding=True),
        mc("extrapolation.alibi-far-tokens",
           "ALiBi's bias grows linearly with distance. What does that do to far tokens at "
           "test lengths never seen in training?",
           "They get ever smaller weights, and attention stays local",
           {"They get larger weights, since the bias is added to the score":
                "The bias is negative, −m·(i − j), and grows in size with distance.",
            "Nothing: the bias stops growing at the training length": "ALiBi's bias has no "
                                                                     "cut-off.",
            "Random weights: the model never saw those distances":
                "The bias is a formula, defined at every distance: unseen distances get ever "
                "smaller weights, not random ones."},
           f"The penalty keeps attention local, so longer inputs look like familiar ones: with 4 "
           f"heads the gentlest slope is 1/{1 / gentlest:.0f}, and even that head multiplies the "
           f"weight of a byte 1000 back by e^(−{gentlest * 1000:.1f}) ≈ "
           f"{np.exp(-gentlest * 1000):.2f}.",
           understanding=True),
        mc("extrapolation.flat-loss-meaning",
           "ALiBi's mean loss at 8× the training length is slightly lower than at 1×. What "
           "does that show?",
           "That it survives long inputs, not that it uses them",
           {"That it reads the extra context and predicts better from it":
                f"The gain is only {gain:.3f} nats, and Press et al. trace it to the early-token "
                f"curse: a longer window has fewer bytes predicted from almost no context.",
            "That ALiBi learns better than the other encodings":
                f"T5 has the lowest loss at the training length in this run, {t5_lead:.2f} nats "
                f"below ALiBi; a flat curve says nothing about its level.",
            "Nothing: a loss that falls past L_train must be a bug in the evaluation":
                "It is real and repeatable, in all three seeds and in the paper: with windows "
                "that do not overlap, a longer window has fewer bytes predicted from almost "
                "no context."},
           f"In a 1024-byte window a byte sees eight times more text, yet ALiBi's loss falls by "
           f"only {gain:.3f} nats. Evaluated with a sliding window, where every byte gets a full "
           f"context, Press et al. saw the gain disappear. To learn whether a model uses far "
           f"text, ask it to retrieve something: chapter 13 does.",
           understanding=True),
    ]
