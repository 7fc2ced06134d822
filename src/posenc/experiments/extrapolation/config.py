"""The extrapolation experiment's configuration: what decides the numbers.

The methods trained come from the registry (:data:`posenc.nn.POSITIONS`); each trained
method is followed by the evaluation-time variants the experiment registered for it
(:mod:`.methods`: learned + interpolation, RoPE + Position Interpolation) and, when its
entry there says ``finetunable=True`` (RoPE), its fine-tuned models. A method's settings
are its own options (``options={"t5": {"max_distance": 64}}``), never a field here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

from ..._validation import check_choice, check_float, check_int
from ...layer_patterns import get_pattern
from ...model import TinyLMConfig
from ...nn import POSITIONS, check_position_options, get_position
from ...retrieval import TASKS, evaluation_distances
from .methods import experiment_method
from .variants import FINETUNE_SCALINGS, VariantKey

__all__ = [
    "ENCODINGS",
    "ALL_ENCODINGS",
    "NOT_FOR_TEXT",
    "ExtrapolationConfig",
    "PRESETS",
    "config_hash",
    "hash_config_dict",
    "task_key",
]

#: The encodings trained by default: those of the ALiBi paper's comparison plus NoPE and learned.
ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")


def task_key(task: str, name: str) -> str:
    """The results key of a retrieval task's ``name`` (``"loss"``, ``"accuracy"``,
    ``"by_distance"``, ``"distances"``): ``retrieval_<name>`` for the content task (the key
    it always had), ``<task>_<name>`` for the others (``positional_accuracy``,
    ``rebinding_accuracy``)."""
    check_choice("task", task, TASKS)
    return ("retrieval_" if task == "content" else f"{task}_") + name


@dataclass(frozen=True)
class ExtrapolationConfig:
    """Everything that decides the numbers (threads and output path do not).

    Model: ``d_model``, ``num_heads``, ``num_layers``, ``d_ff``; each method's own
    settings are its options, ``options={method: {option: value}}`` (its constructor's
    keywords, :attr:`posenc.nn.PositionMethod.options`; the method's defaults fill the
    rest, and a method with a ``max_positions`` option gets ``train_length``). T5's
    buckets, say: ``options={"t5": {"num_buckets": 32, "max_distance": 128}}`` (those
    defaults put ``max_distance`` at the text preset's ``train_length``, so every bucket
    is trained, as in the paper where 128 < 512); its ``bias_lr_scale`` multiplies the
    learning rate of its bias table (a module's
    :attr:`~posenc.nn.PositionEncoding.param_lr_scale`; a learned bias must grow to
    several units to act like a recency penalty, and Adam moves a parameter by about one
    learning rate per step: at the shared rate 1000 steps cannot get there).
    Training: ``steps`` AdamW steps of ``batch_size`` random windows of
    ``train_length`` bytes, learning rate warmed up linearly for ``warmup_steps`` then, by
    ``schedule``, cosine-decayed to ``min_lr_ratio`` times the peak (``"cosine"``) or held
    at the peak (``"constant"``); gradients clipped to ``grad_clip``.

    Converge, then extrapolate (chapter 13, take four): every ``check_every`` steps (0:
    never) the task ``check_task`` (one of the trained ``retrieval_tasks``; the positional
    one unless a preset says otherwise) is checked on ``check_sequences`` held-out sequences
    laid out as in training (the same for every method and seed), with the heads' previous-token
    and induction scores (:mod:`posenc.heads`); a run stops at the first check whose
    accuracy reaches ``stop_accuracy`` (0: never early), so ``steps`` is a cap. Each
    ``grid_distances`` distance (one seen in training) is also evaluated with the query at
    the end of every evaluation length: the query's position changes, the distance not.
    Evaluation: the first ``eval_tokens`` held-out bytes, split into non-overlapping
    windows of ``m * train_length`` for each ``m`` in ``eval_multipliers``.
    ``encodings`` may name any registered method (:data:`posenc.nn.POSITIONS`).

    Seeds: every model is trained ``num_seeds`` times, with seeds ``seed, seed + 1, ...``
    (initial weights and batch order); results give the mean and each seed's value.

    Retrieval (:mod:`posenc.retrieval`; off when ``retrieval_batch_size`` is 0): each step
    adds, for each task of ``retrieval_tasks`` (``"content"``: each key has its own values,
    a bag of bytes answers it; ``"positional"``: values shared by all keys, only order
    answers it; ``"rebinding"``: as positional, some keys bound twice, the query asking for
    the later binding, which the order-only circuit of :mod:`posenc.order_circuit` does not
    solve; the ``rebinding`` preset trains it), key-value sequences of ``train_length``
    bytes (``retrieval_pairs`` pairs, ``retrieval_queries`` queries):
    ``retrieval_batch_sizes[i]`` of task ``i``, or ``retrieval_batch_size`` of each when
    that is empty. Their loss (on the answers only) times ``retrieval_weight`` is added to
    the text loss. Each task is evaluated at every length on held-out text with one query at
    the end and its answer at ``retrieval_distances`` distances, ``retrieval_per_distance``
    sequences each.

    NoPE layers: each method in ``nope_encodings`` is also trained with every
    ``nope_every``-th block without position, every block full causal attention (variant
    ``<method>_nope``; not Llama 4, whose RoPE layers are also chunked and whose NoPE
    layers get a temperature: that is the ``llama4`` pattern). Patterns: each name in
    ``patterns`` (:data:`posenc.layer_patterns.PATTERNS`) trains one more model of the same
    size whose layers follow that pattern (variant ``<pattern>_layers``).

    Fine-tuning to extend (Chen et al., 2023; Peng et al., 2024): each trained fine-tunable
    model (a method whose experiment entry has ``finetunable=True``: RoPE) is fine-tuned for
    ``finetune_steps`` steps at ``finetune_multiplier * train_length`` (same bytes per step,
    peak learning rate times ``finetune_lr_ratio``) once per scaling in
    ``finetune_scalings`` (``"none"`` or a :data:`posenc.scaling.SCALING_METHODS` name,
    factor ``finetune_multiplier``); variant ``<method>_ft_<scaling>``. The defaults switch
    these four off.

    Results written before options were per method had fields ``base``,
    ``t5_num_buckets``, ``t5_max_distance`` and ``t5_bias_lr_scale``: the results' migration
    (:func:`.results.migrate`, schema 1 to 2) turned them into options.
    """

    encodings: tuple[str, ...] = ENCODINGS
    train_length: int = 128
    eval_multipliers: tuple[int, ...] = (1, 2, 4, 8)
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 4
    d_ff: int = 256
    steps: int = 1000
    batch_size: int = 16
    learning_rate: float = 2e-3
    warmup_steps: int = 50
    min_lr_ratio: float = 0.1
    grad_clip: float = 1.0
    eval_tokens: int = 65536
    eval_batch_size: int = 16
    seed: int = 0
    log_every: int = 25
    num_seeds: int = 1
    retrieval_batch_size: int = 0
    retrieval_weight: float = 1.0
    retrieval_pairs: int = 4
    retrieval_queries: int = 4
    retrieval_distances: int = 8
    retrieval_per_distance: int = 32
    retrieval_tasks: tuple[str, ...] = ("content",)
    retrieval_batch_sizes: tuple[int, ...] = ()
    nope_encodings: tuple[str, ...] = ()
    nope_every: int = 4
    patterns: tuple[str, ...] = ()
    finetune_scalings: tuple[str, ...] = ()
    finetune_multiplier: int = 4
    finetune_steps: int = 50
    finetune_lr_ratio: float = 0.5
    options: tuple = ()
    schedule: str = "cosine"
    stop_accuracy: float = 0.0
    check_every: int = 0
    check_sequences: int = 128
    check_task: str = "positional"
    grid_distances: tuple[int, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "encodings", tuple(self.encodings))
        object.__setattr__(self, "options", _method_options(self.options))
        for name in ("eval_multipliers", "nope_encodings", "finetune_scalings",
                     "retrieval_tasks", "patterns", "retrieval_batch_sizes", "grid_distances"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.encodings or len(set(self.encodings)) != len(self.encodings):
            raise ValueError(f"encodings must be a non-empty list without repeats, "
                             f"got {self.encodings}")
        for encoding in self.encodings:
            try:
                get_position(encoding)
            except ValueError as error:
                raise ValueError(f"encodings: {error}") from None
        mults = self.eval_multipliers
        if (not mults or mults[0] != 1 or list(mults) != sorted(set(mults))
                or not all(isinstance(m, int) and not isinstance(m, bool) for m in mults)):
            raise ValueError(f"eval_multipliers must be increasing integers starting at 1, "
                             f"got {mults}")
        for name in ("train_length", "steps", "batch_size", "eval_tokens", "eval_batch_size",
                     "log_every"):
            check_int(name, getattr(self, name))
        check_int("warmup_steps", self.warmup_steps, minimum=0)
        check_int("seed", self.seed, minimum=0)
        check_float("learning_rate", self.learning_rate, greater_than=0.0)
        check_float("min_lr_ratio", self.min_lr_ratio, at_least=0.0)
        check_float("grad_clip", self.grad_clip, greater_than=0.0)
        check_int("num_seeds", self.num_seeds)
        check_int("retrieval_batch_size", self.retrieval_batch_size, minimum=0)
        for name in ("retrieval_pairs", "retrieval_queries", "retrieval_distances",
                     "retrieval_per_distance", "nope_every", "finetune_multiplier",
                     "finetune_steps"):
            check_int(name, getattr(self, name))
        check_float("retrieval_weight", self.retrieval_weight, greater_than=0.0)
        if not self.retrieval_tasks or len(set(self.retrieval_tasks)) != len(
                self.retrieval_tasks):
            raise ValueError(f"retrieval_tasks must be a non-empty list of {TASKS} without "
                             f"repeats, got {self.retrieval_tasks}")
        for task in self.retrieval_tasks:
            check_choice("retrieval_tasks", task, TASKS)
        if self.retrieval and "rebinding" in self.retrieval_tasks:
            self._check_rebinding()
        if self.retrieval_batch_sizes:
            if len(self.retrieval_batch_sizes) != len(self.retrieval_tasks):
                raise ValueError(f"retrieval_batch_sizes must give one size per task of "
                                 f"retrieval_tasks {self.retrieval_tasks}, got "
                                 f"{self.retrieval_batch_sizes}")
            for size in self.retrieval_batch_sizes:
                check_int("retrieval_batch_sizes", size)
        check_float("finetune_lr_ratio", self.finetune_lr_ratio, greater_than=0.0)
        for encoding in self.nope_encodings:
            if encoding not in self.encodings:
                raise ValueError(f"nope_encodings: {encoding!r} is not in encodings "
                                 f"{self.encodings}")
            self.model_config(encoding, nope=True)
        if len(set(self.patterns)) != len(self.patterns):
            raise ValueError(f"patterns must not repeat, got {self.patterns}")
        for pattern in self.patterns:
            try:
                self.pattern_config(pattern)
            except ValueError as error:
                raise ValueError(f"patterns: {error}") from None
        if self.finetune_scalings:
            if not self.finetuned_encodings:
                tunable = [name for name in POSITIONS if experiment_method(name).finetunable]
                raise ValueError(f"finetune_scalings needs a fine-tunable method (one "
                                 "registered with register_experiment_method(..., "
                                 f"finetunable=True): {', '.join(tunable)}) in encodings, "
                                 f"got {self.encodings}")
            for scaling in self.finetune_scalings:
                check_choice("finetune_scalings", scaling, FINETUNE_SCALINGS)
            if self.batch_size % self.finetune_multiplier or any(
                    size % self.finetune_multiplier
                    for size in (self.retrieval_batch_size, *self.retrieval_batch_sizes)):
                raise ValueError(f"batch_size ({self.batch_size}), retrieval_batch_size "
                                 f"({self.retrieval_batch_size}) and retrieval_batch_sizes "
                                 f"({self.retrieval_batch_sizes}) must be multiples of "
                                 f"finetune_multiplier ({self.finetune_multiplier}): "
                                 "fine-tuning keeps the bytes per step")
        self._check_convergence()
        if self.eval_tokens % self.max_eval_length:
            raise ValueError(f"eval_tokens ({self.eval_tokens}) must be a multiple of the "
                             f"longest evaluation length ({self.max_eval_length})")
        self.model_config("none")  # validate the model fields now
        for encoding, _ in self.options:  # and each method's options (its constructor checks)
            self.model_config(encoding)

    def _check_rebinding(self) -> None:
        """The rebinding task's sequences fit at the training length (the shortest one
        evaluated): up to ``2 * retrieval_pairs`` pairs in the first half of a training
        sequence, and room for the stale pair before the farthest evaluation distance."""
        length, pairs = self.train_length, self.retrieval_pairs
        if 4 * pairs > length // 2 - 1:
            raise ValueError(f"retrieval_tasks has 'rebinding': up to 2 * retrieval_pairs = "
                             f"{2 * pairs} pairs must fit in the first half of train_length="
                             f"{length} (4 * retrieval_pairs <= train_length // 2 - 1)")
        if self.retrieval_distances > length - 2:
            return  # evaluation_distances says so, where it is called
        farthest = int(evaluation_distances(length, self.retrieval_distances).max())
        if 2 * pairs + 4 > length or farthest > length - 4:
            raise ValueError(f"retrieval_tasks has 'rebinding': its stale pair needs room "
                             f"before the farthest of {self.retrieval_distances} evaluation "
                             f"distances at train_length={length} ({farthest} > "
                             f"train_length - 4 = {length - 4}); use fewer "
                             "retrieval_distances or a longer train_length")

    def _check_convergence(self) -> None:
        """The schedule, the stopping rule and the position-by-distance grid."""
        check_choice("schedule", self.schedule, SCHEDULES)
        check_float("stop_accuracy", self.stop_accuracy, at_least=0.0)
        if self.stop_accuracy > 1:
            raise ValueError(f"stop_accuracy must be in [0, 1] (0: never stop early), got "
                             f"{self.stop_accuracy}")
        check_int("check_every", self.check_every, minimum=0)
        check_int("check_sequences", self.check_sequences)
        check_choice("check_task", self.check_task, TASKS)
        if self.check_every and self.check_task not in self.task_batch_sizes:
            raise ValueError(f"check_every > 0 checks check_task={self.check_task!r} on "
                             "held-out sequences laid out as in training: retrieval_tasks "
                             f"must train it (retrieval_batch_size > 0), got "
                             f"{self.retrieval_tasks}")
        if self.stop_accuracy and not self.check_every:
            raise ValueError(f"stop_accuracy={self.stop_accuracy} needs check_every > 0 (how "
                             "often the held-out accuracy is checked)")
        for distance in self.grid_distances:
            check_int("grid_distances", distance)
            if distance > self.train_length - 2:
                raise ValueError(f"grid_distances must be distances seen in training, 1 .. "
                                 f"train_length - 2 = {self.train_length - 2}, got {distance}")
        if self.grid_distances and "positional" not in self.task_batch_sizes:
            raise ValueError("grid_distances evaluate the positional task: retrieval_tasks "
                             f"must include it, got {self.retrieval_tasks}")

    @property
    def eval_lengths(self) -> tuple[int, ...]:
        return tuple(m * self.train_length for m in self.eval_multipliers)

    @property
    def max_eval_length(self) -> int:
        return self.train_length * self.eval_multipliers[-1]

    @property
    def finetuned_encodings(self) -> tuple[str, ...]:
        """The trained methods the fine-tuning extension extends (those whose experiment
        entry has ``finetunable=True``; none when ``finetune_scalings`` is empty)."""
        if not self.finetune_scalings:
            return ()
        return tuple(e for e in self.encodings if experiment_method(e).finetunable)

    @property
    def variant_keys(self) -> tuple[VariantKey, ...]:
        """Every model evaluated, in the results' order: each trained method followed by
        its evaluation-time variants, its NoPE-layers twin and its fine-tuned models when
        the config asks for them; then each layer pattern's model."""
        keys = []
        for encoding in self.encodings:
            keys += [VariantKey("trained", encoding),
                     *(VariantKey.derived(encoding, v.name)
                       for v in experiment_method(encoding).variants)]
            if encoding in self.nope_encodings:
                keys.append(VariantKey("nope", encoding))
            if encoding in self.finetuned_encodings:
                keys += [VariantKey.finetuned(encoding, scaling)
                         for scaling in self.finetune_scalings]
        return tuple(keys) + tuple(VariantKey("pattern", p) for p in self.patterns)

    @property
    def variants(self) -> tuple[str, ...]:
        """The names of :attr:`variant_keys` (``rope``, ``rope_pi``, ``rope_nope``,
        ``rope_ft_yarn``, ``gemma3_layers``), the keys of a results file's ``variants``."""
        return tuple(key.name for key in self.variant_keys)

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(range(self.seed, self.seed + self.num_seeds))

    @property
    def task_batch_sizes(self) -> dict[str, int]:
        """``{task: sequences per step}``: ``retrieval_batch_sizes`` when given, else
        ``retrieval_batch_size`` for every task (empty when retrieval is off)."""
        if not self.retrieval:
            return {}
        sizes = self.retrieval_batch_sizes or (self.retrieval_batch_size,) * len(
            self.retrieval_tasks)
        return dict(zip(self.retrieval_tasks, sizes, strict=True))

    @property
    def retrieval(self) -> bool:
        """Whether the retrieval task is trained and evaluated."""
        return self.retrieval_batch_size > 0

    def model_config(self, position: str, *, nope: bool = False) -> TinyLMConfig:
        """The :class:`TinyLMConfig` trained for ``position`` (``nope``: with NoPE layers)."""
        takes = get_position(position).options
        options = {"max_positions": self.train_length} if "max_positions" in takes else {}
        options.update(dict(dict(self.options).get(position, ())))  # --options NAME:k=v
        return TinyLMConfig(
            vocab_size=256, d_model=self.d_model, num_heads=self.num_heads,
            num_layers=self.num_layers, d_ff=self.d_ff, position=position,
            options=options, nope_every=self.nope_every if nope else 0)

    def pattern_config(self, pattern: str) -> TinyLMConfig:
        """The :class:`TinyLMConfig` trained with the per-layer ``pattern``
        (:data:`posenc.layer_patterns.PATTERNS`), its windows and chunks sized for
        ``train_length``; the same model size as every method's."""
        get_pattern(pattern)
        return TinyLMConfig(
            vocab_size=256, d_model=self.d_model, num_heads=self.num_heads,
            num_layers=self.num_layers, d_ff=self.d_ff, pattern=pattern,
            pattern_length=self.train_length)

    def method_options(self, position: str) -> dict:
        """Every option ``position`` is trained with: its defaults and this config's."""
        return self.model_config(position).position_options()

    def to_dict(self) -> dict:
        """JSON-ready: tuples become lists, ``options`` a ``{method: {option: value}}`` dict,
        left out when empty."""
        values = {k: list(v) if isinstance(v, tuple) else v
                  for k, v in dataclasses.asdict(self).items() if k != "options"}
        if self.options:
            values["options"] = {name: dict(opts) for name, opts in self.options}
        return values

    @classmethod
    def from_dict(cls, values: dict) -> ExtrapolationConfig:
        """The config of :meth:`to_dict`'s dict (a results file's ``config``, once
        :func:`.results.migrate` has brought an older file to the current layout)."""
        values = dict(values)
        unknown = sorted(set(values) - set(cls.__dataclass_fields__))
        if unknown:
            raise TypeError(f"config has no field(s) {', '.join(unknown)}: a results file of "
                            "an older schema is read through posenc.experiments.extrapolation."
                            "migrate (or read_results / load_results, which call it)")
        return cls(**values)

    def replace(self, **changes) -> ExtrapolationConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


