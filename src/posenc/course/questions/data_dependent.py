"""Self-check questions of chapter 17, "Where order comes from" (``17_data_dependent``).

Each has the id ``"data_dependent.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

import numpy as np

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "17_data_dependent"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...data_dependent import forgetting_attention_bias, stick_breaking_weights

    log_f = np.zeros(8)
    log_f[3:6] = np.log(0.5)  # tokens 3, 4, 5 forget half
    fox = float(forgetting_attention_bias(log_f)[5, 2])
    taken = float(stick_breaking_weights(np.zeros((3, 3)))[2].sum())  # three keys, logit 0
    return [
        number("data_dependent.fox-bias-between",
               "A FoX head reads 8 tokens. Tokens 3, 4 and 5 have forget gate f = 0.5, every "
               "other token f = 1. What bias does query 5 add to the logit of key 2? "
               "(two decimals)", round(fox, 2), 0.011,
               f"The tokens after the key up to the query are 3, 4 and 5: "
               f"3 · ln 0.5 = {fox:.3f}.",
               "Sum ln f over the tokens l with j < l ≤ i (the key's own gate does not count)."),
        mc("data_dependent.constant-gate",
           "Every token of a FoX head has the same forget gate f = e^(−m), whatever the text. "
           "What does the head's bias become?",
           "ALiBi's bias with slope m: −m (i − j)",
           {"No position at all (NoPE)": "That is f = 1: nothing is forgotten. With f = e^(−m) "
            "each token between query and key costs m.",
            "RoPE at frequency m": "FoX adds to the logits and never turns queries or keys; a "
            "constant sum of −m per token is a linear distance penalty."},
           "The sum of i − j equal terms ln f = −m is −m (i − j): FoX is ALiBi with slopes the "
           "tokens set for themselves.", understanding=True),
        number("data_dependent.stick-left",
               "A stick-breaking query sees three keys (itself included), each with logit 0, "
               "so each takes σ(0) = 1/2 of what is left. What total weight do the three keys "
               "take? (three decimals)", round(taken, 3), 0.0011,
               f"1 − (1 − 1/2)³ = {taken:.3f}; the rest of the stick, 0.125, goes back to the "
               "query's own value in the authors' code.",
               "The sum is 1 − Π(1 − σ(z)) over the keys."),
        mc("data_dependent.shift-logits",
           "Add the same constant +3 to every logit of one query. What happens to softmax "
           "attention and to stick-breaking attention?",
           "Softmax is unchanged; stick-breaking gives more to the nearest keys",
           {"Both are unchanged": "Softmax divides the constant out; stick-breaking's shares "
            "σ(z) grow, so the nearest keys take more and leave less for the far ones.",
            "Both move weight to the nearest keys": "Softmax weights depend only on "
            "differences of logits, so a common shift changes nothing."},
           "σ(z + 3) is closer to 1: the first keys the stick meets (the nearest) take "
           "almost all of it. Recency comes from the order the stick is broken in, with no "
           "position in the scores.", understanding=True),
        mc("data_dependent.path-fixed-w",
           "PaTH multiplies the key by one Householder matrix H_t per token between key and "
           "query. If every token had the same w and β (nothing computed from the text), "
           "what would the logit depend on?",
           "q, k and the distance i − j only: a relative encoding, as RoPE",
           {"q and k only, as with no position": "Each token between them still applies "
            "its H; the product has i − j factors.",
            "The absolute positions i and j": "The product of i − j equal factors is the same "
            "wherever it starts."},
           "With one fixed H the product is H^(i−j); PaTH's point is that H_t comes from the "
           "tokens, so the same distance can mean different things.", understanding=True),
        mc("data_dependent.set-not-order",
           "A hybrid has one recurrent layer, then one attention layer with no position. "
           "Remove the recurrent layer's convolution and its decay, so it works token by "
           "token. What can the attention at a query tell about the tokens before it?",
           "Which tokens are there and how often, not in what order",
           {"Their order, from the causal mask": "The mask says which tokens come before the "
            "query, not in what order: any permutation of them gives the same output. (Stacked "
            "attention layers with no position can recover positions from the mask, "
            "Kazemnejad et al., 2023; one layer on per-token features cannot.)",
            "Nothing at all": "The scores still compare the query with each earlier token's "
            "content, and the weights sum over them: the set of tokens is seen."},
           "Softmax attention over per-token features is a weighted sum over the set of "
           "earlier tokens: swapping two of them changes nothing. The convolution or the decay "
           "is what puts order in.", understanding=True),
    ]
