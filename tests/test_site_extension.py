"""site/posenc_site/pages.py: frames move out of a page into content-hashed files, idempotently."""

import base64
import hashlib
import html
import json

import pytest
from posenc_site.pages import extract_frames, figure_frames, shrink_png


def _page(frames: list[bytes], selected: int) -> str:
    box = {"children": ["IPY_MODEL_s", "IPY_MODEL_st"]}
    state = {"box": {"model_name": "VBoxModel", "state": box},
             "s": {"model_name": "SelectionSliderModel", "state": {"index": selected}},
             "st": {"model_name": "StackModel",
                    "state": {"children": [f"IPY_MODEL_f{i}" for i in range(len(frames))],
                              "selected_index": selected}}}
    for i, data in enumerate(frames):
        src = base64.b64encode(data).decode()
        state[f"f{i}"] = {"model_name": "HTMLModel", "state": {
            "value": f'<img class="posenc-frame" src="data:image/webp;base64,{src}" alt="f{i}">'}}
    doc = json.dumps({"state": state, "version_major": 2, "version_minor": 0})
    return ('<html><script type="application/vnd.jupyter.widget-state+json">' + doc
            + '</script><script type="application/vnd.jupyter.widget-view+json">'
            + '{"model_id": "box"}</script></html>')


def test_all_but_the_shown_frame_move_to_hashed_files(tmp_path):
    frames = [bytes([i]) * 30_000 for i in range(3)]
    out, used = extract_frames(_page(frames, selected=1), tmp_path / "posenc-frames")
    names = {f"{hashlib.sha256(frames[i]).hexdigest()[:20]}.webp" for i in (0, 2)}
    assert used == names
    assert {p.name for p in (tmp_path / "posenc-frames").iterdir()} == names
    for i in (0, 2):
        name = f"{hashlib.sha256(frames[i]).hexdigest()[:20]}.webp"
        assert (tmp_path / "posenc-frames" / name).read_bytes() == frames[i]
    state = json.loads(out.split('widget-state+json">')[1].split("</script>")[0])["state"]
    assert "data:image/webp;base64," in state["f1"]["state"]["value"]  # shown first: inline
    assert 'data-src="posenc-frames/' in state["f0"]["state"]["value"]
    assert "base64" not in state["f2"]["state"]["value"]
    # idempotent: a second pass changes nothing and still reports the files in use
    again, used_again = extract_frames(out, tmp_path / "posenc-frames")
    assert again == out and used_again == names


def test_small_figures_stay_inline(tmp_path):
    page = _page([b"a" * 100, b"b" * 100], selected=0)
    out, used = extract_frames(page, tmp_path / "f", inline_bytes=40_000)
    assert used == set() and not (tmp_path / "f").exists()
    assert html.unescape(out).count("data:image/webp;base64,") == 2


def test_shown_frame_follows_the_selected_index():
    page = _page([b"x", b"y", b"z"], selected=2)
    doc = json.loads(page.split('widget-state+json">')[1].split("</script>")[0])
    assert figure_frames(doc["state"], "box") == [("f0", False), ("f1", False), ("f2", True)]


def test_static_figures_become_palette_pngs(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    import numpy as np

    x = np.linspace(0, 1, 400)
    rgb = np.full((300, 400, 3), 255, np.uint8)
    rgb[150 + (100 * np.sin(12 * x)).astype(int), np.arange(400)] = (0, 114, 178)
    path = tmp_path / "fig.png"
    Image.fromarray(rgb).save(path)
    before = path.stat().st_size
    assert shrink_png(path) and path.stat().st_size < before
    with Image.open(path) as img:
        assert img.mode == "P"
        assert np.array_equal(np.asarray(img.convert("RGB")), rgb)  # 2 colours: exact
    assert not shrink_png(path)  # already a palette image


def test_the_frame_shown_first_is_stored_as_lossless_webp(tmp_path):
    import io

    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 4, size=(120, 160)).astype(np.uint8) * 60
    buf = io.BytesIO()
    Image.fromarray(pixels).convert("RGB").save(buf, format="png")
    frames = [buf.getvalue(), bytes(50_000)]
    page = _page([], 0)  # fill in PNG frames by hand
    doc = json.loads(page.split('widget-state+json">')[1].split("</script>")[0])
    for i, data in enumerate(frames):
        src = base64.b64encode(data).decode()
        doc["state"][f"f{i}"] = {"model_name": "HTMLModel", "state": {
            "value": f'<img class="posenc-frame" src="data:image/png;base64,{src}">'}}
    doc["state"]["st"]["state"]["children"] = ["IPY_MODEL_f0", "IPY_MODEL_f1"]
    page = page.split('widget-state+json">')[0] + 'widget-state+json">' + json.dumps(doc) \
        + "</script>" + page.split("</script>", 1)[1]
    out, _ = extract_frames(page, tmp_path / "f")
    state = json.loads(out.split('widget-state+json">')[1].split("</script>")[0])["state"]
    value = state["f0"]["state"]["value"]
    assert "data:image/webp;base64," in value
    webp = base64.b64decode(value.split("base64,")[1].split('"')[0])
    with Image.open(io.BytesIO(webp)) as img:
        assert np.array_equal(np.asarray(img.convert("L")), pixels)  # lossless


