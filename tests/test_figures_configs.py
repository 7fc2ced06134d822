"""Chapter 15's slider figures keep what they draw inside their frames."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from posenc.configs import bundled_names  # noqa: E402
from posenc.course.figures import configs  # noqa: E402
from posenc.course.figures.style import COURSE_RC, tight_bbox  # noqa: E402


def test_the_target_length_legend_has_one_height_for_every_model():
    """A slider figure's frames share one crop, measured on its first and last frames: a
    model whose legend had a row more lost it at the bottom (the review saw Llama 3.1's cut).
    The legend always has its three rows."""
    bottoms = set()
    with plt.rc_context(COURSE_RC):
        for model in bundled_names(files_only=True):
            fig = plt.figure(figsize=(6.88, 4.0), dpi=50)
            ax = configs.draw_target_length(fig, model, 131072)
            legend = ax.get_legend()
            assert len(legend.get_texts()) == 9
            bottoms.add(round(tight_bbox(fig).y0, 3))
            plt.close(fig)
    assert len(bottoms) == 1, bottoms
