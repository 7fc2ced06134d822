"""The live figures (posenc.course.figures.live and its ES module posenc-live.js).

Parity: the module's formulas, run by Node on many random parameter points, against posenc's
numpy definitions (relative error <= 1e-6); and the same comparison run on copies of the module
with one formula broken, which it must catch. Then the Python widget's checks.
"""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from posenc.alibi import alibi_bias, alibi_slopes
from posenc.course.figures.absolute import running_mean
from posenc.course.figures.live import LIVE, LiveFigure, figure_words, module_source
from posenc.rope import rope_angles, rope_frequencies
from posenc.scaling import rope_scaling_frequencies
from posenc.sinusoidal import (
    sinusoidal_dot_product,
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_wavelengths,
)

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

RTOL = 1e-6

# Reads the cases (JSON on stdin), imports the module named by its argument, prints each result.
DRIVER = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const live = await import(pathToFileURL(process.argv[2]).href);
const cases = JSON.parse(readFileSync(0, "utf-8"));
const finite = (a) => Array.from(a, (x) => (Number.isFinite(x) ? x : String(x)));
const out = cases.map(([name, args]) => finite(live[name](...args)));
process.stdout.write(JSON.stringify(out));
"""


def _cases(seed: int = 0, points: int = 40):
    """``(js function, its arguments, the numpy result)`` at random parameter points."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(points):
        d = int(rng.integers(1, 600))
        even = 2 * int(rng.integers(2, 300))
        base = float(10 ** rng.uniform(0.2, 7))
        n = int(rng.integers(1, 40))
        out += [
            ("sinusoidalFrequencies", [d, base], sinusoidal_frequencies(d, base)),
            ("sinusoidalWavelengths", [d, base], sinusoidal_wavelengths(d, base)),
            ("sinusoidalEncoding", [n, d, base], sinusoidal_encoding(n, d, base).ravel()),
        ]
        ks = rng.integers(-5000, 5000, size=25).tolist()
        out.append(("sinusoidalDotProduct", [ks, even, base],
                    sinusoidal_dot_product(np.array(ks), even, base)))
        values = rng.normal(size=int(rng.integers(31, 200))).tolist()
        window = 2 * int(rng.integers(0, 15)) + 1
        out.append(("runningMean", [values, window], running_mean(values, window)))
        heads, length = int(rng.integers(1, 130)), int(rng.integers(1, 20))
        out += [("alibiSlopes", [heads], alibi_slopes(heads)),
                ("alibiBias", [heads, length], alibi_bias(heads, length).ravel())]
        position = float(rng.integers(0, 1 << 20))
        factor = float(rng.uniform(1.0, 64.0))
        length0 = float(rng.choice([512, 2048, 4096, 8192]))
        out += [
            ("ropeFrequencies", [even, base], rope_frequencies(even, base)),
            ("ropeAngles", [position, even, base], rope_angles(np.array(position), even, base)),
            ("piFrequencies", [even, base, factor],
             rope_scaling_frequencies("linear", even, base=base, factor=factor)[0]),
            ("ntkFrequencies", [even, base, factor],
             rope_scaling_frequencies("ntk", even, base=base, factor=factor)[0]),
            ("dynamicFrequencies", [even, base, factor, length0, factor * length0],
             rope_scaling_frequencies("dynamic", even, base=base, factor=factor,
                                      original_max_position_embeddings=length0,
                                      seq_len=factor * length0)[0]),
            ("llama3Frequencies", [even, base, factor, length0],
             rope_scaling_frequencies("llama3", even, base=base, factor=factor,
                                      original_max_position_embeddings=length0)[0]),
            ("yarnFrequencies", [even, base, factor, length0],
             rope_scaling_frequencies("yarn", even, base=base, factor=factor,
                                      original_max_position_embeddings=length0)[0]),
        ]
    return out


def _run(source: str, cases, tmp_path) -> list:
    module = tmp_path / "posenc-live.mjs"
    module.write_text(source, encoding="utf-8")
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER, encoding="utf-8")
    done = subprocess.run([NODE, str(driver), str(module)], check=True, capture_output=True,
                          text=True, timeout=120,
                          input=json.dumps([[name, args] for name, args, _ in cases]))
    return json.loads(done.stdout)


