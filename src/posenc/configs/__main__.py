"""``python -m posenc.configs PATH [--json] [--plot FILE]``: any model's position settings.

PATH is a ``config.json``, a local model folder holding one (a Hugging Face snapshot), or
the name of a bundled config (:func:`posenc.configs.bundled_names`). Prints the per-layer
table folded by kind (:func:`posenc.configs.table.kind_table`); ``--json`` prints the same
as JSON; ``--plot FILE`` also draws the layers (the course's figure, needs matplotlib).
``--lenient`` reads a family posenc does not know with the generic rules, with a warning,
instead of refusing it. A config that cannot be read is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings

from .bundled import bundled_names, load_bundled
from .reader import load_config, read_config
from .table import kind_records, kind_table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.configs",
                                     description="Per-layer position settings of a model's "
                                                 "config.json, folded by kind of layer.")
    parser.add_argument("path", help="a config.json, a model folder, or a bundled name")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--plot", metavar="FILE",
                        help="also draw the layers into FILE (.png, .svg)")
    parser.add_argument("--lenient", action="store_true",
                        help="read an unknown family with the generic rules (warns)")
    args = parser.parse_args(argv)
    try:
        config = (load_bundled(args.path) if args.path in bundled_names()
                  else load_config(args.path))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = read_config(config, strict=not args.lenient)
    except (ValueError, TypeError) as err:
        print(f"posenc.configs: {args.path}: {err}", file=sys.stderr)
        return 2
    for w in caught:
        print(f"posenc.configs: warning: {w.message}", file=sys.stderr)
    print(json.dumps(kind_records(model), indent=1) if args.json else kind_table(model))
    if args.plot:  # the course's figure (matplotlib, outside the numpy-only library)
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure

        from ..course.figures.configs import draw_model_layers

        fig = Figure(figsize=(7.5, 4.6))
        draw_model_layers(fig, config)
        fig.savefig(args.plot, dpi=150, bbox_inches="tight")
    return 0


if __name__ == "__main__":
    sys.exit(main())
