"""Self-check questions of chapter 13, "Train short, test long, take four" (``13_long_context``).

Each has the id ``"long_context.<slug>"``; the numbers are computed from ``posenc``."""

from __future__ import annotations

from ._format import mc, number

#: The chapter these questions end (its notebook, without .ipynb).
CHAPTER = "13_long_context"


def questions() -> list[dict]:
    """The chapter's questions in their order on the page: jupyterquiz's dicts, each
    with its ``id``."""
    from ...experiments.extrapolation import PRESETS
    from ...retrieval import VALUE_BYTES

    chance = 100.0 / VALUE_BYTES.shape[1]
    pairs = PRESETS["main"].retrieval_pairs  # chapter 13's sequences
    return [
        number("long_context.content-chance",
               "In the content retrieval task every key has its own 15 values. What accuracy "
               "(in %) does a model get that always answers with one of the query key's values, "
               "picked at random?", round(chance, 1), 0.2,
               f"1 in 15: {chance:.1f} %. Anything above that used the sequence.",
               "Count the values a key can have; the model guesses uniformly among them."),
        mc("long_context.flat-loss-low-retrieval",
           "A model's held-out loss stays flat from 1× to 8× the training length, but its "
           "retrieval accuracy falls to near chance at long distances. What is the most "
           "likely reading?",
           "It predicts from nearby text; far tokens go unused",
           {"It has learnt to use the whole window, near and far alike":
                "Then it would find the answer far back as well as near.",
            "The retrieval test is broken at long lengths": "The same sequences score well "
                                                           "for other models; the test is the "
                                                           "same at every length."},
           "Most next bytes are predictable from the last few dozen; flat loss says nothing "
           "about the far ones, retrieval does (ALiBi's recency bias is the textbook case).",
           understanding=True),
        mc("long_context.decayed-rate-ranking",
           "Trained for 1,000 steps while the learning rate decays, method B is at chance on "
           "the positional task. With the rate held constant, B gets 95 % right by step 1,500. "
           "What did the first run show about B?",
           "How fast B learns, not what it can learn",
           {"That B cannot bind a value to the key before it": "The constant-rate run shows "
                                                               "that it can; at step 1,000 it "
                                                               "was still learning.",
            "That the task is too hard at this model size": "Then no schedule would teach "
                                                            "it; the constant rate does.",
            "That B learns the content task but not the positional one":
                "The first run says nothing about what B can learn: at step 1,000 it was still "
                "learning, and the constant rate gets it to 95 % on this very task."},
           "It had not learned yet when the rate had decayed. A model still learning shows how "
           "fast it learns, not what it cannot do: train to a stated criterion before "
           "comparing.",
           understanding=True),
        mc("long_context.seed-spread",
           "Two methods score 62 % and 60 % retrieval accuracy at 4× the training length; "
           "over the seeds each score moves by about ±5 points. What can you conclude?",
           "Not which is better: the gap is inside the spread",
           {"The first method is better, by 2 points": "One seed's 2 points are smaller than "
                                                       "the spread between seeds of the same "
                                                       "method.",
            "They are the same method in effect": "The error bars overlap, which says the "
                                                  "runs cannot tell them apart, not that "
                                                  "they are equal.",
            "The second would win with more seeds":
                "Nothing says which way more seeds would tip it; they would narrow the error "
                "bars, and only then could a gap of 2 points show."},
           "The gap is inside the seed-to-seed spread. This is why the chapter trains several "
           "seeds and draws error bars before ranking methods.",
           understanding=True),
        number("long_context.order-blind-best",
               f"On the positional task a sequence has {pairs} pairs whose values are shared "
               "by all keys. A reader sees which bytes the context holds and how often, but not "
               "their order. What accuracy (in %) can it reach at best?", 100 / pairs, 0.5,
               f"{100 / pairs:.0f} %: swapping two pairs' values leaves the bytes the same and "
               f"changes the answer, so it can only pick one of the {pairs} values present.",
               "Which values could be the answer, if you cannot see which key each follows?"),
        mc("long_context.content-not-position",
           f"A method scores 95 % on the content task and {100 / pairs:.0f} % on the positional "
           f"task ({pairs} pairs). What has it learned?",
           "Look-up by content, not by position",
           {"To use position, but not far back": "Then it would score above chance on the "
                                                "positional task at short distances.",
            "Nothing: both scores are chance": f"Chance on the content task is "
                                               f"1/{VALUE_BYTES.shape[1]}, {chance:.1f} %; "
                                               f"95 % is a real look-up.",
            "To use position well; the positional task is just harder":
                f"With {pairs} pairs, {100 / pairs:.0f} % is the best a reader blind to order "
                f"can get: the score shows no use of position at all."},
           "The content task is solved by a bag of bytes; the positional one needs order. A "
           "gap between them is a model that looks up content without binding it by position.",
           understanding=True),
    ]
