"""The library's structure (issue 19): core ``posenc`` imports with the course's
dependencies absent, its modules import one another without a circle, and ``posenc.nn``
depends on nothing above it (issue 33)."""

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "posenc"
COURSE_ONLY = ("matplotlib", "ipywidgets", "jupyterquiz", "IPython", "tqdm")


def test_core_posenc_imports_and_runs_without_the_course_dependencies():
    """A meta-path finder refuses the course's packages; every core module imports, and a
    tiny experiment runs (its progress line falls back to plain stderr without tqdm)."""
    core = sorted(".".join(p.relative_to(SRC).with_suffix("").parts)
                  for p in PACKAGE.rglob("*.py")
                  if "course" not in p.relative_to(PACKAGE).parts and p.name != "__main__.py")
    code = f"""
import importlib, importlib.abc, importlib.machinery, sys
class Block(importlib.abc.Loader):  # found (probes see a spec), but importing it fails
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {COURSE_ONLY!r}:
            return importlib.machinery.ModuleSpec(name, self)
    def create_module(self, spec):
        raise ModuleNotFoundError('blocked: ' + spec.name, name=spec.name)
    def exec_module(self, module):
        pass
sys.meta_path.insert(0, Block())
for name in {core!r}:
    importlib.import_module(name.removesuffix('.__init__'))
from posenc.experiments.extrapolation import PRESETS, run_experiment
config = PRESETS['text-small'].replace(encodings=('alibi',), steps=2, eval_tokens=256,
                                       log_every=1, d_model=16, num_layers=1, d_ff=32)
run_experiment(config, progress=True)
blocked = [m for m in sys.modules if m.split('.')[0] in {COURSE_ONLY!r}]
assert not blocked, blocked
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "alibi" in proc.stderr and "2/2" in proc.stderr  # the plain progress line


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The posenc modules ``path`` imports: at module level and inside functions alike (a
    function-level import is the same dependency, only later: the circle
    ``rope -> nn.rotary -> scaling -> rope`` hid behind one), each with the packages
    above it, whose ``__init__`` runs first (``from .nn.rotary import`` runs
    ``posenc/nn/__init__.py``)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("posenc"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("posenc"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)
    parents = {".".join(m.split(".")[:i]) for m in found for i in range(2, m.count(".") + 1)}
    return found | parents


def test_posenc_modules_import_one_another_without_a_circle():
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {name: {m for m in _imports(path) if m in modules and m != name}
             for name, path in modules.items()}
    # a module's parent package is imported first: not an edge of the import order itself
    graph = {name: {m for m in deps if not name.startswith(m + ".")} for name, deps in
             graph.items()}
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == "open":
                cycle = stack[stack.index(dep):] + [dep]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert len(graph) > 30 and graph["posenc.model"] >= {"posenc.nn"}
    # the numpy maths imports no torch module, at any depth of a function
    numpy_maths = [n for n in graph if n in ("posenc.rope", "posenc.rope_variants")
                   or n == "posenc.scaling" or n.startswith("posenc.scaling.")]
    assert len(numpy_maths) > 3  # the scaling package and its modules
    assert not any(m.startswith("posenc.nn") for n in numpy_maths for m in graph[n])


def test_the_numpy_rope_modules_never_import_torch():
    paths = [PACKAGE / "rope.py", PACKAGE / "rope_variants.py",
             *sorted((PACKAGE / "scaling").glob("*.py"))]
    assert len(paths) > 3  # the scaling package and its modules
    for path in paths:
        name = path.relative_to(PACKAGE)
        tree = ast.parse(path.read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                     and n.module}
        assert not {m for m in imported if m.split(".")[0] == "torch"}, name


#: What a module of posenc.nn must not name in its code: the model and the experiment
#: that use the registry (issue 33: their protocol lives in the experiment's package).
NN_MUST_NOT_NAME = re.compile(r"TinyLM|\.config\.|set_rope_frequencies")


def _code_only(source: str) -> str:
    """``source`` with its comments and string literals (docstrings included) blanked out,
    line and column kept: the code that runs, which docs may describe freely."""
    lines = source.splitlines(keepends=True)
    blank = {tokenize.COMMENT, tokenize.STRING,
             *(getattr(tokenize, t) for t in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
               if hasattr(tokenize, t))}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in blank:
            continue
        (row, col), (end_row, end_col) = token.start, token.end
        for r in range(row, end_row + 1):
            line = lines[r - 1]
            start = col if r == row else 0
            stop = end_col if r == end_row else len(line.rstrip("\n"))
            lines[r - 1] = line[:start] + " " * (stop - start) + line[stop:]
    return "".join(lines)


def test_posenc_nn_depends_on_nothing_above_it():
    """posenc.nn is torch modules and their registry: no module of it imports posenc.model
    or posenc.experiments (at any depth of a function: no lazy import either), imports
    anything by name at run time, or names TinyLM, a model's ``.config.`` or
    ``set_rope_frequencies`` in its code (no function of it takes a TinyLM)."""
    paths = sorted((PACKAGE / "nn").glob("*.py"))
    assert len(paths) > 10
    assert "model.config.x" in _code_only("y = model.config.x  # TinyLM\n")
    assert "TinyLM" not in _code_only('"""TinyLM"""\nf"{x} TinyLM"  # TinyLM\n')
    for path in paths:
        name = path.relative_to(SRC)
        above = {m for m in _imports(path)
                 if m.startswith(("posenc.model", "posenc.experiments"))}
        assert not above, (name, above)
        code = _code_only(path.read_text())
        assert not NN_MUST_NOT_NAME.search(code), (name, NN_MUST_NOT_NAME.findall(code))
        calls = {node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
                 for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute | ast.Name)}
        assert not calls & {"import_module", "__import__"}, name


def test_every_variant_of_the_experiment_belongs_to_a_registered_method():
    """The experiment's protocol (variants, fine-tuning, records, notes) is registered per
    method in posenc.experiments.extrapolation.methods, for registered methods only, and
    posenc.nn's registry keeps none of it."""
    import dataclasses

    import posenc.nn
    from posenc.experiments.extrapolation import (
        EXPERIMENT_METHODS,
        PRESETS,
        derived_variants,
    )
    from posenc.nn import POSITIONS, PositionMethod

    assert set(EXPERIMENT_METHODS) <= set(POSITIONS)
    variants = {v.name: name for name, entry in EXPERIMENT_METHODS.items()
                for v in entry.variants}
    derived = {name: source for name, (source, _) in derived_variants().items()}
    assert variants == derived == {"learned_interp": "learned", "rope_pi": "rope"}
    assert not set(variants) & set(POSITIONS)
    assert [n for n, e in EXPERIMENT_METHODS.items() if e.finetunable] == ["rope"]
    for config in PRESETS.values():
        for variant in config.variant_keys:
            assert variant.kind == "pattern" or variant.source in POSITIONS, variant
    moved = {"variants", "finetunable", "record", "undefined_note"}
    assert not moved & {f.name for f in dataclasses.fields(PositionMethod)}
    assert not hasattr(posenc.nn, "Variant")


