"""``make pdf``: the whole book as one PDF, offline.

Two steps. :func:`build_singlehtml` builds the book as one HTML page (Jupyter Book's
``singlehtml`` builder, with the book's own ``_config.yml`` plus the small extension in
``scripts/singlehtml_nodes.py``); the page loads MathJax and the widget manager from the
book's vendored ``_static/``, so nothing is fetched. :func:`html_to_pdf` then opens the page
in Debian's chromium (driven by playwright, never a downloaded browser), waits until every
image has loaded, every widget is drawn and MathJax has typeset the math, and prints it for
paper: ``scripts/pdf_print.css`` (figures at their aspect ratio and kept with their captions,
no shadows) and ``scripts/pdf_print.js`` (each widget's sliders and choices replaced by a line
naming the setting its frame shows; a title page and the contents, whose page numbers come from a
first print). The PDF has page numbers, bookmarks and tags for screen readers. The words the
printing adds (contents, page numbers, the widget notes, the title page's notes) are in the
language of :mod:`dpkit.i18n` (Chinese for ``scripts/zh_book.py --pdf``, which sets
``DPKIT_LANG=zh``); a link to the zh glossary, a page beside the HTML book, points to its source
in the repository.

Usage: ``python scripts/pdf.py [OUTPUT.pdf]`` (default ``_build/book.pdf``).
"""

import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import yaml

from dpkit.i18n import tr

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update"]
READY_TIMEOUT_MS = 120_000

# The print stylesheet and the page preparation (widget notes, front matter, contents).
PRINT_CSS = Path(__file__).with_name("pdf_print.css")
PREPARE_JS = Path(__file__).with_name("pdf_print.js")
# Writes the page numbers found by the previous print into the contents.
FILL_PAGES = """(pages) => {
    for (const span of document.querySelectorAll('.pdf-toc-page')) {
        span.textContent = String(pages[span.dataset.target] ?? '');
    }
}"""
MARGIN = {"top": "15mm", "bottom": "16mm", "left": "12mm", "right": "12mm"}
FOOTER = ('<div style="width: 100%; margin: 0 12mm; font-size: 8pt; color: #444; '
          'font-family: sans-serif; display: flex; justify-content: space-between;">'
          '<span>{title}</span><span>{pages}</span></div>')
# Printing with the contents' page numbers filled in must not move anything; if it did, the
# numbers are found again, at most this many prints in all.
MAX_PRINTS = 3

# True once every image is loaded, every embedded widget view is drawn and MathJax (if the
# page has any math) has finished typesetting.
PAGE_READY = """() => {
    const images = Array.from(document.images);
    if (!images.every((img) => img.complete)) return false;
    const views = document.querySelectorAll(
        'script[type="application/vnd.jupyter.widget-view+json"]');
    for (const view of views) {
        if (!view.parentElement.querySelector('.jupyter-widgets')) return false;
    }
    if (!document.querySelector('div.math, span.math')) return true;
    const startup = window.MathJax && window.MathJax.startup;
    if (!startup || !startup.promise) return false;
    if (!window.pdfMathTypeset) {
        window.pdfMathTypeset = 'waiting';
        startup.promise.then(() => { window.pdfMathTypeset = 'done'; });
    }
    return window.pdfMathTypeset === 'done' && document.querySelector('mjx-container') !== null;
}"""


def words() -> dict[str, str]:
    """The fixed words the printing writes into the PDF, in the language of :mod:`dpkit.i18n`
    (``DPKIT_LANG=zh`` for the zh edition; :data:`dpkit.i18n.CATALOGUE` holds them): the
    contents' heading, the introduction's heading, the footer's page count and the note that
    replaces a widget's controls (``{settings}`` and ``{listed}`` are filled in by
    ``scripts/pdf_print.js``)."""
    return {"contents": tr("Contents"), "introduction": tr("Introduction"),
            "pages": tr("page {page} of {total}").format(
                page='<span class="pageNumber"></span>', total='<span class="totalPages"></span>'),
            "sliders": tr("Printed at {settings}; in the HTML book, sliders change {listed}."),
            "controls": tr("Printed at {settings}; in the HTML book, the controls change "
                           "{listed}."),
            "comma": tr(", "), "and": tr(" and ")}


