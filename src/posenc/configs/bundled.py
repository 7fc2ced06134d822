"""Real configs, bundled: the position fields of models released 2023-26.

``src/posenc/configs/data/<name>.json`` holds, for one model, the fields of its Hugging Face
``config.json`` that position and the KV cache's size depend on (copied unchanged;
everything else left out),
with

* ``"_source"``: the Hugging Face repository and file, e.g.
  ``"meta-llama/Llama-3.1-8B/config.json"``;
* ``"_date"``: the model's release month, ``"YYYY-MM"`` (the year alone where a source
  gives no month, ``"unknown"`` where none gives it);
* ``"_found_in"``: where the values were read, a public GitHub copy of that file
  (``owner/repo/path@commit``), since the Hub itself was out of reach; or, where no copy
  was found, Hugging Face's configuration class for the family, whose docstring names the
  checkpoint (``"transformers 5.23.0 configuration_<family>.py defaults ..."``): its layer
  pattern and position fields are the class's defaults, not necessarily the checkpoint's;
* ``"_note"`` (some): what to know about that copy.

:func:`bundled_names` lists them, :func:`load_bundled` returns one as a dict (metadata
included, ready for :func:`posenc.configs.read_config`), :func:`read_bundled` reads it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from .reader import ModelPositions, read_config

__all__ = ["bundled_names", "load_bundled", "read_bundled"]


@cache
def _files() -> dict[str, str]:
    folder = resources.files(__package__) / "data"
    return {p.name.removesuffix(".json"): p.read_text(encoding="utf-8")
            for p in folder.iterdir() if p.name.endswith(".json")}


_DEFAULTS = "transformers "  # how _found_in starts for a config built from class defaults


def bundled_names(*, files_only: bool = False) -> tuple[str, ...]:
    """The bundled configs' names (file names without ``.json``), by release date (undated
    ones last). ``files_only``: only those read from a copy of the checkpoint's own
    ``config.json``, not built from a configuration class's defaults."""
    names = sorted(_files(), key=lambda n: (load_bundled(n)["_date"], n))
    if files_only:
        names = [n for n in names if not load_bundled(n)["_found_in"].startswith(_DEFAULTS)]
    return tuple(names)


def load_bundled(name: str) -> dict:
    """The bundled config ``name`` as a fresh dict (``_source``, ``_date``, ... included)."""
    files = _files()
    if not isinstance(name, str) or name not in files:
        raise ValueError(f"name must be one of {', '.join(map(repr, sorted(files)))}; "
                         f"got {name!r}")
    return json.loads(files[name])


def read_bundled(name: str) -> ModelPositions:
    """:func:`posenc.configs.read_config` of the bundled config ``name``."""
    return read_config(load_bundled(name))