#: The learning-rate schedules (:func:`.training.learning_rate_at`).
SCHEDULES = ("cosine", "constant")


def _int_for_float(value, default) -> bool:
    """Whether ``value`` is an integer (not a bool) given where the default is a float."""
    return (isinstance(default, float) and isinstance(value, int)
            and not isinstance(value, bool))


def _method_options(options) -> tuple:
    """``{method: {option: value}}`` (or its pairs) as sorted, hashable pairs, each option
    checked to be one of the method's constructor keywords
    (:func:`posenc.nn.check_position_options`, the check every way of giving options
    shares). An option is the method's whatever its name (``window`` too).

    One configuration, one spelling, so that equal configs compare, write and hash the
    same: an integer given for an option whose default is a float is that float
    (``--options t5:bias_lr_scale=10`` is ``10.0``), and an option equal to the method's
    default is left out. Not ``max_positions``: without it the method gets
    ``train_length`` (:meth:`ExtrapolationConfig.model_config`), not its default, so a
    value given for it always stays (and follows no later change of ``train_length``)."""
    try:
        pairs = dict(options)
    except (TypeError, ValueError):
        raise TypeError(f"options must map method names to {{option: value}}, got "
                        f"{options!r}") from None
    normal = []
    for name, opts in sorted(pairs.items()):
        opts = check_position_options(name, dict(opts))
        defaults = get_position(name).options
        opts = {key: float(value) if _int_for_float(value, defaults[key]) else value
                for key, value in opts.items()}
        opts = {key: value for key, value in opts.items() if key == "max_positions"
                or not (type(value) is type(defaults[key]) and value == defaults[key])}
        if opts:
            normal.append((name, tuple(sorted(opts.items()))))
    return tuple(normal)


