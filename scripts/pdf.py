"""``make pdf``: the whole book as one PDF, offline.

Two steps. :func:`build_singlehtml` builds the book as one HTML page (Jupyter Book's
``singlehtml`` builder, with the book's own ``_config.yml`` plus the small extension in
``scripts/singlehtml_nodes.py``); the page loads MathJax and the widget manager from the
book's vendored ``_static/``, so nothing is fetched. :func:`html_to_pdf` then opens the page
in Debian's chromium (driven by playwright, never a downloaded browser), waits until every
image has loaded, every widget is drawn and MathJax has typeset the math, and prints it.

Usage: ``python scripts/pdf.py [OUTPUT.pdf]`` (default ``_build/book.pdf``).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update"]
READY_TIMEOUT_MS = 120_000

# Paper does not scroll: wrap long code lines and let wide outputs use the whole width.
PRINT_CSS = """
pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
div.highlight, div.cell_output, div.output, .pst-scrollable-table-container, .table-wrapper {
    overflow: visible !important;
}
table.dataframe { font-size: 0.75em; }
"""

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


def chromium() -> str:
    """Return the path of Debian's chromium, or raise ``FileNotFoundError`` saying how to
    install it."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise FileNotFoundError("make pdf prints with Debian's chromium: apt-get install chromium")
    return path


def html_to_pdf(html: Path, pdf: Path, timeout_ms: int = READY_TIMEOUT_MS) -> Path:
    """Print the local page ``html`` to ``pdf`` (A4, backgrounds on) once it is fully drawn.

    Parameters
    ----------
    html : Path
        An HTML file; everything it loads must be local (requests to the network are
        refused, so a page that needs one never becomes ready).
    pdf : Path
        Where to write the PDF (its folder is created).
    timeout_ms : int
        How long to wait for the page to be ready, in milliseconds.

    Returns
    -------
    Path
        ``pdf``.

    Raises
    ------
    FileNotFoundError
        If ``html`` does not exist or chromium is not installed.
    TimeoutError
        If the page's images, widgets or math are not ready within ``timeout_ms``.
    """
    html = Path(html).resolve()
    if not html.is_file():
        raise FileNotFoundError(f"html must be an existing file, got {str(html)!r}")
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    pdf = Path(pdf)
    pdf.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("http*://**", lambda route: route.abort())
            page.goto(html.as_uri(), wait_until="load")
            page.emulate_media(media="print")
            page.add_style_tag(content=PRINT_CSS)
            try:
                page.wait_for_function(PAGE_READY, timeout=timeout_ms, polling=250)
            except PlaywrightError as error:
                raise TimeoutError(f"{html}: images, widgets or math not ready after "
                                   f"{timeout_ms / 1000:g} s") from error
            page.pdf(path=str(pdf), format="A4", print_background=True,
                     margin={"top": "15mm", "bottom": "15mm", "left": "12mm", "right": "12mm"})
        finally:
            browser.close()
    return pdf


def build_singlehtml(root: Path = ROOT) -> Path:
    """Build the book at ``root`` as one HTML page and return the page's path.

    The configuration is the book's ``_config.yml`` with ``scripts/singlehtml_nodes.py``
    added as a local Sphinx extension, written to ``_build/pdf/_config.yml``.

    Raises
    ------
    subprocess.CalledProcessError
        If the build fails.
    """
    config = yaml.safe_load((root / "_config.yml").read_text())
    sphinx = config.setdefault("sphinx", {})
    local = sphinx.setdefault("local_extensions", {})
    # Jupyter Book resolves these paths against the config file's folder: the derived file
    # lives in _build/pdf/, so the book's own (relative to the root) become absolute.
    for name, path in local.items():
        local[name] = str((root / path).resolve())
    local["singlehtml_nodes"] = str(ROOT / "scripts")
    derived = root / "_build" / "pdf" / "_config.yml"
    derived.parent.mkdir(parents=True, exist_ok=True)
    derived.write_text(yaml.safe_dump(config, sort_keys=False))
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


def main(argv: list[str]) -> None:
    """Build the book as one page and print it (see the module docstring)."""
    pdf = Path(argv[0]) if argv else ROOT / "_build" / "book.pdf"
    html_to_pdf(build_singlehtml(), pdf)
    print(f"The book as a PDF: {pdf.resolve()}")


if __name__ == "__main__":
    main(sys.argv[1:])
