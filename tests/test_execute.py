"""posenc_site.execute, the build's one execution of every chapter: each runs with its
exercises' solutions after its last cell and is cached without them, so the golden check
(posenc_site.notebooks golden check) reads that execution and no chapter runs twice."""

import json

import nbformat
from jupyter_cache import get_cache
from posenc_site import execute, notebooks


def _chapter(solution: str):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = notebooks.KERNELSPEC
    nb.cells = [nbformat.v4.new_code_cell("x = 20", id="a"),
                nbformat.v4.new_markdown_cell(
                    f"````{{solution}} ex-t\n:class: dropdown\n```python\n{solution}\n```\n````",
                    id="b"),
                nbformat.v4.new_code_cell("print(x + 1)", id="c",
                                          metadata={"tags": [notebooks.TAG]})]
    return nb


def _execute(tmp_path, solution: str):
    path = tmp_path / "chapter.ipynb"
    nbformat.write(_chapter(solution), path)
    cache = get_cache(str(tmp_path / "cache"))
    record = cache.add_nb_to_project(str(path))
    code, _, _ = execute._run(str(tmp_path / "cache"), record.pk, str(path))
    return code, cache, path


def test_a_chapter_runs_with_its_solution_and_is_cached_without_it(tmp_path):
    code, cache, path = _execute(tmp_path, "x = 1000  # rebinds x, after the chapter's cells\n"
                                           "print('solved')")
    assert code == 0
    _, cached = cache.merge_match_into_notebook(nbformat.read(path, as_version=4))
    assert [c.id for c in cached.cells] == ["a", "b", "c"]  # the solution is not on the page
    assert cached.cells[2].outputs[0]["text"] == "21\n"  # ran before the solution


def test_a_failing_solution_fails_its_chapter(tmp_path):
    code, cache, path = _execute(tmp_path, "raise RuntimeError('wrong answer')")
    assert code == 1
    traceback = cache.get_project_record(str(path)).traceback
    assert "the solution of exercise ex-t" in traceback and "wrong answer" in traceback


def test_golden_differences_name_the_cell_and_ignore_addresses():
    golden = {"c": [{"output_type": "stream", "name": "stdout", "text": "21 at 0x7f3a\n"}]}
    same = {"c": [{"output_type": "stream", "name": "stdout", "text": "21 at 0x55ee\n"}]}
    assert notebooks.golden_differences(same, golden) == {}
    changed = {"c": [{"output_type": "stream", "name": "stdout", "text": "22 at 0x55ee\n"}]}
    diff = notebooks.golden_differences(changed, golden)["c"]
    assert "-21 at 0xADDRESS" in diff and "+22 at 0xADDRESS" in diff
    as_result = {"c": [{"output_type": "execute_result", "execution_count": None,
                        "metadata": {}, "data": {"text/plain": "21 at 0x1"}}]}
    assert "c" in notebooks.golden_differences(as_result, golden)  # a result is not a print
    assert set(notebooks.golden_differences({}, golden)) == {"c"}  # a missing cell differs


def test_the_golden_check_reads_the_cache_and_fails_on_a_changed_number(tmp_path, monkeypatch,
                                                                         capsys):
    code, _, path = _execute(tmp_path, "print('solved')")
    assert code == 0
    monkeypatch.setattr(notebooks, "BOOK", tmp_path)
    monkeypatch.setattr(notebooks, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(notebooks, "GOLDEN", tmp_path / "golden")
    (tmp_path / "golden").mkdir()
    golden = tmp_path / "golden" / "chapter.json"
    golden.write_text(json.dumps({"c": [{"output_type": "stream", "name": "stdout",
                                         "text": "21\n"}]}))
    assert notebooks.golden_check() == 0
    golden.write_text(json.dumps({"c": [{"output_type": "stream", "name": "stdout",
                                         "text": "22\n"}]}))
    assert notebooks.golden_check() == 1
    assert "chapter.ipynb, cell c: the output is not the golden one" in capsys.readouterr().out
