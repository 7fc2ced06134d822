"""Chapter 13's rebinding table: every trained model of the committed run and both readers,
each reader scored on the run's own evaluation sequences."""

from unittest import mock

from posenc.course import rebinding as rb
from posenc.course.results import load_results
from posenc.data import load_stdlib_corpus
from posenc.experiments.extrapolation import ExtrapolationConfig


def test_the_table_lists_every_trained_model_then_the_readers():
    results = load_results("rebinding.json")
    config = ExtrapolationConfig.from_dict(results["config"])
    readers = rb.reader_rows(results, load_stdlib_corpus().heldout)
    assert set(readers) == set(rb.READERS)
    assert all(len(row) == len(config.eval_lengths) for by_task in readers.values()
               for row in by_task.values())
    assert readers["order-only circuit"]["positional"] == [1.0] * 4
    with mock.patch.object(rb, "show_table") as shown:
        rb.show_rebinding_table(results, readers)
    header, rows, label = shown.call_args.args
    assert header == ["model", "learned at", "positional 1x", "1x", "2x", "4x", "8x"]
    trained = [e for e in results["variants"].values() if "history" in e]
    assert [r[0] for r in rows] == [e["label"] for e in trained] + list(rb.READERS)
    for row, entry in zip(rows, trained, strict=False):
        learned = entry["steps_to_learn"]
        assert row[1] == ("×" if learned is None else str(learned))
        eight = entry["rebinding_accuracy"][-1]
        assert row[-1] == ("—" if eight is None else f"{round(100 * eight)}%")
    learned_row = rows[[e["label"] for e in trained].index("learned")]
    assert learned_row[4:] == ["—"] * 3  # no row past L_train
    assert "not in 2,000" in label
