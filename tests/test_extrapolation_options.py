"""Options per method in the experiment: no method's settings are config fields, and the
runner names no method (what a method needs beyond training comes from the registry);
results written with the old fields read through the migration, with their numbers."""

import ast
import gzip
import json
import shlex
from pathlib import Path

import numpy as np
import pytest
import torch

from posenc.catalogue import describe_method, forget_method
from posenc.course.results import RESULTS_DIR, load_results
from posenc.experiments import extrapolation
from posenc.experiments.extrapolation import (
    EXPERIMENT_METHODS,
    PRESETS,
    SCHEMA,
    ExperimentMethod,
    ExtrapolationConfig,
    Variant,
    VariantKey,
    config_hash,
    derived_variants,
    experiment_method,
    migrate,
    register_experiment_method,
    run_experiment,
    t5_bias_by_distance,
    unregister_experiment_method,
)
from posenc.experiments.extrapolation.run import _recorded
from posenc.experiments.extrapolation.training import _parameter_groups
from posenc.model import TinyLM, TinyLMConfig
from posenc.nn import (
    POSITIONS,
    PositionEncoding,
    RotaryEmbedding,
    T5RelativeBias,
    register_position,
    unregister_position,
)

#: The committed results written before the schema had a version (each has its copy as
#: written in BEFORE_MIGRATION; later files, take four's full.json, are written current).
COMMITTED = sorted(p for p in Path(RESULTS_DIR).glob("*.json")
                   if (Path(__file__).parent / "data" / "results_v1" / f"{p.name}.gz").exists())
OLD_FIELDS = ("base", "t5_num_buckets", "t5_max_distance", "t5_bias_lr_scale")
#: The committed files as they were before their one-time migration to schema 2.
BEFORE_MIGRATION = Path(__file__).parent / "data" / "results_v1"


def before_migration(name: str) -> dict:
    """The committed results file ``name`` as written before the migration (schema 1)."""
    return json.loads(gzip.decompress((BEFORE_MIGRATION / f"{name}.gz").read_bytes()))


def test_the_config_has_no_field_of_one_method():
    fields = set(ExtrapolationConfig.__dataclass_fields__)
    assert not {f for f in fields if f.startswith(("t5_", "shaw_"))} | (fields & {"base"})


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_every_committed_results_file_reads_with_its_recorded_hash(path):
    """Migrated once to the current schema: stored in it (nothing left to migrate at load),
    its config in the current layout with the hash of that layout, same variants. Written
    with the old fields (``base``, ``t5_*``): the options a model was trained with are the
    old fields' values. Written with options per method (the runs of the positional task):
    read back as written."""
    results = load_results(str(path))
    assert json.loads(path.read_text())["schema"] == results.schema == SCHEMA
    old = before_migration(path.name)["config"]
    config = ExtrapolationConfig.from_dict(results["config"])
    assert config.to_dict() == results["config"] and config == results.config
    assert config_hash(config) == results["config_hash"]
    assert list(config.variants) == list(results["variants"])
    if not set(OLD_FIELDS) & set(old):  # written after options became per method
        # as written; fields added since (calibration runs predate some) at their defaults
        written = {k: v for k, v in config.to_dict().items() if k in old}
        assert written == old
        assert all(getattr(ExtrapolationConfig(), k) == getattr(config, k)
                   for k in config.to_dict() if k not in old)
        return
    assert set(OLD_FIELDS) <= set(old)  # these files predate per-method options
    t5 = config.method_options("t5")
    assert (t5["num_buckets"], t5["max_distance"], t5["bias_lr_scale"]) == (
        old["t5_num_buckets"], old["t5_max_distance"], old["t5_bias_lr_scale"])
    for encoding in config.encodings:
        if "base" in POSITIONS[encoding].options:
            assert config.method_options(encoding)["base"] == old["base"]
    # and the new layout round-trips to the same config and hash
    again = ExtrapolationConfig.from_dict(json.loads(json.dumps(config.to_dict())))
    assert again == config and config_hash(again) == results["config_hash"]
    assert not set(OLD_FIELDS) & set(config.to_dict())


