"""``make pdf``'s printing step (scripts/pdf.py) on a tiny page, in Debian's chromium.

Building the whole book as one page takes minutes, so the test prints a small page with the
same ingredients instead: MathJax from the book's vendored copy, a figure, and math in the
classes Sphinx gives it. The PDF (read with poppler's pdfinfo and pdftotext) must have one
page, the image, and the math as symbols rather than raw TeX; a page whose math can never be
typeset must time out rather than print raw TeX.
"""

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


def _poppler(tool: str, pdf: Path) -> str:
    return subprocess.run([tool, str(pdf), *(["-"] if tool == "pdftotext" else [])],
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
