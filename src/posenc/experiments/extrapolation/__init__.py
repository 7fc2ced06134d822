"""Train short, test long: length extrapolation of position encodings on a laptop CPU.

The protocol of Press, Smith & Lewis (ALiBi, ICLR 2022), scaled down: train one tiny
byte-level language model (:class:`posenc.model.TinyLM`) per position encoding, all with
the same data order, steps and seed, on sequences of ``train_length`` bytes of Python
standard-library source (:mod:`posenc.data`); then, without further training, measure
the held-out loss at every position of sequences ``1x, 2x, 4x, 8x`` as long. Any
registered method (:data:`posenc.nn.POSITIONS`) can be trained; what the experiment does
with a method beyond that is registered in :mod:`.methods` (evaluation-time variants,
fine-tuning, extra numbers recorded). The evaluation-time variants reuse trained weights:

* ``rope_pi``: the RoPE model with Position Interpolation (Chen et al., 2023): all
  frequencies divided by ``s = L_eval / L_train`` (``posenc.scaling``, ``method="linear"``),
  so every position maps back into the trained range.
* ``learned_interp``: the learned-table model with its table linearly stretched to
  ``L_eval`` rows. The plain ``learned`` model is *not defined* past ``train_length``
  (there is no row to look up): its entries there are ``null``.

Its parts, one job each: :mod:`.methods` (the protocol per method, beside the registry
of :mod:`posenc.nn`), :mod:`.variants` (what the results call a variant, as a value),
:mod:`.config` (what decides the numbers), :mod:`.training`,
:mod:`.evaluation`, :mod:`.finetuning`, :mod:`.run` (every run in parallel and the
results dict), :mod:`.results` (the results file's typed records, its schema version and
the migration of older files), :mod:`.analysis` (reading a results file) and :mod:`.cli`
(the command line, run by ``__main__``). Run it (the full configuration takes minutes;
see the chapter for timings)::

    python -m posenc.experiments.extrapolation \
        --output src/posenc/course/results/extrapolation_results.json

``--preset small`` is the configuration the chapter runs live; every field can be
overridden (``--help``). The same command on the same machine gives the same numbers.
The figures of the results are in :mod:`posenc.course.figures.extrapolation`.
"""

from ...compare import PUBLISHED_WIKITEXT103
from . import (
    analysis,
    config,
    evaluation,
    finetuning,
    methods,
    results,
    run,
    training,
    variants,
)
from .analysis import *  # noqa: F403
from .cli import main
from .config import *  # noqa: F403 (the public names of each part, listed in its __all__)
from .evaluation import *  # noqa: F403
from .finetuning import *  # noqa: F403
from .methods import *  # noqa: F403
from .results import *  # noqa: F403
from .run import *  # noqa: F403
from .training import *  # noqa: F403
from .variants import *  # noqa: F403

__all__ = [*methods.__all__, *variants.__all__, *config.__all__, *training.__all__,
           *evaluation.__all__, *finetuning.__all__, *run.__all__, *results.__all__,
           *analysis.__all__,
           "PUBLISHED_WIKITEXT103", "main"]
