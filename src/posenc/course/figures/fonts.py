"""The fonts the course's figures need: matplotlib's own, and a CJK font for Chinese text.

Kept apart from :mod:`~posenc.course.figures.style` and :mod:`posenc.course.i18n` (both use
it) so that neither imports the other.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

__all__ = ["CJK_FONTS", "cjk_font", "ensure_matplotlib_fonts"]

#: Fonts for Chinese figure text, the first one installed wins: Debian's WenQuanYi Micro Hei
#: (``fonts-wqy-microhei``, what the site uses), Noto/Source Han Sans, then macOS's and
#: Windows' own.
CJK_FONTS = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC",
             "Microsoft YaHei", "SimHei")

#: How the files of :data:`CJK_FONTS` are named, for a font installed after matplotlib
#: listed the system's fonts (its font cache would not know it).
_CJK_FILES = re.compile(r"wqy-microhei|NotoSansCJK|SourceHanSans|PingFang|msyh|simhei", re.I)


@lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The first of :data:`CJK_FONTS` that matplotlib finds, or ``None`` (with a warning:
    Chinese figure text would show as empty boxes)."""
    import warnings

    from matplotlib import font_manager

    ensure_matplotlib_fonts()  # the math fonts a text beside the Chinese uses

    def first() -> str | None:
        installed = {f.name for f in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in installed), None)

    if first() is None:  # installed since matplotlib cached its list: add the files
        for path in font_manager.findSystemFonts():
            if _CJK_FILES.search(Path(path).name):
                font_manager.fontManager.addfont(path)
    name = first()
    if name is None:
        warnings.warn("no Chinese font found for the figures (tried " + ", ".join(CJK_FONTS)
                      + "); on Debian/Ubuntu: sudo apt install fonts-wqy-microhei",
                      stacklevel=2)
    return name


def ensure_matplotlib_fonts() -> int:
    """Make sure matplotlib knows its own fonts (DejaVu, the math fonts cm* and STIX); returns
    how many it had to add.

    matplotlib keeps its font list in a cache named by its version only. A system matplotlib
    of the same version (Debian's, which leaves out the bundled fonts) writes a list without
    them, and a pip-installed matplotlib then reads it: every math label warns
    "findfont: Font family ['cmex10'] not found" into the notebook's output."""
    from pathlib import Path

    from matplotlib import font_manager, get_data_path

    known = {Path(f.fname).name for f in font_manager.fontManager.ttflist}
    added = 0
    for path in sorted((Path(get_data_path()) / "fonts" / "ttf").glob("*.ttf")):
        if path.name not in known:
            font_manager.fontManager.addfont(str(path))
            added += 1
    return added
