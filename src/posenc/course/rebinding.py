"""Chapter 13's rebinding section: the trained models and two readers that are not models,
side by side in one table.

The rebinding task (:mod:`posenc.retrieval`, ``task="rebinding"``) binds the queried key
twice and asks for its later value. The order-only circuit of :mod:`posenc.order_circuit`
solves the positional task with no position signal but not this one; the order-blind
oracle sees only the bag of bytes. :func:`reader_rows` scores both on the sequences the
models were scored on (:func:`posenc.experiments.extrapolation.reader_accuracy`), and
:func:`show_rebinding_table` shows them under the models of a ``rebinding`` results file.
"""

from __future__ import annotations

from .. import retrieval
from ..experiments.extrapolation import ExtrapolationConfig, reader_accuracy
from ..order_circuit import circuit_answer
from .tables import show_table

__all__ = ["READERS", "reader_rows", "show_rebinding_table"]

#: The readers that are not models, by the name the table gives them.
READERS = {"order-only circuit": circuit_answer,
           "order-blind reader": retrieval.order_blind_answer}


def reader_rows(results, heldout) -> dict[str, dict[str, list[float]]]:
    """``{reader: {task: [accuracy at each evaluation length]}}`` for :data:`READERS` on
    the results' own evaluation sequences of each trained retrieval task."""
    config = ExtrapolationConfig.from_dict(results["config"])
    return {name: {task: reader_accuracy(reader, config, heldout, task)
                   for task in config.retrieval_tasks}
            for name, reader in READERS.items()}


def _share(accuracy) -> str:
    """A share as a whole percentage; "—" past a learned table's last row."""
    return "—" if accuracy is None else f"{accuracy:.0%}"


def show_rebinding_table(results, readers: dict[str, dict[str, list[float]]]) -> None:
    """Each trained model of ``results`` (a ``rebinding`` run): the step it reached the
    criterion on held-out rebinding answers (× if not by the cap), its positional
    accuracy at 1x and its rebinding accuracy at every length (one column per length); then
    each reader's row."""
    config = ExtrapolationConfig.from_dict(results["config"])
    lengths = [f"{m}x" for m in config.eval_multipliers]
    rows = []
    for entry in results["variants"].values():
        if "history" not in entry:  # an evaluation-time variant: same weights
            continue
        learned = entry["steps_to_learn"]
        rows.append([entry["label"], "×" if learned is None else str(learned),
                     _share(entry["positional_accuracy"][0]),
                     *map(_share, entry["rebinding_accuracy"])])
    for name, accuracy in readers.items():
        rows.append([name, "(built, not trained)", _share(accuracy["positional"][0]),
                     *map(_share, accuracy["rebinding"])])
    show_table(["model", "learned at", "positional 1x", *lengths], rows,
               f"rebinding accuracy at each length, and the step each model reached 95 % of "
               f"held-out rebinding answers (×: not in {config.steps:,}; —: past the learned "
               f"table's last row); one seed",
               numbers_from=2, compact=True)
