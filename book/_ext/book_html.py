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
- sphinx-proof writes the English word "Proof. " at the start of every proof, whatever the
  book's language (its ``ProofDirective`` prepends it to the source, untranslated): in the zh
  edition a proof starts with 证明：.

It also gives each page the address of the same page in the other edition (English ↔ 中文),
for the language switch in the page header (``_templates/language-switch.html``; book.js adds
the section): the zh edition is served in ``zh/`` beside the English pages (scripts/zh_book.py,
which sets ``html_context["edition"] = "zh"`` and lists the zh-only pages in
``html_context["edition_only"]``).
"""

from __future__ import annotations

import re
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
#: The opening of a proof as sphinx-proof writes it, and the word each edition puts there.
_PROOF_START = re.compile(r'(<div class="proof[^"]*"[^>]*>\s*<p>)Proof\. ')
_PROOF_WORD = {"en": "Proof. ", "zh": "证明："}


def proof_word(body: str, edition: str) -> str:
    """``body`` with every proof opened by the word of ``edition``.

    >>> proof_word('<div class="proof admonition" id="proof">\\n<p>Proof. Let', "zh")
    '<div class="proof admonition" id="proof">\\n<p>证明：Let'
    >>> proof_word('<p>Proof. Let</p>', "zh")   # not a proof's first paragraph
    '<p>Proof. Let</p>'
    """
    return _PROOF_START.sub(lambda m: m.group(1) + _PROOF_WORD[edition], body)


def other_edition(pagename: str, edition: str, only_here: list[str] | tuple[str, ...] = (),
                  root_doc: str = "book/intro") -> str:
    """The address of page ``pagename`` in the other edition, relative to the page.

    Parameters
    ----------
    pagename : str
        The page, as Sphinx names it (``book/laplace``, ``genindex``).
    edition : {"en", "zh"}
        The edition the page belongs to. The zh edition lives in ``zh/`` under the English
        one's root, and has every English page at the same name.
    only_here : sequence of str
        Pages of this edition that the other lacks (the zh glossary): they lead to the other
        edition's ``root_doc``.
    root_doc : str
        The first page of the book.

    Returns
    -------
    str
        A relative URL (``../zh/book/laplace.html`` from ``book/laplace``).

    Raises
    ------
    ValueError
        If ``edition`` is neither ``"en"`` nor ``"zh"``.

    Examples
    --------
    >>> other_edition("book/laplace", "en")
    '../zh/book/laplace.html'
    >>> other_edition("book/laplace", "zh")
    '../../book/laplace.html'
    >>> other_edition("book/glossary", "zh", ["book/glossary"])
    '../../book/intro.html'
    """
    if edition not in ("en", "zh"):
        raise ValueError(f"edition must be 'en' or 'zh', got {edition!r}")
    target = root_doc if pagename in only_here else pagename
    up = "../" * pagename.count("/")
    return f"{up}zh/{target}.html" if edition == "en" else f"{up}../{target}.html"


def _fix_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    edition = context.get("edition", "en")
    context["edition"] = edition
    context["other_edition_url"] = other_edition(
        pagename, edition, context.get("edition_only", ()), context.get("root_doc", "book/intro"))
    if "script_files" in context:
        context["script_files"] = unique_scripts(list(context["script_files"]))
    body = context.get("body")
    if isinstance(body, str):
        for old, new in _BODY_FIXES:
            body = body.replace(old, new)
        context["body"] = proof_word(body, edition)


def setup(app: Sphinx) -> dict[str, Any]:
    # After the extensions that add per-page scripts (myst-nb, the book theme: priority 500-501).
    app.connect("html-page-context", _fix_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
