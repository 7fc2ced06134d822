"""Self-check questions of chapter 15, "Reading a model's position settings"
(``15_reading_configs``).

Each has the id ``"reading_configs.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "15_reading_configs"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    import numpy as np

    from ...configs import kv_cache, load_bundled, read_config
    from ..figures.configs import partial_rotary_frequencies

    llama = load_bundled("llama-3.1-8b")
    kib = kv_cache(llama).bytes_per_token(4096) / 1024
    qwen = load_bundled("qwen3-8b")
    yarn = read_config({**qwen, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                 "original_max_position_embeddings": 32768}})
    changed = int((yarn.layers[0].frequencies != read_config(qwen).layers[0].frequencies).sum())
    # the partial_rotary_factor figure (head 256, base 1e6): its slider at 0.25 and at 1
    quarter = partial_rotary_frequencies(0.25)
    whole = partial_rotary_frequencies(1.0)
    neox, prope = (quarter[k] for k in ("partial (GPT-NeoX)", "proportional (p-RoPE)"))
    slowest = {k: float(v[np.flatnonzero(v)[-1]]) for k, v in quarter.items()}
    assert np.array_equal(*whole.values()) and np.count_nonzero(neox) == np.count_nonzero(prope)
    assert slowest["partial (GPT-NeoX)"] < 1e-4 < slowest["proportional (p-RoPE)"]
    return [
        number("reading_configs.kv-bytes-per-token",
               "Llama 3.1 8B: 32 layers, 8 key-value heads of 128 numbers, no window. How many "
               "KiB of KV cache does one token cost in bf16 (2 bytes per number)?", kib, 0.01,
               f"32 layers × (key + value) 2 × 8 heads × 128 × 2 bytes = {kib:g} KiB.",
               "Count a key and a value per KV head and per layer, 2 bytes each."),
        mc("reading_configs.window-and-unseen-angles",
           "A model's sliding-window layers (window 4,096) rotate with a small base and no "
           "scaling. You serve it at 1M tokens. Do those layers meet rotation angles they "
           "never saw in training?",
           "No: the window caps every distance below 4,096",
           {"Yes: the slow pairs pass the training length": "The angle depends on the "
            "distance between query and key, and the window caps it.",
            "Only if the base is below 10⁴, where pairs turn fast": "The base decides how fast "
            "pairs turn, not which distances a windowed layer meets.",
            "Yes, but only in the fast pairs, which turn the most": "The fast pairs saw every "
            "angle in training, and a window layer meets no distance of 4,096 or more in any "
            "pair."},
           "A window layer never meets a distance of 4,096 or more, at any length: RoPE's angle "
           "depends on the query-key distance, which the window caps.",
           understanding=True),
        mc("reading_configs.partial-rotary-meanings",
           "Two configs have partial_rotary_factor 0.25 on the same head, one with rope_type "
           "default, one with rope_type proportional. Which one drops the slow frequencies?",
           "proportional, which keeps the fast pairs only",
           {"default: it keeps only a quarter of the features": "default squeezes the whole "
            "range, down to nearly 1/base, into fewer pairs: it keeps the slow frequencies.",
            "Neither: both give the same frequencies": "Same number of rotated pairs, "
            "different frequencies: base^(−2i/rotary_dim) against base^(−2i/head_dim).",
            "Both: each rotates only a quarter of the head": "Both rotate a quarter, but only "
            "proportional drops the slow end; default squeezes the whole range into its "
            "quarter."},
           "proportional (p-RoPE) keeps the head's own spacing, base^(−2i/head_dim), on the "
           "first quarter of pairs, the fast ones, and sets the slow ones to 0.",
           understanding=True),
        mc("reading_configs.partial-rotary-slider",
           "In the figure “Two meanings of partial_rotary_factor” (head 256, base 10⁶), you "
           "move the slider from 0.25 to 1. Predict the two lines.",
           "They become one line: plain RoPE",
           {"They stay apart: each keeps its own spacing at any fraction":
                "At 1, rotary_dim is the whole head, so base^(−2i/rotary_dim) and "
                "base^(−2i/head_dim) are the same ladder. Move the slider to 1 and the lines "
                "meet.",
            "The proportional line drops to 0 on every pair":
                "proportional zeroes the pairs past the fraction; at 1 there are none past it, "
                "so every pair rotates.",
            "The default line keeps only its fast pairs, as proportional did":
                "default never drops a frequency: at any fraction it spans the whole range, "
                "down to nearly 1/base."},
           f"Move the slider to 1: both meanings rotate all {len(neox)} pairs at base^(−2i/256), "
           f"plain RoPE. At 0.25 both rotate {np.count_nonzero(neox)} pairs, but default's "
           f"slowest turns at {slowest['partial (GPT-NeoX)']:.1e} rad per token and "
           f"proportional's at {slowest['proportional (p-RoPE)']:.2f}.",
           understanding=True, predict=True),
        number("reading_configs.static-yarn-pairs",
               "Qwen3-8B (head 128, 64 pairs, base 10⁶) with YaRN factor 4 and "
               "original_max_position_embeddings 32,768 added. For a 2,000-token prompt, how "
               "many of its 64 pairs rotate at a frequency different from training?",
               changed, 0.1,
               f"Static YaRN scales every prompt: the blended and interpolated pairs, "
               f"{changed} of 64, differ at any length.",
               "The frequencies do not depend on the prompt's length with static YaRN: count "
               "the pairs YaRN does not keep."),
        mc("reading_configs.max-model-len",
           "You raise vLLM's max_model_len from 32,768 to 131,072 for a model trained on "
           "32,768 tokens, and change nothing else. What happens to its RoPE frequencies?",
           "Nothing: it is a limit on length, not a scaling",
           {"They are scaled by 4, like YaRN with factor 4": "Only a rope_scaling block (or "
            "rope_parameters) changes the frequencies.",
            "The engine switches to dynamic NTK past 32,768": "A limit is not a scaling: the "
            "frequencies come from the config's rope fields or an override of them.",
            "The base is raised 4-fold to cover the new length": "Nothing raises the base: the "
            "frequencies come from the config's rope fields alone."},
           "max_model_len sizes the engine's limit and cache, not the rotation: the slow pairs "
           "then meet angles they never saw past 32,768 tokens.",
           understanding=True),
        mc("reading_configs.order-without-rope",
           "Kimi Linear's attention layers (multi-head latent attention, about one layer in four) "
           "apply no RoPE, and its other layers are Kimi Delta Attention. Where does the "
           "model's sense of order come from?",
           "From the recurrence of the Kimi Delta Attention layers",
           {"From the latent attention's decoupled rotary key": "Kimi Linear builds no "
            "rotary embedding at all: its k_rot is never rotated.",
            "Nowhere: the model cannot tell word order": "A causal recurrence sees the "
            "tokens one after another, so its state depends on their order."},
           "They are a recurrence with a short convolution, which reads the tokens in order: a "
           "recurrent layer carries order in its state, and attention then reads it from there.",
           understanding=True),
    ]
