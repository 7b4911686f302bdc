"""Sphinx extension for ``make pdf``: the whole book as one working ``singlehtml`` page.

Two things a one-page build gets wrong without it:

* Node handlers. Sphinx looks a translator's node handlers up by builder name and falls
  back to the format (``html``) only when no extension registered any handler under that
  name. sphinx-exercise registers ``singlehtml`` handlers, so sphinx-proof's ``html``-only
  ones (definitions, theorems, proofs) would be missing and the build would stop. Each
  ``html`` handler without a ``singlehtml`` counterpart is copied.
* Widget state. myst-nb embeds each page's ipywidgets state in that page, and the one page
  is the root document's: every later chapter's sliders would have no state to draw. The
  state of every other document (and the widget scripts, if the root has none) is added.
"""

from typing import Any

from sphinx.application import Sphinx

WIDGET_STATE = "ipywidgets_state"


def _inherit_html_handlers(app: Sphinx) -> None:
    if app.builder.name != "singlehtml":
        return
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, visit_depart in handlers.get("html", {}).items():
        single.setdefault(node, visit_depart)


def _add_every_widget_state(app: Sphinx, pagename: str, *args: Any) -> None:
    if app.builder.name != "singlehtml" or pagename != app.config.root_doc:
        return
    metadata = getattr(app.env, "nb_metadata", {})
    present = set(metadata.get(pagename, {}).get("js_files", {}))
    for docname in sorted(app.env.found_docs - {pagename}):
        for key, (uri, kwargs) in metadata.get(docname, {}).get("js_files", {}).items():
            if key == WIDGET_STATE or key not in present:
                app.add_js_file(uri, **kwargs)
                present.add(key)


def setup(app: Sphinx) -> dict[str, bool]:
    """Register both fixes; they act only in the ``singlehtml`` builder."""
    app.connect("builder-inited", _inherit_html_handlers)
    app.connect("html-page-context", _add_every_widget_state)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
