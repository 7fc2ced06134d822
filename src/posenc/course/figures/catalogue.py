"""Every slider figure of the course, in one catalogue: what each chapter shows and what the
figure tests check.

The figures a reader's browser computes from their formulas (chapter 2's and 6's, chapter 4's
RoPE angles, chapter 5's frequency ratios) are in :data:`posenc.course.figures.live.LIVE`
instead.

A chapter shows its figure with ``SLIDERS[key].show(...)``, passing the data it computed
(``SLIDERS["fire_fit"].show(fits=fits)``); the legibility and clipping tests draw every
entry at its sliders' longest labels, so a new slider figure is checked once it is here.
An entry holds what :func:`~posenc.course.figures.sliders.slider_figure` takes: the
drawing function, the sliders' values, the title (the frames' alt text), the starting
values, friendlier slider labels and the figure size (inches; ``FIGURE_WIDTH`` wide fills
the text column).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from ...configs import bundled_names
from . import (
    absolute,
    configs,
    data_dependent,
    inference,
    learned_biases,
    local_global,
    relative,
    rope_alibi,
    rope_today,
    scaling,
    why_order,
)
from .sliders import format_value, log_steps, slider_figure
from .style import FIGURE_WIDTH

__all__ = ["SliderFigure", "SLIDERS"]


@dataclass(frozen=True)
class SliderFigure:
    """One slider figure: ``draw(fig, **data, **slider values)`` for every combination of
    ``sliders``; ``data`` names what the chapter computes and passes to :meth:`show`. A
    slider whose values are a data name takes that data's keys (chapter 1's methods are
    the methods it ran)."""

    chapter: str
    draw: Callable
    sliders: Mapping[str, Sequence | str]
    title: str
    initial: Mapping[str, object] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    height: float = 3.2
    width: float = FIGURE_WIDTH
    data: tuple[str, ...] = ()

    @property
    def figsize(self) -> tuple[float, float]:
        return (self.width, self.height)

    def drawing(self, **data) -> Callable:
        """``draw`` with the chapter's ``data`` bound: a function of ``fig`` and the sliders."""
        if set(data) != set(self.data):
            raise TypeError(f"{self.title!r} takes data {sorted(self.data) or 'none'}, "
                            f"got {sorted(data) or 'none'}")
        return partial(self.draw, **data) if data else self.draw

    def values(self, **data) -> dict[str, list]:
        """Each slider's values (a data name's are that data's keys)."""
        return {name: list(data[v] if isinstance(v, str) else v)
                for name, v in self.sliders.items()}

    def show(self, **data):
        """The figure's widget (:func:`~posenc.course.figures.sliders.slider_figure`)."""
        return slider_figure(self.drawing(**data), self.values(**data), title=self.title,
                             initial=self.initial or None, labels=self.labels or None,
                             figsize=self.figsize)

    def longest(self, **data) -> dict[str, object]:
        """Each slider at its value with the longest label (what the layout must fit)."""
        return {name: max(values, key=lambda v: len(format_value(v)))
                for name, values in self.values(**data).items()}


_BASES = log_steps(10, 1e6, per_decade=2)
# the selectors show the models read from a copy of their own config.json; those built from
# a configuration class's defaults are in chapter 15's table only (their bases are defaults)
_MODELS = list(bundled_names(files_only=True))