def mismatches(source: str, cases, tmp_path) -> list[str]:
    """The cases where the module's result differs from numpy's by more than :data:`RTOL`
    (relative; an exact match is required at -inf, where ALiBi masks)."""
    bad = []
    for (name, args, expected), got in zip(cases, _run(source, cases, tmp_path), strict=True):
        got = np.array([float(x) for x in got])
        expected = np.asarray(expected, dtype=np.float64).ravel()
        if got.shape != expected.shape:
            bad.append(f"{name}{args[:3]}: shape {got.shape} != {expected.shape}")
            continue
        finite = np.isfinite(expected)
        if not np.array_equal(finite, np.isfinite(got)) or \
                not np.array_equal(got[~finite], expected[~finite]):
            bad.append(f"{name}{args[:3]}: infinities differ")
            continue
        scale = np.maximum(np.abs(expected[finite]), 1.0)  # relative, or absolute near 0
        err = np.max(np.abs(got[finite] - expected[finite]) / scale, initial=0.0)
        if err > RTOL:
            bad.append(f"{name}{args[:3]}: error {err:.2e}")
    return bad


@needs_node
def test_the_module_computes_what_posenc_computes(tmp_path):
    cases = _cases()
    assert len(cases) > 400 and {name for name, _, _ in cases} >= {
        "sinusoidalEncoding", "sinusoidalDotProduct", "alibiSlopes", "alibiBias",
        "ropeAngles", "piFrequencies", "ntkFrequencies", "yarnFrequencies"}
    assert mismatches(module_source(), cases, tmp_path) == []


# One formula broken at a time: the parity check must see each.
BROKEN = {
    "frequency exponent": ("Math.pow(base, -(2 * i) / dModel)",
                           "Math.pow(base, -(2 * i + 1) / dModel)"),
    "sin and cos swapped": ("out[row + 2 * i] = Math.sin(a);", "out[row + 2 * i] = Math.cos(a);"),
    "ALiBi's interleaving": ("filter((_, i) => i % 2 === 0)", "filter((_, i) => i % 2 === 1)"),
    "ALiBi's sign": ("-slopes[h] * d + 0", "slopes[h] * d + 0"),
    "NTK's exponent": ("Math.pow(factor, headDim / (headDim - 2))",
                       "Math.pow(factor, headDim / headDim)"),
    "YaRN's ramp": ("Math.ceil(correctionDim(betaSlow", "Math.floor(correctionDim(betaSlow"),
    "Llama 3.1's blend": ("(1 - smooth) * (t / factor) + smooth * t",
                          "smooth * (t / factor) + (1 - smooth) * t"),
}


@needs_node
@pytest.mark.parametrize("what", list(BROKEN))
def test_the_parity_check_catches_a_wrong_formula(tmp_path, what):
    old, new = BROKEN[what]
    source = module_source()
    assert source.count(old) == 1, f"{what}: the formula to break is not in the module"
    assert mismatches(source.replace(old, new), _cases(points=15), tmp_path), what


@needs_node
def test_the_module_draws_every_live_kind(tmp_path):
    """The module's figure kinds are exactly the catalogue's."""
    module = tmp_path / "m.mjs"
    module.write_text(module_source(), encoding="utf-8")
    done = subprocess.run([NODE, "--input-type=module", "-e",
                           f"const m = await import({json.dumps(module.as_uri())});"
                           "process.stdout.write(JSON.stringify(m.KINDS));"],
                          check=True, capture_output=True, text=True, timeout=60)
    assert set(json.loads(done.stdout)) == {spec.kind for spec in LIVE.values()}


# The widget --------------------------------------------------------------------------------

def test_a_live_figure_starts_at_its_controls_initial_values():
    w = LIVE["pe_heatmap"].show()
    assert w.kind == "pe_heatmap" and w.values == {"d_model": 64, "base": 10000.0}
    assert [c["name"] for c in w.controls] == ["d_model", "base"]
    assert w.module == "posenc-live.js" and "export function render" in w._esm
    assert w.text["en"]["controls"] == {"d_model": "d_model", "base": "base"}


