"""book/_ext/book_html.py, the local Sphinx extension that fixes the pages' HTML."""

import importlib.util
from pathlib import Path

from sphinx.builders.html._assets import _JavaScript

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("book_html", ROOT / "book" / "_ext" / "book_html.py")
book_html = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(book_html)


def test_inline_script_registered_twice_is_kept_once():
    # As Sphinx lists sphinx-thebe's configuration: once as None, once as "" (the registry's
    # copy), which the browser runs twice: "Identifier 'THEBE_JS_URL' has already been declared".
    body = 'const THEBE_JS_URL = "x"'
    scripts = [_JavaScript("_static/doctools.js"), _JavaScript(None, body=body, priority=500),
               _JavaScript("_static/sphinx-thebe.js", **{"async": "async"}),
               _JavaScript("", body=body, priority=500), _JavaScript("_static/doctools.js")]
    kept = book_html.unique_scripts(scripts)
    assert [str(s.filename or "") for s in kept] == \
        ["_static/doctools.js", "", "_static/sphinx-thebe.js"]
    assert kept[1].attributes == {"body": body}


def test_different_inline_scripts_are_all_kept():
    scripts = [_JavaScript(None, body="let a = 1"), _JavaScript(None, body="let b = 2")]
    assert book_html.unique_scripts(scripts) == scripts


def test_page_body_fixes():
    context = {"script_files": [_JavaScript(None, body="x"), _JavaScript("", body="x")],
               "body": '<div role="list" class="citation-list"><div class="citation" '
                       'role="doc-biblioentry">A</div></div><details><summary aria-label='
                       '"Toggle hidden content"><p>Show code cell source</p></summary></details>'}
    book_html._fix_page(None, "book/bibliography", "page.html", context, None)
    assert len(context["script_files"]) == 1
    assert 'role="listitem"' in context["body"] and "doc-biblioentry" not in context["body"]
    assert "<summary><p>Show code cell source" in context["body"]