#: The slider figures, by key, in the order of the book.
SLIDERS: dict[str, SliderFigure] = {
    "word_change": SliderFigure(
        "01_why_order", why_order.draw_word_change,
        {"method": "changes", "layer": list(why_order.ATTENTION)},
        "Word change", initial={"method": "none", "layer": why_order.ATTENTION[0]}, height=3.6,
        data=("changes", "causal", "blind")),
    "stretched_table": SliderFigure(
        "03_learned", absolute.draw_stretched_columns,
        {"new_length": [64, 80, 96, 112, 128, 160, 192, 256]},
        "Stretched table", labels={"new_length": "new length"}, initial={"new_length": 128},
        height=3.4, data=("table",)),
    "rope_pair": SliderFigure(
        "04_rope", rope_alibi.draw_rope_pair, {"position": list(range(12))},
        "RoPE on one pair", initial={"position": 3}),
    "rope_decay": SliderFigure(
        "04_rope", rope_alibi.draw_rope_decay, {"base": _BASES},
        "RoFormer's bound", initial={"base": 10000.0}),
    "turns_at_position": SliderFigure(
        "05_rope_scaling", scaling.draw_turns_at_position,
        {"position": [4096, 8192, 16384, 32768, 65536], "factor": [4, 8, 16]},
        "Angle at position m vs training", initial={"position": 32768, "factor": 8},
        labels={"position": "position m", "factor": "scale factor s"}),
    "remapped_distances": SliderFigure(
        "05_rope_scaling", scaling.draw_remapped_distances,
        {"window": [16, 32], "group": [2, 4, 8], "factor": [2, 4]},
        "Distance RoPE sees", initial={"window": 32, "group": 4, "factor": 4},
        labels={"window": "window w", "group": "group size G", "factor": "scale factor s"},
        height=5.2),
    "base_bound": SliderFigure(
        "05_rope_scaling", scaling.draw_base_bound, {"base": [1e4, 5e5, 1e6, 1e7]},
        "RoPE base lower bound", initial={"base": 5e5}, height=4.6),
    "t5_bucket_map": SliderFigure(
        "07_relative", relative.draw_t5_bucket_map,
        {"num_buckets": [8, 16, 32, 64], "max_distance": [32, 64, 128, 256, 512, 1024]},
        "T5 bucket map", initial={"num_buckets": 32, "max_distance": 128}),
    "base_wavelengths": SliderFigure(
        "10_rope_today", rope_today.draw_base_wavelengths, {"base": [1e4, 1e5, 5e5, 1e6, 1e7]},
        "RoPE wavelengths by base", initial={"base": 5e5}),
    "position_pairs": SliderFigure(
        "10_rope_today", rope_today.draw_position_pairs,
        {"fraction": [0.125, 0.25, 0.5, 0.75, 1.0]},
        "Pairs that carry position", initial={"fraction": 0.25}, height=2.4),
    "xpos_decay": SliderFigure(
        "10_rope_today", rope_today.draw_xpos_decay, {"scale_base": [128, 256, 512, 1024, 4096]},
        "xPos decay", initial={"scale_base": 512}),
    "axial_angles": SliderFigure(
        "11_rope_2d_3d", rope_today.draw_axial_angles, {"pair": [0, 3, 7, 8, 11, 15]},
        "Axial 2-D RoPE angle per patch", initial={"pair": 3}, height=3.6),
    "mrope_sections": SliderFigure(
        "11_rope_2d_3d", rope_today.draw_mrope_sections, {"temporal": [0, 2, 4, 6, 8]},
        "M-RoPE sections", initial={"temporal": 4}, height=4.2),
    "axis_frequencies": SliderFigure(
        "11_rope_2d_3d", rope_today.draw_axis_frequencies, {"model": list(rope_today.AXIS_SPLITS)},
        "Frequency pairs by position axis", initial={"model": "Qwen3-VL"}, height=3.4),
    "kerple_kernel": SliderFigure(
        "12_learned_biases", learned_biases.draw_kerple_kernel,
        {"kernel": ["power", "log"], "r1": [0.25, 0.5, 1.0], "r2": [0.25, 0.5, 1.0, 2.0]},
        "KERPLE kernel", initial={"kernel": "log", "r1": 1.0, "r2": 1.0}),
    "fire_normalized": SliderFigure(
        "12_learned_biases", learned_biases.draw_fire_normalized,
        {"c": [0.001, 0.1, 1.0], "threshold": [0, 64, 512]},
        "FIRE normalised distance", initial={"c": 0.1, "threshold": 64},
        labels={"threshold": "L"}, width=7.2, height=3.0),
    "fire_fit": SliderFigure(
        "12_learned_biases", learned_biases.draw_fire_fit,
        {"target": "fits", "steps": [0, 50, 200, 1000]},
        "FIRE fit", initial={"target": "T5-like", "steps": 1000}, data=("fits",)),
    "cope_positions": SliderFigure(
        "12_learned_biases", learned_biases.draw_cope_positions,
        {"counting": list(learned_biases.COPE_COUNTING), "query": [7, 11, 15]},
        "CoPE positions", initial={"counting": "sentences", "query": 15}),
    "mask_and_field": SliderFigure(
        "14_local_global", local_global.draw_mask_and_field,
        {"reach": ["window", "chunk"], "size": [2, 4, 8], "layers": [1, 2, 3, 4]},
        "Mask and receptive field", initial={"reach": "window", "size": 4, "layers": 2},
        height=3.4),
    "temperature": SliderFigure(
        "14_local_global", local_global.draw_temperature,
        {"gap": [4, 8, 12, 16], "attn_scale": [0.1, 0.2, 0.5]},
        "Attention vs context length", initial={"gap": 8, "attn_scale": 0.1},
        labels={"gap": "logit gap g"}, height=3.6),
    "temperature_family": SliderFigure(
        "14_local_global", local_global.draw_temperature_family, {"gap": [6, 8, 10, 12]},
        "One family of query temperatures", initial={"gap": 10},
        labels={"gap": "logit gap g"}, height=3.6),
    "sink_mass": SliderFigure(
        "14_local_global", local_global.draw_sink_mass, {"step": [0, 50, 100, 200]},
        "Sink mass during training", initial={"step": 200}, height=3.4, data=("runs",)),
    "model_layers": SliderFigure(
        "15_reading_configs", configs.draw_model_layers, {"model": _MODELS},
        "Model's layers and pairs", initial={"model": "llama-3.1-8b"}, height=4.2),
    "target_length": SliderFigure(
        "15_reading_configs", configs.draw_target_length,
        {"model": _MODELS, "target": [32768, 131072, 262144, 1048576]},
        "Model at a target length", initial={"model": "llama-3.1-8b", "target": 131072},
        labels={"target": "target length T"}, height=4.0),
    "partial_rotary": SliderFigure(
        "15_reading_configs", configs.draw_partial_rotary,
        {"fraction": [0.25, 0.5, 0.75, 1.0]},
        "Two meanings of partial_rotary_factor", initial={"fraction": 0.25},
        labels={"fraction": "partial_rotary_factor"}, height=3.0),
    "eviction": SliderFigure(
        "16_inference", inference.draw_eviction, {"sinks": [0, 1, 4], "window": [8, 16]},
        "Positions after a StreamingLLM eviction", initial={"sinks": 4, "window": 16},
        height=3.4),
    "fox_bias": SliderFigure(
        "17_data_dependent", data_dependent.draw_fox_bias,
        {"period_gate": [0.9, 0.5, 0.1, 0.01]},
        "FoX bias beside ALiBi", initial={"period_gate": 0.1},
        labels={"period_gate": "gate f at '.'"}, height=3.6),
    "stick_breaking": SliderFigure(
        "17_data_dependent", data_dependent.draw_stick_breaking, {"shift": [-2, 0, 2]},
        "Stick-breaking vs softmax", initial={"shift": 0},
        labels={"shift": "logit shift"}, height=3.0),
}