def chromium() -> str:
    """Return the path of Debian's chromium, or raise ``FileNotFoundError`` saying how to
    install it."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise FileNotFoundError("make pdf prints with Debian's chromium: apt-get install chromium")
    return path


def named_destinations(pdf: Path) -> dict[str, int]:
    """Return the page (from 1) of every named destination of ``pdf``, read with poppler's
    ``pdfinfo -dests``; chromium names each in-page link target after its id.

    Raises
    ------
    FileNotFoundError
        If poppler's ``pdfinfo`` is not installed.
    """
    if shutil.which("pdfinfo") is None:
        raise FileNotFoundError("make pdf numbers the contents with poppler's pdfinfo: "
                                "apt-get install poppler-utils")
    listing = subprocess.run(["pdfinfo", "-dests", str(pdf)], check=True,
                             capture_output=True, text=True).stdout
    pages = {}
    for match in re.finditer(r'^\s*(\d+)\s+\[.*\]\s+"(.*)"$', listing, re.MULTILINE):
        pages.setdefault(match.group(2), int(match.group(1)))
    return pages


def html_to_pdf(html: Path, pdf: Path, timeout_ms: int = READY_TIMEOUT_MS,
                title: str | None = None, author: str | None = None,
                notes: Sequence[str] = ()) -> Path:
    """Print the local page ``html`` to ``pdf`` (A4) once it is fully drawn.

    The page is printed with ``scripts/pdf_print.css``, after ``scripts/pdf_print.js`` has
    replaced every widget's controls by a note naming the setting of the frame shown. The PDF
    has page numbers in its footer, bookmarks for the two highest heading levels and is
    tagged (its structure is readable by screen readers). Given a ``title``, it opens with a
    title page and the contents with page numbers: the page is printed once to find on
    which page each heading falls (:func:`named_destinations`), then again with the numbers.

    Parameters
    ----------
    html : Path
        An HTML file; everything it loads must be local (requests to the network are
        refused, so a page that needs one never becomes ready).
    pdf : Path
        Where to write the PDF (its folder is created).
    timeout_ms : int
        How long to wait for the page to be ready, in milliseconds.
    title, author : str, optional
        The title page's title and author; without a title, no title page and no contents.
    notes : sequence of str
        HTML paragraphs for the foot of the title page (licence, where to report errors).

    Returns
    -------
    Path
        ``pdf``.

    Raises
    ------
    FileNotFoundError
        If ``html`` does not exist, or chromium (or, for the contents, poppler's
        ``pdfinfo``) is not installed.
    TimeoutError
        If the page's images, widgets or math are not ready within ``timeout_ms``.
    RuntimeError
        If the contents' page numbers do not settle within :data:`MAX_PRINTS` prints.
    """
    html = Path(html).resolve()
    if not html.is_file():
        raise FileNotFoundError(f"html must be an existing file, got {str(html)!r}")
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    pdf = Path(pdf)
    pdf.parent.mkdir(parents=True, exist_ok=True)
    printed = words()
    options = {"format": "A4", "print_background": True, "margin": MARGIN, "outline": True,
               "tagged": True, "display_header_footer": True, "header_template": "<span></span>",
               "footer_template": FOOTER.format(title=escape(title or ""),
                                                pages=printed["pages"])}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("http*://**", lambda route: route.abort())
            try:
                # The whole book is an 11 MB page: loading it alone can take half a minute.
                page.goto(html.as_uri(), wait_until="load", timeout=timeout_ms)
                page.emulate_media(media="print")
                page.add_style_tag(content=PRINT_CSS.read_text())
                page.wait_for_function(PAGE_READY, timeout=timeout_ms, polling=250)
            except PlaywrightError as error:
                raise TimeoutError(f"{html}: images, widgets or math not ready after "
                                   f"{timeout_ms / 1000:g} s") from error
            targets = page.evaluate(PREPARE_JS.read_text(),
                                    {"title": title, "author": author, "notes": list(notes),
                                     "words": printed})
            page.pdf(path=str(pdf), **options)
            if title is None:
                return pdf
            pages: dict[str, int] = {}
            for _ in range(MAX_PRINTS - 1):
                found = named_destinations(pdf)
                numbered = {target: found[target] for target in targets if target in found}
                if numbered == pages:
                    return pdf
                pages = numbered
                page.evaluate(FILL_PAGES, pages)
                page.pdf(path=str(pdf), **options)
            found = named_destinations(pdf)
            if {target: found[target] for target in targets if target in found} != pages:
                raise RuntimeError(f"{pdf}: the contents' page numbers did not settle in "
                                   f"{MAX_PRINTS} prints")
        finally:
            browser.close()
    return pdf


def singlehtml_config(root: Path = ROOT) -> dict[str, Any]:
    """The configuration of the one-page build of the book at ``root``: its ``_config.yml``
    with ``scripts/singlehtml_nodes.py`` added as a local Sphinx extension (every local
    extension's path made absolute), and the ``zh_glossary`` link of the English edition, to
    a page beside the HTML book that the PDF does not hold, pointing to the glossary's source
    in the repository (``repository.url``, ``repository.branch``) instead."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    sphinx = config.setdefault("sphinx", {})
    local = sphinx.setdefault("local_extensions", {})
    # Jupyter Book resolves these paths against the config file's folder: the derived file
    # lives in _build/pdf/, so the book's own (relative to the root) become absolute.
    for name, path in local.items():
        local[name] = str((root / path).resolve())
    local["singlehtml_nodes"] = str(ROOT / "scripts")
    substitutions = config.get("parse", {}).get("myst_substitutions", {})
    url, branch = (config.get("repository", {}).get(key) for key in ("url", "branch"))
    if url and "<a href=" in substitutions.get("zh_glossary", ""):
        substitutions["zh_glossary"] = re.sub(
            r'href="[^"]*"', f'href="{url}/blob/{branch or "main"}/book/zh/glossary.md"',
            substitutions["zh_glossary"])
    return config


def build_singlehtml(root: Path = ROOT) -> Path:
    """Build the book at ``root`` as one HTML page and return the page's path.

    The configuration is :func:`singlehtml_config`'s, written to ``_build/pdf/_config.yml``.

    Raises
    ------
    subprocess.CalledProcessError
        If the build fails.
    """
    derived = root / "_build" / "pdf" / "_config.yml"
    derived.parent.mkdir(parents=True, exist_ok=True)
    derived.write_text(yaml.safe_dump(singlehtml_config(root), sort_keys=False))
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jupyter_book), "build", str(root), "--builder", "singlehtml",
                    "--config", str(derived), "--keep-going"], check=True)
    # The page is written under its root document's name (book/intro.html) but links its
    # _static/ and _images/ relative to the output folder: put it there.
    out = root / "_build" / "singlehtml"
    root_doc = yaml.safe_load((root / "_toc.yml").read_text())["root"]
    page = out / "book.html"
    shutil.copyfile(out / f"{root_doc}.html", page)
    return page


