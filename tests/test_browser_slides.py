"""The slide decks of ``make slides`` (scripts/slides.py) in a real browser, offline.

Runs after the decks are built (``make test`` builds them right after the strict build of the
book). Every deck is opened from ``file://`` in Debian's chromium and paged through to its
end, slide by slide and fragment by fragment (a widget's frames), as a lecturer's clicker
would: every slide is reached; nothing is requested from the network or fails to load;
MathJax has typeset the math (no raw TeX delimiters left on any slide); every image has a
text alternative; each step through a widget slide puts a new frame on top;
no slide's content runs past the bottom of the slide; nothing is logged as an error.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from test_browser import CHROMIUM, LAUNCH_ARGS, _require, watch_console

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
DECKS = ROOT / "_build" / "slides"
sys.path.insert(0, str(ROOT / "scripts"))
from slides import deck_chapters  # noqa: E402

from dpkit.course.myst import read_book  # noqa: E402

CHAPTERS = deck_chapters(read_book(ROOT / "book"))

# The slide shown now: its kind, its heading, its visible text, the frames a widget slide
# shows, the images without a text alternative, and how far its content runs past the slide.
CURRENT = """
() => {
  const slide = Reveal.getCurrentSlide();
  const shown = (e) => getComputedStyle(e).visibility === 'visible' &&
                       getComputedStyle(e).opacity === '1';
  const frames = Array.from(slide.querySelectorAll('.frames > div')).filter(shown);
  return {
    index: Reveal.getIndices().h, fragment: Reveal.getIndices().f,
    kind: slide.dataset.kind, heading: (slide.querySelector('h2, h1') || {}).textContent,
    text: slide.innerText,
    frames: frames.map((f) => f.querySelector('img') ? f.querySelector('img').alt : ''),
    noAlt: Array.from(slide.querySelectorAll('img'))
      .filter((img) => !img.alt || !img.alt.trim()).length,
    overflow: slide.scrollHeight - Reveal.getConfig().height * (1 - Reveal.getConfig().margin),
  };
}
"""


@pytest.fixture(scope="module")
def browser():
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require(all((DECKS / f"{c}.html").is_file() for c in CHAPTERS),
             f"slides not built in {DECKS} (run make slides)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield launched
        launched.close()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_deck_offline_pages_through_with_math(browser, chapter):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = watch_console(page)
    remote, failed = [], []
    page.on("request", lambda r: remote.append(r.url)
            if not r.url.startswith(("file:", "data:")) else None)
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto((DECKS / f"{chapter}.html").as_uri())
    page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=15_000)
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                           timeout=15_000)
    page.evaluate("() => MathJax.startup.promise.then(() => true)")
    total = page.evaluate("() => Reveal.getTotalSlides()")
    assert page.locator("mjx-container").count() > 0, f"{chapter}: MathJax typeset nothing"

    seen: dict[int, dict] = {}
    for _ in range(500):                         # far more steps than any deck has
        now = page.evaluate(CURRENT)
        where = f"{chapter}, slide {now['index'] + 1} ({now['heading']})"
        raw = re.search(r"\\[A-Za-z]+|\\[(\[]|\$", now["text"])
        assert raw is None, f"{where}: raw TeX {raw and raw[0]!r} visible: math not typeset"
        assert not now["noAlt"], f"{where}: an image without a text alternative"
        assert now["overflow"] <= 1, f"{where}: content runs {now['overflow']} px past the slide"
        if now["kind"] == "widget":
            assert len(now["frames"]) >= 1, f"{where}: no widget frame shown"
            before = seen.get(now["index"])
            if before is not None and now["fragment"] != before["fragment"]:
                assert now["frames"][-1] != before["frames"][-1], \
                    f"{where}: the step did not change the frame"
        seen[now["index"]] = now
        if page.evaluate("() => Reveal.isLastSlide() && !Reveal.availableFragments().next"):
            break
        page.evaluate("() => Reveal.next()")
        page.wait_for_timeout(30)
    assert sorted(seen) == list(range(total)), \
        f"{chapter}: paged through slides {sorted(seen)} of {total}"
    assert [s["kind"] for s in seen.values()][:2] == ["title", "goals"], chapter
    assert seen[total - 1]["kind"] == "exercises", f"{chapter}: the last slide is not the exercises"
    assert not remote, f"{chapter}: requested from the network: {remote[:3]}"
    assert not failed, f"{chapter}: failed to load: {failed[:3]}"
    assert not errors, f"{chapter}: console errors: {errors[:3]}"
    page.close()
