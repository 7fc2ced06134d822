"""Chapter 1's word-change figure tells the truth about the methods that cannot see a
reversal: it names them and says why, and it shows what the causal mask changes."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from posenc.course.figures import why_order  # noqa: E402
from posenc.course.figures.catalogue import SLIDERS  # noqa: E402
from posenc.course.figures.style import COURSE_RC, METHOD_COLORS  # noqa: E402
from posenc.course.i18n import leftover_english, translated_figure  # noqa: E402

METHODS = ["none", "sinusoidal", "rope", "alibi", "fire"]
BLIND = ["none", "alibi", "fire"]
ENCODER, DECODER = why_order.ATTENTION
CHANGES = {m: {w: 0.0 if m in BLIND else 0.1 * (k + 1) for k, w in enumerate(("I", "love", "you"))}
           for m in METHODS}
CAUSAL = {m: {w: 0.8 + 0.1 * k for k, w in enumerate(("I", "love", "you"))} for m in METHODS}


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def _drawn(method, layer):
    fig = plt.figure(figsize=(6.88, 3.6))
    left, right = why_order.draw_word_change(fig, CHANGES, CAUSAL, BLIND, method, layer)
    return fig, left, right


def test_a_blind_method_is_named_with_its_reason():
    with plt.rc_context(COURSE_RC):
        fig, left, right = _drawn("alibi", ENCODER)
        assert _texts(left)[-1] == "symmetric bias:\nit cannot see a reversal"
        assert [t for t in _texts(right) if not t.startswith("0.")] == [
            "no position", "symmetric", "symmetric"]  # none, alibi, fire, top to bottom
        plt.close(fig)
        fig, left, _ = _drawn("none", ENCODER)
        assert _texts(left)[-1] == "no position:\nit cannot see any shuffle"
        plt.close(fig)
        fig, left, _ = _drawn("rope", ENCODER)
        assert not [t for t in _texts(left) if ":" in t]  # rope sees the reversal: no note
        plt.close(fig)


def test_under_the_causal_mask_the_note_says_the_mask_sees_it():
    with plt.rc_context(COURSE_RC):
        fig, left, right = _drawn("alibi", DECODER)
        assert _texts(left)[-1] == "causal mask:\nthe mask alone sees the reversal"
        assert _texts(right) == []  # nothing is blind any more
        assert [round(b.get_height(), 6) for b in left.containers[0]] == [0.8, 0.9, 1.0]
        plt.close(fig)


def test_every_method_is_on_the_right_and_the_picked_one_in_its_colour():
    with plt.rc_context(COURSE_RC):
        fig, _, right = _drawn("rope", ENCODER)
        assert [t.get_text() for t in right.get_yticklabels()] == METHODS  # top to bottom
        bars = right.containers[0]
        colours = [to_hex(b.get_facecolor()) for b in bars]
        assert colours.count(to_hex(METHOD_COLORS["rope"])) == 1
        assert len(bars) == len(METHODS)
        band = [p for p in right.patches if p not in bars]  # the picked row's shading
        assert len(band) == 1 and band[0].get_y() == pytest.approx(METHODS[::-1].index("rope")
                                                                    - 0.5)
        plt.close(fig)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="layer"):
        _drawn("rope", "sideways")
    with pytest.raises(ValueError, match="method"):
        _drawn("nope", ENCODER)
    plt.close("all")


@pytest.mark.parametrize("method, layer", [("alibi", ENCODER), ("none", ENCODER),
                                           ("fire", DECODER)])
def test_every_text_reads_in_chinese(method, layer):
    from matplotlib.text import Text

    with plt.rc_context(COURSE_RC):
        fig, *_ = _drawn(method, layer)
        with translated_figure(fig, "zh"):
            fig.canvas.draw()
            left = {t.get_text(): leftover_english(t.get_text()) for t in fig.findobj(Text)
                    if t.get_text().strip() and t.get_visible()}
            # method names on the ticks are identifiers or labels (sinusoidal -> 正弦)
            assert {k: v for k, v in left.items() if v} == {}
        plt.close(fig)


def test_the_chapters_figure_has_a_menu_of_methods_and_buttons_for_the_mask():
    from posenc.course.figures.sliders import control_kind

    figure = SLIDERS["word_change"]
    values = figure.values(changes=CHANGES, causal=CAUSAL, blind=BLIND)
    assert values["method"] == METHODS and values["layer"] == list(why_order.ATTENTION)
    assert control_kind(values["layer"]) == "buttons"
    assert control_kind(list(METHOD_COLORS)) == "menu"