def test_old_fields_become_options_of_the_methods_that_took_them():
    old = {**PRESETS["text"].replace(options={}).to_dict(), "base": 500.0,
           "t5_num_buckets": 16, "t5_max_distance": 64, "t5_bias_lr_scale": 3.0}
    with pytest.raises(TypeError, match="base, t5_bias_lr_scale.*migrate"):
        ExtrapolationConfig.from_dict(old)  # an old layout is the migration's to read

    def from_dict(config):
        return ExtrapolationConfig.from_dict(migrate({"config": config, "variants": {}})["config"])

    config = from_dict(old)
    assert config.method_options("t5") == {**POSITIONS["t5"].options, "num_buckets": 16,
                                           "max_distance": 64, "bias_lr_scale": 3.0}
    assert config.method_options("rope")["base"] == 500.0  # every method that takes a base
    assert config.method_options("sinusoidal")["base"] == 500.0
    assert "base" not in config.method_options("alibi")
    # a value equal to the method's default is no option (the config equals the one written)
    same = from_dict({**old, "base": 10000.0, "t5_num_buckets": 32, "t5_max_distance": 128,
                      "t5_bias_lr_scale": 1.0})
    assert same.options == ()


def test_the_hash_follows_options_whatever_their_spelling():
    text = PRESETS["text"]
    as_int = text.replace(options={"t5": {"bias_lr_scale": 10}})  # as --options reads "10"
    assert config_hash(as_int) == config_hash(text)
    assert config_hash(text.replace(options={})) != config_hash(text)
    assert config_hash(text.replace(options={"t5": {"bias_lr_scale": 10.0, "max_distance": 64}})
                       ) != config_hash(text)
    rope = text.replace(options={**dict(text.to_dict()["options"]), "rope": {"base": 500.0}})
    assert config_hash(rope) != config_hash(text)


def test_an_option_at_its_default_is_no_option_but_a_given_max_positions_stays():
    """One configuration, one spelling (so one hash): T5's default bucket count given or not
    is the same config. max_positions is filled with train_length when not given, so a
    value given for it is kept, and kept when train_length changes."""
    text = PRESETS["text"]
    spelled = text.replace(options={"t5": {"bias_lr_scale": 10, "num_buckets": 32}})
    assert spelled == text and config_hash(spelled) == config_hash(text)
    assert spelled.to_dict()["options"] == {"t5": {"bias_lr_scale": 10.0}}
    kept = text.replace(options={"t5": {"bias_lr_scale": 10.0},
                                 "learned": {"max_positions": text.train_length}})
    assert dict(kept.options)["learned"] == (("max_positions", 128),)
    assert config_hash(kept) != config_hash(text)
    shorter = kept.replace(train_length=64)
    assert shorter.model_config("learned").position_options()["max_positions"] == 128
    assert text.replace(train_length=64).method_options("learned")["max_positions"] == 64


def test_t5s_learning_rate_scale_is_an_option_the_trainer_reads_from_the_module():
    config = PRESETS["text"]
    model = TinyLM(config.model_config("t5"))
    table = model.blocks[0].attn.encoding
    assert isinstance(table, T5RelativeBias) and table.param_lr_scale == 10.0
    groups = _parameter_groups(model)
    assert [g["lr_scale"] for g in groups] == [1.0, 10.0]
    assert [id(p) for p in groups[1]["params"]] == [id(table.embedding.weight)]
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))
    with pytest.raises(ValueError, match="bias_lr_scale"):
        TinyLMConfig(position="t5", options={"bias_lr_scale": 0.0})


class _Scaled(PositionEncoding):
    """A reader's method with a learned per-head bias at 3x the learning rate."""

    param_lr_scale = 3.0

    def __init__(self, spec, *, init: float = 0.5):
        super().__init__()
        self.slope = torch.nn.Parameter(torch.full((spec.num_heads, 1, 1), init))

    def score_bias(self, q, k):
        i = torch.arange(q.shape[-2], device=q.device)
        j = torch.arange(k.shape[-2], device=k.device)
        return -self.slope * (i[:, None] - j[None, :]).abs().to(q.dtype)


def _record_slope(module):
    return {"slope_by_head": module.slope.detach().flatten() * 1.00001}


@pytest.fixture
def scaled():
    register_position("scaled_toy", _Scaled, replace=True)
    describe_method("scaled_toy", label="toy", color="#123456")
    register_experiment_method("scaled_toy", record=_record_slope, replace=True)
    yield
    unregister_experiment_method("scaled_toy")
    unregister_position("scaled_toy")
    forget_method("scaled_toy")


def test_a_readers_method_gets_its_learning_rate_and_record_through_the_registry(scaled):
    model = TinyLM(TinyLMConfig(d_model=16, num_heads=2, num_layers=2, d_ff=32,
                                position="scaled_toy", options={"init": 0.25}))
    groups = _parameter_groups(model)
    slopes = {id(b.attn.encoding.slope) for b in model.blocks}
    assert [g["lr_scale"] for g in groups] == [1.0, 3.0]
    assert {id(p) for p in groups[1]["params"]} == slopes and len(slopes) == 2
    recorded = _recorded(POSITIONS["scaled_toy"], model)
    # one record per layer (each block has its own module), rounded to 4 digits for the JSON
    assert recorded == {"slope_by_head": [[0.25, 0.25], [0.25, 0.25]]}
    assert _recorded(POSITIONS["alibi"], model) == {}


