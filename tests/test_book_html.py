"""book/_ext/book_html.py, the local Sphinx extension that fixes the pages' HTML and gives
each page the address of the other edition; and the built zh edition (_build/html/zh)."""

import doctest
import importlib.util
import re
from pathlib import Path

import pytest
import yaml
from sphinx.builders.html._assets import _JavaScript
from test_browser import _require

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("book_html", ROOT / "book" / "_ext" / "book_html.py")
book_html = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(book_html)
_spec = importlib.util.spec_from_file_location("zh_book", ROOT / "scripts" / "zh_book.py")
zh_book = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zh_book)


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


def test_a_proof_opens_with_the_word_of_its_edition():
    """sphinx-proof writes "Proof. " into every proof whatever the language; the zh pages
    open a proof with 证明： (before: "Proof." on all 29 proofs of the zh edition)."""
    proof = '<div class="proof admonition" id="proof">\n<p>Proof. 设 D'
    pages = {edition: {"body": proof, "edition": edition} for edition in ("en", "zh")}
    for context in pages.values():
        book_html._fix_page(None, "book/laplace", "page.html", context, None)
    assert pages["en"]["body"] == proof
    assert pages["zh"]["body"] == proof.replace("Proof. ", "证明：")


def test_other_edition_examples_run():
    assert doctest.testmod(book_html, raise_on_error=False).failed == 0


def test_other_edition_refuses_an_unknown_edition():
    with pytest.raises(ValueError, match="edition must be 'en' or 'zh', got 'fr'"):
        book_html.other_edition("book/laplace", "fr")


def test_each_page_is_given_the_address_of_the_other_edition():
    english = {"body": ""}
    book_html._fix_page(None, "book/laplace", "page.html", english, None)
    assert (english["edition"], english["other_edition_url"]) == ("en", "../zh/book/laplace.html")
    chinese = {"body": "", "edition": "zh", "edition_only": ["book/glossary"],
               "root_doc": "book/intro"}
    book_html._fix_page(None, "genindex", "page.html", chinese, None)
    assert chinese["other_edition_url"] == "../genindex.html"
    book_html._fix_page(None, "book/glossary", "page.html", chinese, None)
    assert chinese["other_edition_url"] == "../../book/intro.html"


# The built book (make test's strict builds of both editions), tested after the builds with the
# browser tests (marked browser: they need _build/html).
HTML = ROOT / "_build" / "html"
ZH_HTML = HTML / "zh"
_NUMBER_SPAN = re.compile(r'class="(?:caption|section)-number">[^<\d]*(\d+(?:\.\d+)*)')


#: The numbered chapters (_toc.yml's numbered part).
NUMBERED = {Path(chapter["file"]).name for part in yaml.safe_load((ROOT / "_toc.yml").read_text())
            ["parts"] if part.get("numbered") for chapter in part["chapters"]}


def _built_pages() -> list[Path]:
    _require((HTML / "book").is_dir() and (ZH_HTML / "book").is_dir(),
             f"both editions must be built into {HTML} and {ZH_HTML} (run make book)")
    return sorted((HTML / "book").glob("*.html"))


@pytest.mark.browser
def test_every_english_page_has_a_zh_page_with_the_same_numbers():
    """Chapter, section, theorem, exercise and figure numbers: the same, in the same order."""
    for english in _built_pages():
        chinese = ZH_HTML / "book" / english.name
        assert chinese.is_file(), f"no zh page for {english.name}"
        numbers = _NUMBER_SPAN.findall(english.read_text())
        assert numbers == _NUMBER_SPAN.findall(chinese.read_text()), english.name
        if english.stem in NUMBERED:
            assert numbers, f"{english.name}: no numbers found (has the HTML changed?)"


@pytest.mark.browser
def test_zh_pages_are_chinese_and_mark_untranslated_pages():
    for english in _built_pages():
        chinese = (ZH_HTML / "book" / english.name).read_text()
        assert '<html lang="zh-CN"' in chinese, english.name
        # The theme's interface in Chinese (its search button's label).
        assert "搜索" in chinese, f"{english.name}: the theme's strings are not in Chinese"
        translated = (ROOT / "book" / "zh" / f"{english.stem}.md").is_file()
        assert (zh_book.NOTICE in chinese) != translated, \
            f"{english.name}: the untranslated notice is {'present' if translated else 'missing'}"
        assert zh_book.NOTICE not in english.read_text()
    assert (ZH_HTML / "book" / "glossary.html").is_file()


@pytest.mark.browser
def test_language_switch_links_reach_a_page_of_the_other_edition():
    for english in _built_pages():
        for page in (english, ZH_HTML / "book" / english.name):
            links = re.findall(r'<a class="btn btn-sm language-switch" href="([^"]+)"',
                               page.read_text())
            assert len(links) == 1, f"{page}: {len(links)} language switches"
            target = (page.parent / links[0]).resolve()
            assert target.is_file(), f"{page}: the switch leads to {target}, not built"
            assert (target.parent.parent == ZH_HTML) != (page.parent.parent == ZH_HTML)
    bibliography = (HTML / "book" / "bibliography.html").read_text()
    assert 'href="../zh/book/glossary.html"' in bibliography
