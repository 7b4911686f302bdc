"""Fixes to the HTML the theme and extensions write, applied while each page is rendered.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``), so the fixes live in
the repository and not in an installed package:

- Some extensions register an inline script after the HTML builder has started
  (sphinx-thebe's ``const THEBE_JS_URL = …``, sphinx-togglebutton's selector), and Sphinx then
  lists it twice in every page; a second ``const`` of the same name is a SyntaxError in the
  reader's console. Each page keeps the first copy of every script.
- docutils gives a bibliography ``role="list"`` with children ``role="doc-biblioentry"``,
  which ARIA does not allow in a list (axe-core: aria-required-children, critical); the
  entries become ``role="listitem"``.
- myst-nb names the toggle of a hidden code cell "Toggle hidden content" while it shows "Show
  code cell source" (axe-core: label-content-name-mismatch, serious; WCAG 2.5.3): the toggle
  is named by the text it shows.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx


def _script_key(script: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What makes two script tags the same: the file (or none) and the attributes, body included."""
    filename = str(getattr(script, "filename", script) or "")
    attributes = getattr(script, "attributes", {}) or {}
    return filename, tuple(sorted((str(k), str(v)) for k, v in attributes.items()))


def unique_scripts(scripts: list[Any]) -> list[Any]:
    """Drop repeated script tags from a page's list.

    Parameters
    ----------
    scripts : list
        The page's ``script_files`` (Sphinx ``_JavaScript`` objects, or plain file names).

    Returns
    -------
    list
        ``scripts`` without repeats, each kept at its first position. Two entries are the
        same when their file (an inline script has none: ``None`` or ``""``) and attributes
        (the inline body among them) are, whatever their priority.
    """
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    kept = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


# (what the HTML says, what it should say) in a page's body.
_BODY_FIXES = (
    ('role="doc-biblioentry"', 'role="listitem"'),
    ('<summary aria-label="Toggle hidden content">', "<summary>"),
)


def _fix_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if "script_files" in context:
        context["script_files"] = unique_scripts(list(context["script_files"]))
    body = context.get("body")
    if isinstance(body, str):
        for old, new in _BODY_FIXES:
            body = body.replace(old, new)
        context["body"] = body


def setup(app: Sphinx) -> dict[str, Any]:
    # After the extensions that add per-page scripts (myst-nb, the book theme: priority 500-501).
    app.connect("html-page-context", _fix_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