class _Rotary2(RotaryEmbedding):
    """RoPE under another name."""


def _build_rotary2(spec, *, base: float = 10000.0):
    return _Rotary2(spec.head_dim, base)


def test_fine_tuned_variants_come_from_the_registrys_flag():
    register_position("rope_two", _Rotary2, build=_build_rotary2, replace=True)
    describe_method("rope_two", label="RoPE two", color="#654321")
    register_experiment_method("rope_two", finetunable=True, replace=True)
    register_position("rope_three", _Rotary2, build=_build_rotary2, replace=True)
    describe_method("rope_three", label="RoPE three", color="#654322")
    try:
        config = ExtrapolationConfig(encodings=("rope_two", "rope_three", "alibi"),
                                     finetune_scalings=("none", "yarn"), batch_size=16)
        assert config.finetuned_encodings == ("rope_two",)
        assert [v for v in config.variants if "_ft_" in v] == ["rope_two_ft_none",
                                                               "rope_two_ft_yarn"]
        assert VariantKey.parse("rope_two_ft_yarn") == VariantKey("finetuned", "rope_two", "yarn")
        assert VariantKey.parse("rope_two_ft_yarn").source == "rope_two"
        assert VariantKey.parse("rope_two_ft_yarn").label(config).startswith(
            "RoPE two, fine-tuned")
        with pytest.raises(ValueError, match="finetune_scalings needs a fine-tunable method"):
            ExtrapolationConfig(encodings=("rope_three", "alibi"), finetune_scalings=("yarn",))
    finally:
        unregister_experiment_method("rope_two")
        unregister_position("rope_two")
        unregister_position("rope_three")
        forget_method("rope_two")
        forget_method("rope_three")


def _halved(model, train_length, eval_length):
    """A reader's evaluation-time variant: the trained slopes halved (a changed copy)."""
    import copy

    adapted = copy.deepcopy(model)
    for block in adapted.blocks:
        block.attn.encoding.slope.data /= 2
    return adapted


def test_a_readers_method_gets_its_variant_from_the_experiments_registry(scaled):
    """The experiment's part of a reader's method is registered apart, in the experiment's
    package, and the experiment evaluates its variant after it, with its label and note."""
    assert experiment_method("scaled_toy").variants == ()
    register_experiment_method(
        "scaled_toy", record=_record_slope, replace=True,
        variants=[Variant("scaled_toy_half", "toy, halved", _halved, note="slopes / 2")])
    config = PRESETS["text-small"].replace(encodings=("scaled_toy",), steps=2, eval_tokens=256,
                                           log_every=1, d_model=16, num_layers=1, d_ff=32)
    assert config.variants == ("scaled_toy", "scaled_toy_half")
    assert derived_variants()["scaled_toy_half"][0] == "scaled_toy"
    assert VariantKey.parse("scaled_toy_half").label(config) == "toy, halved"
    assert VariantKey.parse("scaled_toy_half") == VariantKey("derived", "scaled_toy",
                                                             "scaled_toy_half")
    results = run_experiment(config, progress=False)
    half = results["variants"]["scaled_toy_half"]
    assert (half["label"], half["note"], half["trained_encoding"]) == (
        "toy, halved", "slopes / 2", "scaled_toy")
    assert "slope_by_head" in results["variants"]["scaled_toy"]
    # a method without an entry gets the empty defaults
    unregister_experiment_method("scaled_toy")
    assert experiment_method("scaled_toy") == ExperimentMethod("scaled_toy")
    assert ExtrapolationConfig(encodings=("scaled_toy",)).variants == ("scaled_toy",)
    register_experiment_method("scaled_toy")  # (the fixture removes it)