def test_values_outside_a_control_are_refused_with_the_range():
    with pytest.raises(ValueError, match=r"d_model must be an even integer in 2 \.\. 1024, got 3"):
        LiveFigure("pe_heatmap", d_model=3)
    with pytest.raises(ValueError, match=r"base must be a number in 10 \.\. 1e\+06"):
        LiveFigure("pe_heatmap", base=5)
    with pytest.raises(TypeError, match="d_model must be an even integer"):
        LiveFigure("pe_heatmap", d_model=64.5)
    with pytest.raises(TypeError, match="base must be a number"):
        LiveFigure("pe_heatmap", base="10000")
    with pytest.raises(TypeError, match="takes the values d_model, base; got 'heads'"):
        LiveFigure("pe_heatmap", heads=4)
    with pytest.raises(ValueError, match="kind must be one of 'pe_heatmap'"):
        LiveFigure("heatmap")
    with pytest.raises(ValueError, match=r"head must be an integer in 1 \.\. 4, got 5"):
        LiveFigure("alibi_bias", num_heads=4, head=5)


def test_values_set_later_are_checked_too():
    w = LiveFigure("alibi_slopes", num_heads=6)
    w.values = {"num_heads": 40}
    assert w.values == {"num_heads": 40}
    with pytest.raises(ValueError, match=r"num_heads must be an integer in 1 \.\. 64"):
        w.values = {"num_heads": 65}


def test_a_dependent_control_follows_its_bound():
    assert LiveFigure("alibi_bias", num_heads=4).values["head"] == 1
    assert LiveFigure("alibi_bias", num_heads=4, head=4).values["head"] == 4


def test_every_live_figure_has_its_words_in_chinese():
    from posenc.course.i18n import leftover_english

    for key, spec in LIVE.items():
        words = figure_words(spec, "zh")
        texts = [t for v in words.values() for t in (v.values() if isinstance(v, dict) else [v])]
        # a {name} slot is a number in the figure
        assert [t for t in texts if leftover_english(re.sub(r"\{\w+\}", "1", t))] == [], key
        assert "{slow}" in figure_words(LIVE["wavelengths"], "zh")["slowPairs"]


CLASSIC_DRIVER = """
const { readFileSync } = require("node:fs");
globalThis.window = globalThis;
require(process.argv[2]);
const cases = JSON.parse(readFileSync(0, "utf-8"));
const finite = (a) => Array.from(a, (x) => (Number.isFinite(x) ? x : String(x)));
const out = cases.map(([name, args]) => finite(window.posencLive[name](...args)));
process.stdout.write(JSON.stringify(out));
"""


@needs_node
def test_the_classic_script_for_file_pages_is_the_same_code(tmp_path):
    """The site's fallback for a page read from file:// (posenc_site.pages.classic_script):
    every export, and the same numbers."""
    from posenc_site.pages import classic_script

    script = tmp_path / "classic.js"
    script.write_text(classic_script(module_source()), encoding="utf-8")
    driver = tmp_path / "driver.cjs"
    driver.write_text(CLASSIC_DRIVER, encoding="utf-8")
    cases = _cases(points=5)
    done = subprocess.run([NODE, str(driver), str(script)], check=True, capture_output=True,
                          text=True, timeout=120,
                          input=json.dumps([[name, args] for name, args, _ in cases]))
    assert json.loads(done.stdout) == _run(module_source(), cases, tmp_path)
    exports = set(re.findall(r"^export (?:function|const) (\w+)", module_source(), re.M))
    assert exports >= {"render", "KINDS"} and all(
        f" {name}" in script.read_text().rsplit("window.posencLive", 1)[1] for name in exports)


@needs_node
def test_a_key_steps_to_the_next_value_a_control_takes(tmp_path):
    module = tmp_path / "m.mjs"
    module.write_text(module_source(), encoding="utf-8")
    cases = [[10000, -1, "sig3"], [9990, 1, "sig3"], [10000, 1, "sig3"], [1e6, -1, "sig3"],
             [31600, 1, "sig3"], [100, -1, "sig3"], [64, 1, "even"], [64, -1, "even"],
             [7, 1, "int"]]
    done = subprocess.run([NODE, "--input-type=module", "-e",
                           f"const m = await import({json.dumps(module.as_uri())});"
                           f"const c = {json.dumps(cases)};"
                           "process.stdout.write(JSON.stringify(c.map(a => m.neighbour(...a))));"],
                          check=True, capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout) == [9990, 10000, 10100, 999000, 31700, 99.9, 66, 62, 8]
