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
    from ..figures.data_dependent import sentence_logits

    log_f = np.zeros(8)
    log_f[3:6] = np.log(0.5)  # tokens 3, 4, 5 forget half
    fox = float(forgetting_attention_bias(log_f)[5, 2])
    taken = float(stick_breaking_weights(np.zeros((3, 3)))[2].sum())  # three keys, logit 0
    # the stick-breaking figure: the last query over 16 keys, its shift slider at 0 and +2;
    # the share of the 4 nearest keys (the query included) under each normalisation
    near = {}
    for shift in (0.0, 2.0):
        z = sentence_logits(16, 0) + shift
        logits = np.full((16, 16), -np.inf)
        logits[-1] = z
        soft = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        near[shift] = (float(soft[-4:].sum()), float(stick_breaking_weights(logits)[-1][-4:].sum()))
    assert np.isclose(near[0.0][0], near[2.0][0]) and near[2.0][1] > near[0.0][1]
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
           {"No position at all: a constant gate carries no information": "That is f = 1: "
            "nothing is forgotten. With f = e^(−m) each token between query and key costs m.",
            "A rotation by m per token, like RoPE": "FoX adds to the logits and never turns "
            "queries or keys; a constant sum of −m per token is a linear distance penalty.",
            "A bias that depends on the absolute position i": "Each token between the key and "
            "the query adds the same ln f = −m: the sum depends on how many there are, i − j, "
            "not on where."},
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
           "In the stick-breaking figure (one query, 16 keys) you move the logit shift slider "
           "from 0 to +2, adding 2 to every logit. Predict the two sets of bars.",
           "Only the stick-breaking bars change: the nearest keys take more",
           {"Neither changes: the shift adds the same to every key": "Softmax divides the "
            "constant out; stick-breaking's shares σ(z) grow, so the nearest keys take more "
            "and leave less for the far ones.",
            "Both move weight to the nearest keys": "Softmax weights depend only on "
            "differences of logits, so a common shift changes nothing.",
            "Only the softmax bars change: softmax exponentiates the shift": "The common factor "
            "e² cancels in softmax's division; stick-breaking's σ(z + 2) does not cancel."},
           f"Move the shift to +2: the softmax bars stay put, and the 4 nearest keys' share of "
           f"stick-breaking goes from {near[0.0][1]:.2f} to {near[2.0][1]:.2f} (softmax: "
           f"{near[0.0][0]:.2f} at both). σ(z + 2) is closer to 1, so the first keys the stick "
           f"meets take almost all of it: recency with no position in the scores.",
           understanding=True, predict=True),
        mc("data_dependent.path-fixed-w",
           "PaTH multiplies the key by one Householder matrix H_t per token between key and "
           "query. If every token had the same w and β (nothing computed from the text), "
           "what would the logit depend on?",
           "q, k and the distance i − j, as with RoPE",
           {"q and k only, as with no position": "Each token between them still applies "
            "its H; the product has i − j factors.",
            "The absolute positions i and j": "The product of i − j equal factors is the same "
            "wherever it starts.",
            "q, k and the contents of the tokens between them": "With the same w and β for "
            "every token, their contents no longer enter H_t: only how many there are."},
           "With one fixed H the product is H^(i−j), a relative encoding, as RoPE; PaTH's point "
           "is that H_t comes from the tokens, so the same distance can mean different things.",
           understanding=True),
        mc("data_dependent.set-not-order",
           "A hybrid has one recurrent layer, then one attention layer with no position. "
           "Remove the recurrent layer's convolution and its decay, so it works token by "
           "token. What can the attention at a query tell about the tokens before it?",
           "Which tokens are there and how often, but not their order",
           {"Their order, from the causal mask": "The mask says which tokens come before the "
            "query, not in what order: any permutation of them gives the same output. (Stacked "
            "attention layers with no position can recover positions from the mask, "
            "Kazemnejad et al., 2023; one layer on per-token features cannot.)",
            "Nothing at all: without position every score is alike": "The scores still "
            "compare the query with each earlier token's content, and the weights sum over "
            "them: the set of tokens is seen.",
            "Their order, but only for the last few tokens": "Without the convolution nothing "
            "sees the last few tokens at their own offsets: every earlier token is one more "
            "member of a set."},
           "Which tokens are there and how often: softmax attention over per-token features is a "
           "weighted sum over the set of earlier tokens, and swapping two of them changes "
           "nothing. The convolution or the decay is what puts order in.", understanding=True),
    ]