def test_the_experiments_registry_refuses_what_it_cannot_run(scaled):
    variant = Variant("toy_half", "toy, halved", _halved)
    with pytest.raises(ValueError, match="position must be one of"):
        register_experiment_method("no_such_method", variants=[variant])
    for taken in ("rope_pi", "alibi"):  # another method's variant, a method's name
        with pytest.raises(ValueError, match=f"variant name {taken!r} is taken"):
            register_experiment_method("scaled_toy", variants=[Variant(taken, "x", _halved)],
                                       replace=True)
    with pytest.raises(TypeError, match="each variant must be a Variant"):
        register_experiment_method("scaled_toy", variants=[("toy_half", _halved)], replace=True)
    with pytest.raises(TypeError, match="adapt must be a function"):
        register_experiment_method("scaled_toy", variants=[Variant("toy_half", "x", None)],
                                   replace=True)
    with pytest.raises(TypeError, match="record must be a function"):
        register_experiment_method("scaled_toy", record={"slope": 1}, replace=True)
    with pytest.raises(ValueError, match="already registered"):
        register_experiment_method("scaled_toy")
    assert experiment_method("scaled_toy").record is _record_slope  # the fixture's, unchanged


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_committed_labels_notes_and_records_are_what_the_experiment_writes_now(path):
    """The experiment's protocol moved from posenc.nn to its own package (issue 33) and
    writes what it wrote: each committed entry's label, variant note, "not defined" note
    and recorded numbers come from the experiment's registry now."""
    results = load_results(str(path))
    config = ExtrapolationConfig.from_dict(results["config"])
    recorded = {"t5_bias", "fire_threshold", "fire_c"}
    for name, entry in results["variants"].items():
        key = VariantKey.parse(name)
        assert key.name == name and entry["trained_encoding"] == key.trained_encoding, name
        assert entry["label"] == key.label(config), name
        notes = {}
        if key.kind == "derived":
            notes = {v.name: v.note for v in experiment_method(key.source).variants}
        assert entry.get("note") == (notes.get(name) or None), name
        protocol = experiment_method(key.source) if key.kind in ("trained", "nope") else None
        if "not_defined" in entry:
            assert entry["not_defined"] == protocol.undefined_note.format(
                train_length=config.train_length), name
        assert bool(set(entry) & recorded) == bool(protocol and protocol.record), name
    assert set(EXPERIMENT_METHODS) >= {"learned", "rope", "t5", "fire"}


def test_the_runner_names_no_method():
    """No registered method's name as a string, and no method's class, in the runner's
    parts: what a method needs comes from the registry."""
    folder = Path(extrapolation.__file__).parent
    for part in ("run.py", "training.py", "evaluation.py", "finetuning.py", "cli.py"):
        tree = ast.parse((folder / part).read_text())
        names = {node.value for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str)}
        methods = set(POSITIONS) - {"none"}  # also a scaling's and a reduction's name
        assert not names & methods, (part, names & methods)
        imported = {alias.name for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) for alias in node.names}
        classes = {m.module.__name__ for m in POSITIONS.values()}
        assert not imported & classes, (part, imported & classes)


def test_t5_bias_by_distance_reads_the_buckets_from_the_options():
    """Causal T5 buckets (Raffel et al.): the first num_buckets // 2 distances exact, every
    distance from max_distance on in the last bucket."""
    config = PRESETS["text"].replace(encodings=("t5",),
                                     options={"t5": {"num_buckets": 8, "max_distance": 16}})
    table = np.arange(8.0)[:, None] * np.array([1.0, -1.0])  # bucket b -> (b, -b) per head
    results = {"config": config.to_dict(), "eval_lengths": [128, 256],
               "variants": {"t5": {"t5_bias": table.tolist()}}}
    distances, bias = t5_bias_by_distance(results)
    assert bias.shape == (2, 256) and list(distances[:3]) == [0, 1, 2]
    assert list(bias[0, :4]) == [0.0, 1.0, 2.0, 3.0]
    assert set(bias[0, 16:]) == {7.0} and list(bias[1]) == list(-bias[0])


@pytest.mark.parametrize("command, name", [
    ("--preset text", "extrapolation_results"),
    ("--preset text --encodings t5 --options t5:bias_lr_scale=1", "extrapolation_results_t5_lr1"),
    ("--preset text --encodings sinusoidal,alibi --seed 1", "extrapolation_results_seed1"),
    ("--preset text --num-seeds 3", "extrapolation_results_3seeds"),
    ("--preset text --encodings shaw", "extrapolation_results_shaw"),
    ("--preset take3-main", "take3_main"), ("--preset take3", "take3_full"),
    ("--preset full", "full"), ("--preset small", "small"),
    ("--preset main --learning-rate 4e-3", "sweep_lr4e-3"),
    ("--preset main --learning-rate 1e-3 --eval-multipliers 1", "sweep_lr1e-3"),
    ('--preset main --encodings none,rope,alibi,t5,kerple_power --patterns "" '
     '--nope-encodings "" --num-seeds 3', "heads"),
])
def test_the_documented_commands_give_the_committed_configs(command, name):
    """Chapter 9's, chapter 13's and --help's commands, with T5's options on the new
    command line."""
    from posenc.experiments.extrapolation.cli import config_from_command_line

    config = config_from_command_line(shlex.split(command))
    assert config_hash(config) == load_results(f"{name}.json")["config_hash"]
