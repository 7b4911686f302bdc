"""The built book in a real browser (Debian's chromium, driven by playwright), offline.

Runs after the strict build (`make test` builds first). For every chapter page: nothing is
requested from the network, math is typeset (no raw TeX delimiters left in the text),
every static widget slider switches the displayed frame when moved, every image (figures and
widget frames) has a text alternative, and the footer states the licences beside an
"Open issue" link to the repository's tracker.
"""

import os
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
IN_CI = os.environ.get("CI") == "true"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chapters() -> list[str]:
    return sorted(p.stem for p in (ROOT / "book").glob("*.md"))


def _require(condition: bool, reason: str) -> None:
    """Skip with a visible reason locally; in CI a missing prerequisite is a failure."""
    if not condition:
        if IN_CI:
            pytest.fail(f"browser test cannot run in CI: {reason}")
        pytest.skip(reason)


def nudge(page, slider) -> str:
    """Move a widget slider one step with the keyboard (left at its maximum, else right), as a
    reader would; return the readout it showed before."""
    readout = slider.locator(".widget-readout").inner_text()
    handle = slider.locator(".noUi-handle")
    handle.scroll_into_view_if_needed()
    handle.focus()
    at_maximum = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    page.keyboard.press("ArrowLeft" if at_maximum else "ArrowRight")
    return readout


@pytest.fixture(scope="module")
def browser():
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require((HTML / "index.html").is_file(), f"book not built at {HTML} (run make book)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield launched
        launched.close()


VISIBLE_FRAMES = """
(box) => Array.from(box.querySelectorAll('img'))
    .filter((img) => img.offsetParent !== null).map((img) => img.src)
"""


# An image without a real text alternative: none, blank, or the file name a build puts there.
IMAGES_WITHOUT_ALT = """
() => Array.from(document.querySelectorAll('article img'))
    .filter((img) => !img.alt || !img.alt.trim() || /\\.(png|svg|jpe?g)$/.test(img.alt))
    .map((img) => img.alt || img.src.slice(0, 60))
"""


@pytest.mark.parametrize("chapter", _chapters())
def test_page_offline_math_and_widgets(browser, chapter):
    page_file = HTML / "book" / f"{chapter}.html"
    assert page_file.is_file(), f"{chapter}: page missing from the build"
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    remote = []
    page.on("request", lambda r: remote.append(r.url)
            if r.url.startswith(("http:", "https:")) else None)
    failed = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")

    # Math: MathJax ran and left no raw delimiters in the visible text.
    if page.locator("div.math, span.math").count():
        page.wait_for_selector("mjx-container", state="attached", timeout=15_000)
    text = page.locator("article").inner_text()
    for raw in ("\\(", "\\[", "$$"):
        assert raw not in text, f"{chapter}: raw TeX {raw!r} visible: math did not render"

    # Widgets: every slider changes the frame shown beside it.
    if (HTML / "book" / f"{chapter}.html").read_text().count("application/vnd.jupyter.widget-view"):
        page.wait_for_selector(".widget-slider", state="attached", timeout=15_000)
    sliders = page.locator(".widget-slider")
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        box = slider.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")
        before = box.evaluate(VISIBLE_FRAMES)
        assert len(before) == 1, f"{chapter}: slider {i} shows {len(before)} frames, want 1"
        readout = nudge(page, slider)
        page.wait_for_timeout(200)
        after = box.evaluate(VISIBLE_FRAMES)
        assert slider.locator(".widget-readout").inner_text() != readout, \
            f"{chapter}: slider {i} did not move"
        assert after != before and len(after) == 1, \
            f"{chapter}: slider {i} moved but the figure stayed"
    # Text alternatives (WCAG 1.1.1), for the figures and every widget frame in the page.
    missing = page.evaluate(IMAGES_WITHOUT_ALT)
    assert not missing, f"{chapter}: images without a text alternative: {missing[:3]}"
    # Licences and how to report an error, on every page.
    footer = " ".join(page.locator("footer").all_inner_texts())
    assert "CC BY 4.0" in footer and "MIT" in footer and "issue tracker" in footer, \
        f"{chapter}: the footer lacks the licences or the way to report an error"
    assert page.locator('a[href*="/issues/new"]').count() >= 1, \
        f"{chapter}: no link to open an issue"
    assert not remote, f"{chapter}: requested from the network: {remote[:3]}"
    assert not failed, f"{chapter}: failed to load: {failed[:3]}"
    page.close()
