"""``make pdf``'s printing step (scripts/pdf.py) on a tiny page, in Debian's chromium.

Building the whole book as one page takes minutes, so the test prints a small page with the
same ingredients instead: MathJax from the book's vendored copy, a figure, and math in the
classes Sphinx gives it. The PDF (read with poppler's pdfinfo and pdftotext) must have one
page, the image, and the math as symbols rather than raw TeX; a page whose math can never be
typeset must time out rather than print raw TeX.

The book's shape on paper is checked on a tiny book built as one page the way ``make pdf``
builds the real one (``build_singlehtml``): a title page, contents whose page numbers are the
pages the chapters and sections start on, bookmarks for them, "page i of n" on every page,
exercise numbers restarting in each chapter, and every figure placed at its own aspect ratio.
Chapters of the built book (``_build/html``, written by ``make test``'s strict build) check
the widgets (each is printed as its frame with a note naming the setting, on one page) and
the bookmarks (each heading's text as printed, math included, once).
"""

import html
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from test_browser import CHROMIUM, _require

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
MATHJAX = ROOT / "book" / "_static" / "vendor" / "mathjax" / "tex-chtml.js"

_spec = importlib.util.spec_from_file_location("pdf", ROOT / "scripts" / "pdf.py")
pdf_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pdf_script)

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>tiny</title>{script}</head>
<body><h1>A tiny page</h1>
<p>Inline math <span class="math notranslate nohighlight">\\(e^{{\\varepsilon}}\\)</span>.</p>
<div class="math notranslate nohighlight">\\[\\Pr[M(D) \\in S] \\le e^{{\\varepsilon}}
\\Pr[M(D') \\in S] + \\delta\\]</div>
<img src="figure.png" alt="a line">
</body></html>
"""


def _page(folder: Path, with_mathjax: bool) -> Path:
    figure = Figure(figsize=(2, 2))
    figure.subplots().plot([0, 1], [0, 1])
    figure.savefig(folder / "figure.png")
    script = f'<script defer src="{MATHJAX.as_uri()}"></script>' if with_mathjax else ""
    html = folder / "tiny.html"
    html.write_text(PAGE.format(script=script))
    return html


def _poppler(tool: str, pdf: Path, *args: str) -> str:
    return subprocess.run([tool, *args, str(pdf), *(["-"] if tool == "pdftotext" else [])],
                          check=True, capture_output=True, text=True).stdout


def test_prints_math_and_figure(tmp_path):
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require(MATHJAX.is_file(), f"MathJax not vendored at {MATHJAX} (run make vendor)")
    _require(shutil.which("pdftotext") is not None, "no pdftotext (apt-get install poppler-utils)")
    out = pdf_script.html_to_pdf(_page(tmp_path, with_mathjax=True), tmp_path / "out" / "t.pdf")
    data = out.read_bytes()
    assert data.startswith(b"%PDF-") and b"/Subtype /Image" in data, "the figure is missing"
    assert re.search(r"^Pages:\s+1$", _poppler("pdfinfo", out), re.MULTILINE)
    text = _poppler("pdftotext", out)
    assert "A tiny page" in text and "∈" in text and "δ" in text, text
    assert "\\Pr" not in text and "\\(" not in text, f"raw TeX printed: {text}"


def test_untypeset_math_times_out(tmp_path):
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    with pytest.raises(TimeoutError, match="not ready after 2 s"):
        pdf_script.html_to_pdf(_page(tmp_path, with_mathjax=False), tmp_path / "t.pdf",
                               timeout_ms=2_000)
    assert not (tmp_path / "t.pdf").exists()


def test_missing_page_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="html must be an existing file"):
        pdf_script.html_to_pdf(tmp_path / "nothing.html", tmp_path / "t.pdf")


TINY_CONFIG = """title: A Tiny Book
author: Tiny Authors
only_build_toc_files: true
execute:
  execute_notebooks: "off"
sphinx:
  extra_extensions: [sphinx_exercise]
html:
  extra_footer: "<p>Text: CC BY 4.0 licence.</p>"
repository:
  url: https://github.com/example/tiny
"""
TINY_TOC = """format: jb-book
root: intro
parts:
  - caption: Chapters
    numbered: true
    chapters:
      - file: one
      - file: two
"""
FILLER = "A paragraph of filler text that moves the next figure down the page. " * 6


def _chapter(title: str, section: str, image: str, fillers: int) -> str:
    exercises = "".join(f"```{{exercise}} Task {k}\nDo task {k}.\n```\n\n" for k in (1, 2))
    filler = "".join(f"{FILLER}\n\n" for _ in range(fillers))
    return (f"# {title}\n\nOpening.\n\n## {section}\n\n{filler}"
            f"```{{figure}} {image}\n{title}: the caption of the figure.\n```\n\n"
            f"## Exercises\n\n{exercises}")


def _tiny_book(root: Path) -> None:
    (root / "_config.yml").write_text(TINY_CONFIG)
    (root / "_toc.yml").write_text(TINY_TOC)
    (root / "intro.md").write_text("# A Tiny Book\n\n## Start here\n\nWelcome.\n")
    for name, size in (("wide.png", (8, 3)), ("tall.png", (3, 6))):
        figure = Figure(figsize=size)
        figure.subplots().plot([0, 1], [1, 0])
        figure.savefig(root / name, dpi=100)
    (root / "one.md").write_text(_chapter("Chapter one", "First section", "wide.png", 9))
    (root / "two.md").write_text(_chapter("Chapter two", "Second section", "tall.png", 11))


def _outline(pdf: Path) -> list[tuple[str, int]]:
    """The bookmarks of ``pdf`` as (title, page), read with poppler's pdftohtml."""
    xml = _poppler("pdftohtml", pdf, "-xml", "-stdout", "-i", "-f", "1", "-l", "1")
    return [(title, int(page))
            for page, title in re.findall(r'<item page="(\d+)">([^<]*)</item>', xml)]


def _images(pdf: Path) -> list[dict[str, float]]:
    """Every image of ``pdf`` (``pdfimages -list``): page, pixel size, resolution across/down."""
    rows = _poppler("pdfimages", pdf, "-list").splitlines()[2:]
    return [{"page": int(c[0]), "width": int(c[3]), "height": int(c[4]),
             "x_ppi": float(c[12]), "y_ppi": float(c[13])}
            for c in (row.split() for row in rows) if c[2] == "image"]


def _check_aspect_and_page_numbers(pdf: Path) -> list[str]:
    """Every image placed at its pixels' aspect ratio, and "page i of n" on every page;
    returns the pages' text."""
    for image in _images(pdf):
        # pdfimages rounds each resolution to a whole ppi: 1 ppi in 141 is 0.7 %.
        assert abs(image["x_ppi"] / image["y_ppi"] - 1) < 0.02, f"squashed image: {image}"
    count = int(re.search(r"^Pages:\s+(\d+)$", _poppler("pdfinfo", pdf), re.MULTILINE)[1])
    pages = [_poppler("pdftotext", pdf, "-f", str(i), "-l", str(i)) for i in range(1, count + 1)]
    for i, text in enumerate(pages, start=1):
        assert f"page {i} of {count}" in text, f"page {i} has no page number: {text[-200:]}"
    return pages


def test_book_has_front_matter_bookmarks_and_page_numbers(tmp_path):
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require(shutil.which("pdftohtml") is not None, "no poppler (apt-get install poppler-utils)")
    _tiny_book(tmp_path)
    out = pdf_script.html_to_pdf(pdf_script.build_singlehtml(tmp_path), tmp_path / "tiny.pdf",
                                 **pdf_script.front_matter(tmp_path))
    assert re.search(r"^Tagged:\s+yes$", _poppler("pdfinfo", out), re.MULTILINE)
    pages = _check_aspect_and_page_numbers(out)
    assert "A Tiny Book" in pages[0] and "Tiny Authors" in pages[0] and "licence" in pages[0]
    assert "github.com/example/tiny/issues" in pages[0]

    outline = dict(_outline(out))
    starts = {title: outline.get(title) for title in
              ("Introduction", "1. Chapter one", "1.1. First section", "1.2. Exercises",
               "2. Chapter two", "2.1. Second section")}
    assert None not in starts.values(), f"bookmarks missing: {starts} in {outline}"
    for title, page in starts.items():
        assert title.split(". ")[-1] in pages[page - 1], f"{title} is not on page {page}"
    contents = _poppler("pdftotext", out, "-layout", "-f", "2", "-l", "2")
    for title, page in starts.items():
        listed = re.search(rf"^\s*{re.escape(title)}\s+(\d+)\s*$", contents, re.MULTILINE)
        assert listed and int(listed[1]) == page, f"contents: {title} on page {page}\n{contents}"
    assert starts["1. Chapter one"] < starts["2. Chapter two"]

    numbers = re.findall(r"Exercise (\d+(?:\.\d+)?)", "".join(pages))
    assert list(dict.fromkeys(numbers)) == ["1.1", "1.2", "2.1", "2.2"], numbers
    sizes = {(image["width"], image["height"]) for image in _images(out)}
    assert {(800, 300), (300, 600)} <= sizes, f"a figure is missing: {sizes}"


def test_zh_edition_prints_its_added_words_in_chinese(tmp_path, monkeypatch):
    """book-zh.pdf is printed with DPKIT_LANG=zh (scripts/zh_book.py --pdf): the words the
    printing adds (title page notes, contents, the introduction's heading, page numbers) are
    Chinese, from dpkit.i18n's catalogue."""
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require(shutil.which("pdftohtml") is not None, "no poppler (apt-get install poppler-utils)")
    monkeypatch.setenv("DPKIT_LANG", "zh")
    _tiny_book(tmp_path)
    # The zh introduction's title is not the book's (交互式学习差分隐私, 交互式差分隐私).
    (tmp_path / "intro.md").write_text("# 一本小书\n\n## Start here\n\nWelcome.\n")
    out = pdf_script.html_to_pdf(pdf_script.build_singlehtml(tmp_path), tmp_path / "zh.pdf",
                                 **pdf_script.front_matter(tmp_path))
    count = int(re.search(r"^Pages:\s+(\d+)$", _poppler("pdfinfo", out), re.MULTILINE)[1])
    pages = [_poppler("pdftotext", out, "-f", str(i), "-l", str(i)) for i in range(1, count + 1)]
    for i, text in enumerate(pages, start=1):
        assert f"第 {i} 页，共 {count} 页" in text, f"page {i}: {text[-200:]}"
        assert "page " not in text, f"page {i}: {text[-200:]}"
    assert "本 PDF 由 HTML 版印出" in pages[0] and "发现错误？请在" in pages[0], pages[0]
    assert "github.com/example/tiny/issues" in pages[0]
    assert "目录" in pages[1] and "Contents" not in pages[1], pages[1]
    outline = dict(_outline(out))
    assert "引言" in outline and "一本小书" not in outline, outline


def test_widgets_print_as_frame_and_note(tmp_path):
    chapter = ROOT / "_build" / "html" / "book" / "promise.html"
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require(chapter.is_file(), f"book not built at {chapter.parent} (run make book)")
    _require(shutil.which("pdfimages") is not None, "no poppler (apt-get install poppler-utils)")
    out = pdf_script.html_to_pdf(chapter, tmp_path / "promise.pdf")
    pages = _check_aspect_and_page_numbers(out)
    assert _outline(out)[0][0] == "1. What the promise means"
    noted = [i for i, text in enumerate(pages, start=1) if "Printed at ε = " in text]
    widgets = (ROOT / "book" / "promise.md").read_text().count("explore(\n")
    assert widgets >= 1 and len(noted) == widgets, (noted, widgets)
    frames = {image["page"] for image in _images(out) if image["x_ppi"] < 200}
    assert set(noted) <= frames, f"a widget's note and its frame on different pages: {noted}"
    assert "sliders change ε and δ" in "".join(pages)


def _headings(page: Path) -> list[str]:
    """The text of the numbered h1-h3 headings of a built page without math, as the reader
    sees it (the section number, the title; not the "#" link)."""
    found = []
    for inner in re.findall(r"<h[1-3]>(.*?)</h[1-3]>", page.read_text(), re.DOTALL):
        if 'class="section-number"' not in inner or 'class="math' in inner:
            continue
        text = re.sub(r"<a class=\"headerlink\".*?</a>|<[^>]+>", "", inner, flags=re.DOTALL)
        found.append(" ".join(html.unescape(text).split()))
    return found


def test_bookmarks_are_the_headings_as_printed(tmp_path):
    """Chromium titles a bookmark with the text painted in its heading: the titles keep the
    spaces where a heading wraps, name a heading at the top of a page once (not "7.8. 7.8.
    ExercisesExercises") and include its math ("costs nε", not "costs ")."""
    chapter = ROOT / "_build" / "html" / "book" / "sparse_vector.html"
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require(chapter.is_file(), f"book not built at {chapter.parent} (run make book)")
    _require(shutil.which("pdftohtml") is not None, "no poppler (apt-get install poppler-utils)")
    titles = [title for title, _ in _outline(pdf_script.html_to_pdf(chapter, tmp_path / "s.pdf"))]
    headings = _headings(chapter)
    assert len(headings) >= 10 and "7. The sparse vector technique" in headings, headings
    missing = [heading for heading in headings if heading not in titles]
    assert not missing, f"headings without their bookmark: {missing}; bookmarks: {titles}"
    assert "7.1. Noising every answer costs nε" in titles, titles
