"""Sphinx extension for ``make pdf``: render every custom node in the ``singlehtml`` builder.

Sphinx looks a translator's node handlers up by builder name and falls back to the format
(``html``) only when no extension registered any handler under that name. sphinx-exercise
registers ``singlehtml`` handlers, so sphinx-proof's ``html``-only ones (definitions,
theorems, proofs) would be missing and the one-page build would stop. This copies each
``html`` handler that has no ``singlehtml`` counterpart.
"""

from sphinx.application import Sphinx


def _inherit_html_handlers(app: Sphinx) -> None:
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, visit_depart in handlers.get("html", {}).items():
        single.setdefault(node, visit_depart)


def setup(app: Sphinx) -> dict[str, bool]:
    """Register the handler copy to run once the builder is known."""
    app.connect("builder-inited", _inherit_html_handlers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
