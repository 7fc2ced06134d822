"""What a results file calls a variant, as a value: :class:`VariantKey`.

Every model the experiment evaluates is one of five kinds, each reusing the weights of one
trained run:

============  ==============================================  =====================
kind          what                                            its name in a results
============  ==============================================  =====================
``trained``   a registered method, as trained                 ``rope``
``derived``   an evaluation-time variant of a trained method  ``rope_pi``
              (:class:`.methods.Variant`, registered with
              :func:`.methods.register_experiment_method`)
``nope``      a method trained with every ``nope_every``-th   ``rope_nope``
              layer without position
``finetuned`` a fine-tunable method fine-tuned with a         ``rope_ft_yarn``
              scaling (:data:`FINETUNE_SCALINGS`)
``pattern``   a model whose layers follow a per-layer         ``gemma3_layers``
              pattern (:data:`posenc.layer_patterns.PATTERNS`)
============  ==============================================  =====================

This module is the one place that knows how a key is written as a name
(:attr:`VariantKey.name`, the key of a results file's ``variants``) and read back
(:meth:`VariantKey.parse`); the runner, the analysis and the figures use the value.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._validation import check_choice
from ...catalogue import facts
from ...layer_patterns import PATTERNS
from ...nn import POSITIONS
from .methods import experiment_method

__all__ = ["FINETUNE_SCALINGS", "VARIANT_KINDS", "VariantKey", "derived_variants"]

#: Scalings the RoPE fine-tuning extension compares: none, PI, NTK-aware, YaRN.
FINETUNE_SCALINGS = ("none", "linear", "ntk", "yarn")

#: The kinds of :class:`VariantKey`, in the order the module docstring explains them.
VARIANT_KINDS = ("trained", "derived", "nope", "finetuned", "pattern")

_FINETUNE_LABELS = {"none": "no scaling", "linear": "PI", "ntk": "NTK-aware", "yarn": "YaRN"}
# How a kind is written in a name; read back by VariantKey.parse, nowhere else.
_NOPE_SUFFIX, _FINETUNE_INFIX, _PATTERN_SUFFIX = "_nope", "_ft_", "_layers"


def derived_variants() -> dict:
    """``{variant name: (trained method, Variant)}`` of every registered method's
    evaluation-time variants (:func:`.methods.experiment_method`), in registration order:
    read afresh, so a variant registered a moment ago is in it."""
    return {v.name: (name, v) for name in POSITIONS for v in experiment_method(name).variants}


@dataclass(frozen=True)
class VariantKey:
    """One evaluated model of the experiment: its ``kind`` (:data:`VARIANT_KINDS`), the
    ``method`` whose trained run it uses (for ``"pattern"``: the pattern's name) and a
    ``detail``: the variant's name for ``"derived"``, the scaling for ``"finetuned"``,
    empty otherwise: ``VariantKey("nope", "rope")``, :meth:`derived`, :meth:`finetuned`, or
    a results file's name read back with :meth:`parse`.
    """

    kind: str
    method: str
    detail: str = ""

    def __post_init__(self):
        check_choice("kind", self.kind, VARIANT_KINDS)
        if not isinstance(self.method, str) or not self.method:
            raise TypeError(f"method must be a non-empty str, got {self.method!r}")
        if self.kind == "finetuned":
            check_choice("scaling", self.detail, FINETUNE_SCALINGS)
        elif self.kind == "derived":
            if not isinstance(self.detail, str) or not self.detail:
                raise ValueError(f"a derived variant needs its name as detail, got "
                                 f"{self.detail!r}")
        elif self.detail:
            raise ValueError(f"a {self.kind!r} variant takes no detail, got {self.detail!r}")

    @classmethod
    def derived(cls, method: str, name: str) -> VariantKey:
        """``method``'s evaluation-time variant ``name`` (``rope``, ``rope_pi``)."""
        return cls("derived", method, name)

    @classmethod
    def finetuned(cls, method: str, scaling: str) -> VariantKey:
        """``method`` fine-tuned with ``scaling`` (``rope``, ``yarn``)."""
        return cls("finetuned", method, scaling)

    @property
    def name(self) -> str:
        """The name a results file stores it under (``rope_ft_yarn``, ``gemma3_layers``)."""
        if self.kind == "derived":
            return self.detail
        if self.kind == "nope":
            return self.method + _NOPE_SUFFIX
        if self.kind == "finetuned":
            return self.method + _FINETUNE_INFIX + self.detail
        if self.kind == "pattern":
            return self.method + _PATTERN_SUFFIX
        return self.method

    @property
    def source(self) -> str:
        """The trained method whose weights it uses (a pattern's model: the pattern)."""
        return self.method

    @property
    def trained_encoding(self) -> str:
        """What a results entry stores as ``trained_encoding``: the trained method, or for a
        pattern's model its own name (``gemma3_layers``), as the runner has always written."""
        return self.name if self.kind == "pattern" else self.method

    @classmethod
    def parse(cls, name: str) -> VariantKey:
        """The key of a results file's variant ``name``, read against the registries: a
        fine-tuned model (``<method>_ft_<scaling>`` of a registered method), a pattern's
        model (``<pattern>_layers`` of a registered pattern), a NoPE-layer twin
        (``<method>_nope``), a registered evaluation-time variant, else a trained method."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"name must be a non-empty str naming a variant, got {name!r}")
        method, infix, scaling = name.rpartition(_FINETUNE_INFIX)
        if infix and scaling in FINETUNE_SCALINGS and method in POSITIONS:
            return cls.finetuned(method, scaling)
        if name.endswith(_PATTERN_SUFFIX) and name[:-len(_PATTERN_SUFFIX)] in PATTERNS:
            return cls("pattern", name[:-len(_PATTERN_SUFFIX)])
        if name.endswith(_NOPE_SUFFIX) and name[:-len(_NOPE_SUFFIX)] in POSITIONS:
            return cls("nope", name[:-len(_NOPE_SUFFIX)])
        derived = derived_variants()
        if name in derived:
            return cls.derived(derived[name][0], name)
        return cls("trained", name)

    @classmethod
    def of(cls, variant) -> VariantKey:
        """``variant`` as a key: a :class:`VariantKey` as it is, a name through
        :meth:`parse` (so a figure takes either)."""
        return variant if isinstance(variant, cls) else cls.parse(variant)

    def label(self, config) -> str:
        """Its printed label; ``config`` (an :class:`~.config.ExtrapolationConfig`) gives
        the fine-tuning multiple and the NoPE-layer interval the label states."""
        if self.kind == "finetuned":
            return (f"{_method_label(self.method)}, fine-tuned at "
                    f"{config.finetune_multiplier}×, {_FINETUNE_LABELS[self.detail]}")
        if self.kind == "nope":  # every nope_every-th layer without position, all full attention
            return f"{_method_label(self.method)}, every {_ordinal(config.nope_every)} layer NoPE"
        if self.kind == "pattern":
            return PATTERNS[self.method].label or self.method
        if self.kind == "derived":
            return derived_variants()[self.detail][1].label
        return _method_label(self.method)


def _method_label(name: str) -> str:
    """A method's label from the course catalogue (its name for one never described)."""
    return facts(name).label


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