#: Every registered method the long-context presets train; a method that lands later
#: joins with one line here (a test checks each registered method is here or excluded).
ALL_ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "shaw", "t5",
                 "partial_rope", "p_rope", "xpos", "kerple_power", "kerple_log", "fire", "cope",
                 "fox", "stick_breaking")

#: The methods take three trained (before FoX and stick-breaking were registered).
_TAKE3_ENCODINGS = ALL_ENCODINGS[:14]

#: Registered methods the long-context presets leave out, and why.
NOT_FOR_TEXT = {
    "axial_rope": "a 2-D method for image patches: on a 1-D byte sequence its grid (and so "
                  "every position's angle) would change with the sequence length",
}

#: The long-context presets' model and tasks (chapter 13): every method and every layer
#: pattern, one learning rate for every parameter of every method (no method is tuned),
#: text plus both retrieval tasks. Calibrated on a 2-core CPU (benchmarks/README.md): with
#: 16 positional sequences per step RoPE, ALiBi, T5 and NoPE spread from chance to 84 % at
#: 1x (8 per step left all but ALiBi at chance); 8 text windows instead of 16 pay for it,
#: and 16 evaluation sequences per distance instead of 32 (the full set's 3 seeds make up
#: for the noise), so that main and full keep their budgets (25 and 75 min).
#: FIRE's threshold L starts at L_train (its paper: L = 512 at L_train = 2048), so its
#: normalisation acts from the training length on; the runs record the learned L.
_TAKE3 = dict(
    encodings=_TAKE3_ENCODINGS, nope_encodings=("rope",), nope_every=4, train_length=64,
    d_model=64, num_heads=4, num_layers=4, d_ff=256,
    options={"t5": {"max_distance": 64}, "fire": {"fire_init_L": 64.0}},
    patterns=("gemma3", "llama4", "command_a", "gpt_oss"),
    steps=1000, batch_size=8, learning_rate=2e-3, warmup_steps=50,
    eval_tokens=16384, retrieval_batch_size=16, retrieval_tasks=("content", "positional"),
    retrieval_batch_sizes=(8, 16), retrieval_pairs=4, retrieval_queries=4,
    retrieval_distances=8, retrieval_per_distance=16, log_every=50)