def front_matter(root: Path = ROOT) -> dict[str, object]:
    """The title page of the book at ``root``, from its ``_config.yml``: ``title``,
    ``author`` and ``notes`` (the licence paragraph of the page footer and the address of
    the issue tracker), as :func:`html_to_pdf` takes them."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    notes = ["<p>" + tr("Printed from the HTML book: each interactive figure shows the setting "
                        "named above it; in the HTML book and the notebooks its sliders and "
                        "choices change it.") + "</p>"]
    footer = config.get("html", {}).get("extra_footer", "")
    notes += re.findall(r"<p>.*?[Ll]icen[cs]e.*?</p>", footer, re.DOTALL)
    url = config.get("repository", {}).get("url")
    if url:
        notes.append("<p>" + tr("Found an error? Report it at {address}.").format(
            address=f"{escape(url)}/issues") + "</p>")

    return {"title": config.get("title"), "author": config.get("author"), "notes": notes}


def main(argv: list[str]) -> None:
    """Build the book as one page and print it (see the module docstring)."""
    pdf = Path(argv[0]) if argv else ROOT / "_build" / "book.pdf"
    html_to_pdf(build_singlehtml(), pdf, **front_matter())
    print(f"The book as a PDF: {pdf.resolve()}")


if __name__ == "__main__":
    main(sys.argv[1:])
