"""Per real-model config in tests/data/hf_configs/: does posenc agree with Hugging Face?

    .venv/bin/python tests/hf_configs_report.py [name ...]

One line per file: ``match``, ``MISMATCH <what>``, ``posenc refuses: <msg>``, or
``HF refuses`` (with what posenc does then). The comparison is test_configs_real.py's.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import transformers  # noqa: E402
from hf_reference import hf_config, hf_layers  # noqa: E402
from test_configs_real import NAMES, compare, load  # noqa: E402

from posenc.configs import read_config  # noqa: E402


def row(name: str) -> str:
    config = load(name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hf_config(transformers, config)
    except Exception as exc:  # noqa: BLE001
        try:
            read_config(config, strict=True)
            ours = "posenc accepts it"
        except TypeError as e:
            if "strict" in str(e) and "keyword" in str(e):
                try:
                    read_config(config)
                    ours = "posenc accepts it (no strict= yet)"
                except (ValueError, TypeError) as e2:
                    ours = f"posenc refuses too: {e2}"
            else:
                ours = f"posenc refuses too: {e}"
        except ValueError as e:
            ours = f"posenc refuses too: {e}"
        first = str(exc).splitlines()[0][:100]
        return f"HF refuses ({type(exc).__name__}: {first}); {ours}"
    reference = hf_layers(transformers, config)
    try:
        ours = read_config(config)
    except (ValueError, TypeError) as exc:
        return f"posenc refuses: {exc}"
    problems = compare(ours, reference)
    return "match" if not problems else "MISMATCH " + "; ".join(problems)


def main(names: list[str]) -> None:
    width = max(map(len, names))
    for name in names:
        expect = load(name)["_expect"]
        print(f"{name:<{width}}  [{expect:>7}]  {row(name)}")


if __name__ == "__main__":
    main(sys.argv[1:] or NAMES)
