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
    from ...configs import kv_cache, load_bundled, read_config

    llama = load_bundled("llama-3.1-8b")
    kib = kv_cache(llama).bytes_per_token(4096) / 1024
    qwen = load_bundled("qwen3-8b")
    yarn = read_config({**qwen, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                 "original_max_position_embeddings": 32768}})
    changed = int((yarn.layers[0].frequencies != read_config(qwen).layers[0].frequencies).sum())
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
           "No: a window layer never meets a distance of 4,096 or more, at any length",
           {"Yes: the slow pairs pass the training length": "The angle depends on the "
            "distance between query and key, and the window caps it.",
            "Only if the base is below 10⁴": "The base decides how fast pairs turn, not "
            "which distances a windowed layer meets."},
           "RoPE's angle depends on the query-key distance, which a window caps.",
           understanding=True),
        mc("reading_configs.partial-rotary-meanings",
           "Two configs have partial_rotary_factor 0.25 on the same head, one with rope_type "
           "default, one with rope_type proportional. Which one drops the slow frequencies?",
           "proportional: it keeps the head's own spacing on the first quarter of pairs and "
           "zeroes the rest",
           {"default: it keeps a quarter of the features": "default squeezes the whole "
            "range, down to nearly 1/base, into fewer pairs: it keeps the slow frequencies.",
            "Neither: both give the same frequencies": "Same number of rotated pairs, "
            "different frequencies: base^(−2i/rotary_dim) against base^(−2i/head_dim)."},
           "p-RoPE keeps base^(−2i/head_dim) on the fast pairs and sets the slow ones to 0.",
           understanding=True),
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
           "Nothing: max_model_len sizes the engine's limit and cache, not the rotation",
           {"They are scaled by 4, like YaRN": "Only a rope_scaling block (or "
            "rope_parameters) changes the frequencies.",
            "The engine switches to dynamic NTK": "A limit is not a scaling: the "
            "frequencies come from the config's rope fields or an override of them."},
           "The slow pairs then meet angles they never saw past 32,768 tokens.",
           understanding=True),
        mc("reading_configs.order-without-rope",
           "Kimi Linear's attention layers (multi-head latent attention, about one layer in four) "
           "apply no RoPE, and its other layers are Kimi Delta Attention. Where does the "
           "model's sense of order come from?",
           "From the Kimi Delta Attention layers: a recurrence with a short convolution "
           "reads the tokens in order",
           {"From the latent attention's decoupled rotary key": "Kimi Linear builds no "
            "rotary embedding at all: its k_rot is never rotated.",
            "Nowhere: the model cannot tell word order": "A causal recurrence sees the "
            "tokens one after another, so its state depends on their order."},
           "A recurrent layer carries order in its state; attention then reads it from there.",
           understanding=True),
    ]
