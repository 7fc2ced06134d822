"""Every citation in the book has its entry on the references page (site/posenc_site/references.py,
which makes the -W build fail on one that does not; issue 34)."""

import json
from pathlib import Path

import pytest
from posenc_site.references import REFERENCES, citations, missing_citations

ROOT = Path(__file__).resolve().parents[1]

PAGES = sorted((ROOT / "book").glob("*.ipynb")) + sorted(
    p for p in (ROOT / "book").glob("*.md") if p.name != "references.md")


def prose(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


@pytest.mark.parametrize("path", PAGES, ids=[p.stem for p in PAGES])
def test_every_citation_has_an_entry(path):
    assert missing_citations(prose(path), REFERENCES.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(("text", "cited"), [
    ("as Ruoss et al. (2023) found", [("Ruoss", "2023")]),
    ("(Hsieh et al., 2024)", [("Hsieh", "2024")]),
    ("Li et al. (ICLR 2024) show", [("Li", "2024")]),
    ("**Shaw, Uszkoreit & Vaswani\n(2018)**", [("Shaw", "2018")]),
    ("(Press, Smith & Lewis, 2022)", [("Press", "2022")]),
    ("Gemma Team (2025) and Meta (2025)", [("Gemma Team", "2025"), ("Meta", "2025")]),
    ("MPT (2023) and GPT-OSS (2025) are models; in April 2025", []),
])
def test_citation_forms(text, cited):
    assert citations(text) == cited


def test_a_missing_entry_is_found_by_first_author_and_year():
    references = "- Zhou, C. (2024). *A.*\n- An, C., Zhou, C. (2024). *B.*\n- Olsson, C. (2021)."
    text = "Zhou et al. (2024), Olsson et al. (2022) and An et al. (2024); Nobody (2031)"
    assert missing_citations(text, references) == ["Nobody (2031)", "Olsson (2022)"]
    # the first author decides: a co-author with that name and year is not an entry
    assert missing_citations("Zhou et al. (2024)", "- An, C., Zhou, C. (2024). *B.*") == [
        "Zhou (2024)"]