TOY = '''"""A toy built-in method (a test): a fixed bias of -|i - j| / 8 on the scores."""

import torch

from .positions import PositionEncoding, register_position


class ToyBias(PositionEncoding):
    def __init__(self, spec, *, toy_scale: float = 0.125):
        super().__init__()
        self.toy_scale = toy_scale

    def score_bias(self, q, k):
        i = torch.arange(q.shape[-2], device=q.device)
        j = torch.arange(k.shape[-2], device=k.device)
        return -self.toy_scale * (i[:, None] - j[None, :]).abs().to(q.dtype)


register_position("toy", ToyBias)
'''


def test_a_built_in_method_touches_exactly_the_files_the_readme_lists(tmp_path):
    """README, "Adding a position method": a new file in nn/, one import line in
    nn/__init__.py, its row in the catalogue and one name in the experiment's config. Done
    to a copy of src/, the toy method then runs in attention, TinyLM (with its option), the
    cost tables, the figure colours (from its row) and the experiment's config and
    presets."""
    import shutil

    readme = (SRC.parent / "README.md").read_text()
    section = readme[readme.index("## Adding a position method"):]
    section = section[:section.index("\n## ", 5)]
    for path in ("src/posenc/nn/<method>.py", "src/posenc/nn/__init__.py",
                 "src/posenc/catalogue.py", "src/posenc/experiments/extrapolation/config.py"):
        assert f"`{path}`" in section, path
    copy = tmp_path / "src"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    nn = copy / "posenc" / "nn"
    (nn / "toy.py").write_text(TOY)
    init = (nn / "__init__.py").read_text()
    anchor = "from .attention import MultiHeadSelfAttention\n"  # after the last method's line
    assert init.count(anchor) == 1
    line = "from .toy import ToyBias  # noqa: F401\n"
    (nn / "__init__.py").write_text(init.replace(anchor, line + anchor))
    catalogue = copy / "posenc" / "catalogue.py"
    text = catalogue.read_text()
    anchor = "),\n)\n\n#: The built-in methods' names"  # the end of BUILT_IN, after its last row
    assert text.count(anchor) == 1
    row = '    MethodFacts("toy", label="toy bias", color="#123456", in_comparison=False),\n'
    catalogue.write_text(text.replace(anchor, "),\n" + row + anchor[3:]))
    config = copy / "posenc" / "experiments" / "extrapolation" / "config.py"
    text = config.read_text()
    listed = re.search(r"ALL_ENCODINGS = \([^)]*\)", text)  # the whole tuple, whatever is last
    assert listed
    config.write_text(text.replace(listed[0], listed[0][:-1] + ', "toy")'))
    code = """
import torch
from posenc.nn import POSITIONS, MultiHeadSelfAttention
from posenc.model import TinyLM, TinyLMConfig
from posenc.compare import ALL_METHODS, METHODS, extra_attention_cost
from posenc.catalogue import METHOD_ORDER, facts
from posenc.course.figures.style import METHOD_COLORS
from posenc.experiments.extrapolation import PRESETS, ALL_ENCODINGS
assert list(POSITIONS)[-1] == 'toy' and 'toy' in ALL_METHODS
assert MultiHeadSelfAttention(16, 2, 'toy')(torch.randn(1, 5, 16)).shape == (1, 5, 16)
model = TinyLM(TinyLMConfig(position='toy', options={'toy_scale': 0.5}, d_model=16, num_heads=2))
assert model.blocks[0].attn.encoding.toy_scale == 0.5
assert extra_attention_cost('toy', d_model=16, num_heads=2, seq_len=8)['memory'] == 64
assert METHOD_COLORS['toy'] == '#123456' and 'toy' not in METHODS
assert list(METHOD_ORDER)[-1] == 'toy' and facts('toy').label == 'toy bias'
assert 'toy' in ALL_ENCODINGS and 'toy' in PRESETS['main'].encodings
PRESETS['main'].model_config('toy')
print('ok')
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path,
                          env={"PYTHONPATH": str(copy), "OMP_NUM_THREADS": "1",
                               "MPLBACKEND": "Agg"})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
