"""Where a hybrid's order comes from (issue 36): the swap that only order can see, the
control that provably cannot see it, the training loop's stopping rule, and the committed
results' findings (posenc.experiments.order_probe, chapter 17)."""

import numpy as np
import pytest
import torch

from posenc import retrieval
from posenc.data import load_stdlib_corpus
from posenc.experiments.order_probe import (
    RECURRENCE_VARIANTS,
    SETTINGS,
    hybrid_pattern,
    load_order_probe,
    swap_sensitivity,
    swapped_values,
    train_order_probe,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tiny models: see conftest.py


@pytest.fixture(scope="module")
def corpus():
    return load_stdlib_corpus()


def test_the_swap_keeps_the_multiset_and_changes_the_ordered_answer(corpus):
    batch = retrieval.training_batch(corpus.heldout, 32, 64, np.random.default_rng(3),
                                     task="positional")
    swapped, first = swapped_values(batch)
    changed = 0
    for row, new, q in zip(batch.inputs.numpy(), swapped.numpy(), first.tolist(), strict=True):
        assert sorted(row[:q]) == sorted(new[:q]) and (row[q:] == new[q:]).all()
        # an order-blind reader answers both alike; a reader who sees order follows the swap
        assert retrieval.order_blind_answer(row, q) == retrieval.order_blind_answer(new, q)
        changed += retrieval.order_aware_answer(row, q) != retrieval.order_aware_answer(new, q)
    assert changed >= 8  # the query asks for one of the two swapped keys in about half


def test_only_the_control_cannot_see_the_swap():
    for name, options in RECURRENCE_VARIANTS.items():
        change = swap_sensitivity(options, seed=5)
        if name == "neither (control)":
            assert change < 1e-12, name
        else:
            assert change > 1e-8, name


def test_the_control_is_order_blind_for_any_permutation_before_the_query(corpus):
    """Not only the swap: the control's attention sees the tokens before the query as a set."""
    torch.manual_seed(0)
    from posenc.model import TinyLM, TinyLMConfig

    model = TinyLM(TinyLMConfig(pattern=hybrid_pattern(RECURRENCE_VARIANTS["neither (control)"]),
                                num_layers=2)).double().eval()
    tokens = torch.randint(0, 256, (1, 30))
    shuffled = tokens.clone()
    shuffled[0, :29] = tokens[0, torch.randperm(29)]
    with torch.no_grad():
        a, b = model(tokens)[0, 29], model(shuffled)[0, 29]
    assert torch.allclose(a, b, atol=1e-12)


def test_a_run_stops_at_its_criterion_or_its_cap(corpus):
    options = RECURRENCE_VARIANTS["convolution and decay"]
    small = dict(num_layers=2, batch_size=4, eval_batch=8, eval_every=2)
    capped = train_order_probe(corpus.train, corpus.heldout, options, max_steps=5,
                               criterion=1.0, **small)
    assert capped["step"] == [0, 2, 4, 5] and capped["steps_to_criterion"] is None
    assert np.isnan(capped["loss"][0]) and all(np.isfinite(capped["loss"][1:]))
    with pytest.raises(ValueError, match="max_steps must be"):
        train_order_probe(corpus.train, corpus.heldout, options, max_steps=0)


def test_the_committed_results_are_the_documented_settings():
    results = load_order_probe()
    assert results["settings"] == SETTINGS
    assert set(results["runs"]) == set(RECURRENCE_VARIANTS)
    for runs in results["runs"].values():
        for run in runs.values():
            reached = run["steps_to_criterion"]
            if reached is None:
                assert run["step"][-1] == SETTINGS["max_steps"]
                assert max(run["accuracy"]) < SETTINGS["criterion"]
            else:
                assert run["step"][-1] == reached
                assert run["accuracy"][-1] >= SETTINGS["criterion"]


def test_the_findings_hold_and_fail_on_doctored_results():
    import copy

    from posenc.course.figures.data_dependent import order_probe_findings

    results = load_order_probe()
    assert all(order_probe_findings(results).values())
    doctored = copy.deepcopy(results)
    run = doctored["runs"]["neither (control)"]["1"]
    run["accuracy"][len(run["accuracy"]) // 2] = 0.5  # one evaluation above the bound
    failed = [f for f, holds in order_probe_findings(doctored).items() if not holds]
    assert failed == ["the control stays at or below the order-blind bound in every seed, "
                      "at every step"]


def test_the_figure_is_legible_at_the_column_width():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from posenc.course.figures.data_dependent import draw_order_probe
    from posenc.course.figures.style import COLUMN_CSS_PX, COURSE_RC, FIGURE_WIDTH

    with plt.rc_context(COURSE_RC):
        fig = plt.figure(figsize=(FIGURE_WIDTH, 4.2), layout="constrained")
        draw_order_probe(fig, load_order_probe())
        fig.canvas.draw()
        width_in = fig.get_tightbbox(fig.canvas.get_renderer()).padded(0.05).width
        smallest = min(t.get_fontsize() for t in fig.findobj(Text)
                       if t.get_visible() and t.get_text().strip())
        plt.close(fig)
    assert smallest / 72 * COLUMN_CSS_PX / width_in >= 11
