"""Pure matplotlib figure builders: parameters in, :class:`matplotlib.figure.Figure` out.

One submodule per chapter. A builder draws with the object-oriented API only (no
``pyplot`` state), so :mod:`dpkit.widgets` can render it to an image for any slider value.
"""

from dpkit.plots._style import (
    alt_text,
    describe,
    figure_png,
    image_html,
    register_ipython_display,
    smallest_text_px,
)

__all__ = ["alt_text", "describe", "figure_png", "image_html", "register_ipython_display",
           "smallest_text_px"]

register_ipython_display()