#: Take four (chapter 13): take three's model, data and mix, every method and pattern, with
#: a constant learning rate after the warm-up (take three's cosine decay made its ranking:
#: the rate had decayed before the slower methods formed the binding), each run trained
#: until 95 % of the held-out positional answers laid out as in training are right (checked
#: every 50 steps), or 2,000 steps; 64 evaluation sequences per distance; a grid of three
#: distances seen in training, the query at the end of every length.
_LONG = {**_TAKE3, "encodings": ALL_ENCODINGS,
         "patterns": ("gemma3", "llama4", "command_a", "gpt_oss", "kimi_linear", "qwen3_next"),
         "schedule": "constant", "steps": 2000, "stop_accuracy": 0.95, "check_every": 50,
         "retrieval_per_distance": 64, "grid_distances": (8, 24, 48)}

#: The rebinding run (chapter 13): every method of take four, the same model, data, rate
#: and cap, trained on the rebinding task beside the positional one (16 sequences of each
#: per step) and stopped at 95 % of held-out *rebinding* answers laid out as in training,
#: the task the order-only circuit (:mod:`posenc.order_circuit`) cannot solve; no layer
#: patterns, no NoPE twins, no grid. It answers whether a method that learns the binding
#: can also learn to pick the later of two bindings, and how that extrapolates.
_REBINDING = {**_LONG, "patterns": (), "nope_encodings": (), "grid_distances": (),
              "retrieval_tasks": ("positional", "rebinding"), "retrieval_batch_sizes": (16, 16),
              "check_task": "rebinding", "retrieval_per_distance": 32}

