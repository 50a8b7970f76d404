"""One look for every matplotlib figure, and bytes that do not depend on the run.

matplotlib is imported only inside these functions, and the backend is never
switched at import: a figure is drawn with ``pyplot`` from :func:`pyplot`,
which takes matplotlib's own choice (Agg on a machine without a display, or
``MPLBACKEND``).
"""

from __future__ import annotations

FONT = "DejaVu Sans"


def pyplot():
    """``matplotlib.pyplot``, imported on first use."""
    from matplotlib import pyplot as plt

    return plt


def setup_rcparams() -> None:
    """Settings that make the SVG output independent of the run: fixed ids, text as text, one font."""
    import matplotlib

    rc = matplotlib.rcParams
    rc["svg.hashsalt"] = "acplab"
    rc["svg.fonttype"] = "none"
    rc["font.family"] = FONT
    rc["font.sans-serif"] = [FONT]
    rc["text.parse_math"] = False  # labels such as "$/cancel_request" are not TeX
    rc["path.simplify"] = True
    if "svg.id" in rc:
        rc["svg.id"] = "acplab"


def save_deterministic(fig, path_svg, path_png=None) -> None:
    """Write the SVG (and PNG) without dates or software versions, so equal input gives equal bytes."""
    import os

    from .atomic import replacing  # every file written atomically; a stream (an in-memory page) as it is

    for path, options in ((path_svg, dict(format="svg", metadata={"Date": None, "Creator": None})),
                          (path_png, dict(format="png", dpi=110, metadata={"Software": None}))):
        if path is None:
            continue
        if not isinstance(path, (str, os.PathLike)):
            fig.savefig(path, **options)
            continue
        with replacing(path) as tmp:
            fig.savefig(tmp, **options)