def test_a_chinese_page_shows_the_slider_label_and_values_in_chinese(tmp_path):
    """The slider's values are words for some figures (CoPE's "sentences", KERPLE's
    "power"): the Chinese page shows them in Chinese, and numbers as they are."""
    page = _page([b"a" * 100, b"b" * 100, b"c" * 100], selected=0).replace(
        '"state": {"index": 0}', '"state": {"index": 0, "description": "counting", '
        '"_options_labels": ["tokens", "sentences", "1e+06"]}')
    state = {lang: json.loads(extract_frames(page, tmp_path / lang, lang=lang)[0].split(
        'widget-state+json">')[1].split("</script>")[0])["state"]["s"]["state"]
        for lang in ("en", "zh")}
    assert state["en"]["_options_labels"] == ["tokens", "sentences", "1e+06"]
    assert state["zh"]["_options_labels"] == ["token", "句子", "1e+06"]
    assert state["zh"]["description"] == "计数方式"


def test_the_theme_strings_its_catalogue_lacks_read_in_chinese_on_chinese_pages():
    from posenc_site.pages import interface_language

    page = ('<a class="headerlink" href="#x" title="Link to this heading">#</a>'
            '<input placeholder="Search this book..." aria-label="Search this book...">'
            '<a title="an unknown string">')
    assert interface_language(page, "en") == page
    zh = interface_language(page, "zh")
    assert 'title="链接到此标题"' in zh and zh.count("搜索本书…") == 2
    assert 'title="an unknown string"' in zh  # left for the browser test to report


def test_latin_inside_chinese_emphasis_keeps_italics_instead_of_dots():
    from posenc_site.pages import latin_in_emphasis

    html = "<p>用 <em>Run → Run All Cells</em> 运行；<em>不能</em>说明；<em>x</em></p>"
    assert latin_in_emphasis(html) == (
        '<p>用 <em><span class="posenc-latin">Run → Run All Cells</span></em> 运行；'
        '<em>不能</em>说明；<em><span class="posenc-latin">x</span></em></p>')


def test_a_static_figure_gets_its_alt_text_instead_of_its_path():
    from posenc_site.pages import describe_images

    key = "ab" * 32
    page = (f'<img alt="../_images/{key}.png" src="../_images/{key}.png" />'
            f'<img alt="../_images/{"cd" * 32}.png" src="x" />')
    out = describe_images(page, {key: 'loss "by" position'})
    assert f'alt="loss &quot;by&quot; position" src="../_images/{key}.png"' in out
    assert f'alt="../_images/{"cd" * 32}.png"' in out  # unknown: left (the browser test says so)


def test_figure_alt_says_what_the_figure_says():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from posenc.course.figures.style import figure_alt

    fig, axes = plt.subplots(1, 2)
    axes[0].set(xlabel="position", ylabel="loss")
    assert figure_alt(fig) == "loss against position"
    axes[0].set_title("Loss by position")
    axes[1].set_title("Accuracy by distance")
    assert figure_alt(fig) == "Loss by position; Accuracy by distance"
    fig.suptitle("Train short, test long")
    assert figure_alt(fig) == "Train short, test long"
    plt.close(fig)


def test_each_job_after_the_build_does_its_own_part(tmp_path):
    """_finish_pages's jobs one by one: a page rewritten for its edition (theme script and,
    but on the search page, search scripts gone, the switch to the other edition, lazy static
    figures, frames moved out), and the frame files no page uses any more deleted, the used
    ones kept."""
    from posenc_site.pages import _remove_stale_frames, _rewrite_page

    frames = [bytes([i]) * 30_000 for i in range(3)]
    page = ('<html><head><script defer src="_static/scripts/fontawesome.js?v=1"></script>'
            '<script src="searchindex.js"></script></head>'
            '<body><div class="article-header-buttons"></div>'
            '<img alt="../_images/x.png" src="../_images/x.png">'
            + _page(frames, selected=0) + "</body></html>")
    folder = tmp_path / "posenc-frames"
    kwargs = dict(lang="en", language="en", caption=lambda c: c, alts={})
    out, used = _rewrite_page(page, folder, rel_path="04_rope.html", **kwargs)
    assert "fontawesome.js" not in out and 'href="zh/04_rope.html"' in out
    assert "searchindex.js" not in out  # the search page alone keeps the search scripts
    search, _ = _rewrite_page(page, folder, rel_path="search.html", **kwargs)
    assert '<script src="searchindex.js"></script>' in search
    assert '<img loading="lazy" decoding="async" alt="../_images/x.png"' in out
    assert len(used) == 2 and {p.name for p in folder.iterdir()} == used
    again, used_again = _rewrite_page(out, folder, rel_path="04_rope.html", **kwargs)
    assert (again, used_again) == (out, used)  # idempotent
    name = "ab" * 32  # a figure whose alt text says what it shows still loads lazily
    figure = page.replace("x.png", f"{name}.png")
    described, _ = _rewrite_page(figure, folder, rel_path="04_rope.html",
                                 **{**kwargs, "alts": {name: "Loss by position"}})
    assert '<img loading="lazy" decoding="async" alt="Loss by position"' in described
    redirect, _ = _rewrite_page(page, folder, rel_path=None, **kwargs)
    assert "posenc-lang-switch" not in redirect
    (folder / "0123456789abcdef0123.webp").write_bytes(b"an earlier build's frame")
    _remove_stale_frames({folder: used, tmp_path / "absent": {"x.webp"}})
    assert {p.name for p in folder.iterdir()} == used