#: Chapter 9's text runs: T5's bias table at 10x the shared learning rate (at the shared
#: rate 1000 steps leave it too small to act; chapter 9 shows both).
_TEXT_T5 = {"t5": {"bias_lr_scale": 10.0}}

#: The presets (``python -m posenc.experiments.extrapolation --preset NAME``):
#:
#: * ``text``: chapter 9's committed run, text only (Press et al.'s protocol; T5's bias
#:   table at 10x the learning rate).
#: * ``text-small``: chapter 9's live run (seconds).
#: * ``main``: every method and layer pattern, text + both retrieval tasks, one seed,
#:   each run trained to 95 % on held-out positional answers or 2,000 steps at a constant
#:   learning rate (chapter 13, take four; ≤ 30 min).
#: * ``full``: ``main`` with 3 seeds, plus RoPE fine-tuned at 4x with no scaling, PI,
#:   NTK-aware and YaRN (chapter 13's committed results; ≤ 90 min).
#: * ``take3-main``, ``take3``: take three's one-seed and three-seed runs (cosine decay over
#:   1,000 steps, no stop, 16 evaluation sequences per distance; before FoX, stick-breaking
#:   and the recurrent hybrids), kept with their results for chapter 13's account of why
#:   its ranking was the schedule's.
#: * ``rebinding``: every method of ``main`` trained on the rebinding task beside the
#:   positional one, each stopped at 95 % held-out rebinding answers or 2,000 steps; one
#:   seed (chapter 13: the task order alone cannot solve).
#: * ``small``: chapter 13's live run (≤ 30 s): the content task only (a third forward
#:   pass per step for the positional one took it to 41 s, and 400 steps do not learn it).
#: * ``large``: ``main`` scaled up for an accelerator (L_train 256, d_model 256, 6 layers,
#:   so Gemma 3's 5 : 1 cycle fits whole; 4,000 steps). Not run for the committed results:
#:   no GPU was lent to this course's runs, and the runner trains on the CPU (moving it
#:   to a device is left for a run that has one); tests run it at a tiny size.
PRESETS = {
    "text": ExtrapolationConfig(options=_TEXT_T5),
    "text-small": ExtrapolationConfig(
        encodings=("sinusoidal", "rope", "alibi"), train_length=32, d_model=32, num_heads=4,
        num_layers=2, d_ff=128, options={"t5": {**_TEXT_T5["t5"], "num_buckets": 16,
                                                 "max_distance": 32}}, steps=200,
        batch_size=16, learning_rate=5e-3, warmup_steps=20, eval_tokens=8192, log_every=10),
    "take3-main": ExtrapolationConfig(**_TAKE3),
    "take3": ExtrapolationConfig(**{**_TAKE3, "num_seeds": 3,
                                    "finetune_scalings": FINETUNE_SCALINGS,
                                    "finetune_steps": 50}),
    "main": ExtrapolationConfig(**_LONG),
    "full": ExtrapolationConfig(**{**_LONG, "num_seeds": 3,
                                   "finetune_scalings": FINETUNE_SCALINGS,
                                   "finetune_steps": 50}),
    "rebinding": ExtrapolationConfig(**_REBINDING),
    "large": ExtrapolationConfig(**{
        **_LONG, "train_length": 256, "d_model": 256, "num_heads": 8, "num_layers": 6,
        "d_ff": 1024, "options": {"t5": {"max_distance": 256}, "fire": {"fire_init_L": 256.0}},
        "steps": 4000, "batch_size": 24, "learning_rate": 1e-3, "warmup_steps": 200,
        "eval_tokens": 131072, "retrieval_batch_size": 32, "retrieval_batch_sizes": (16, 32),
        "retrieval_per_distance": 64, "log_every": 100}),
    "small": ExtrapolationConfig(**{
        **_TAKE3, "encodings": ("rope", "alibi"), "nope_encodings": (), "patterns": (),
        "train_length": 32, "num_layers": 2, "options": {"t5": {"max_distance": 32}},
        "steps": 360, "batch_size": 16, "learning_rate": 3e-3, "warmup_steps": 20,
        "eval_tokens": 4096, "retrieval_tasks": ("content",), "retrieval_batch_sizes": (),
        "retrieval_pairs": 2,
        "retrieval_queries": 2, "retrieval_distances": 4, "retrieval_per_distance": 16,
        "log_every": 25}),
}


def hash_config_dict(values: dict) -> str:
    """SHA-256 of a config dict's canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()


def config_hash(config: ExtrapolationConfig) -> str:
    """SHA-256 of the config's :meth:`~ExtrapolationConfig.to_dict` as canonical JSON:
    equal hashes, equal configurations (a results file stores it as ``config_hash``)."""
    return hash_config_dict(config.to_dict())
