"""The built book in a real browser (Debian's chromium, driven by playwright), offline.

Runs after the strict build (`make test` builds first). For every page of both editions (the
English one and the Simplified Chinese one in _build/html/zh): nothing is
requested from the network, math is typeset (no raw TeX delimiters left in the text),
every static widget control (slider or radio buttons) switches the displayed frame when moved
with the keyboard, Tab moves the focus from each control of a widget to the next, every image
(figures and widget frames) has a text alternative, and the footer states the licences beside an
"Open issue" link to the repository's tracker. At a desktop width (1200 px) and a phone's
(420 px): nothing is logged as an error in the console, axe-core (vendored by `make vendor`
into .vendor/) finds no accessibility violation of any impact, and at 420 px the page
does not scroll sideways, no formula is cut off by a box around it, every formula that
scrolls shows that it does, and no line of code, printed output or table is cut off at the
edge of its box without a cue (at 1200 px too: book.css wraps code, a wide table shows that
it scrolls). At both widths, no text in a widget or a
figure (widget frames included) is smaller than 11 px as shown, and no text in a widget (a
label, a slider's value, a choice) is cut off by its box.
"""

import itertools
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
IN_CI = os.environ.get("CI") == "true"
AXE = ROOT / ".vendor" / "axe-core" / "axe.min.js"
PHONE = {"width": 420, "height": 900}
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chapters() -> list[str]:
    return sorted(p.stem for p in (ROOT / "book").glob("*.md"))


#: Where each edition is built: the English one, and the Simplified Chinese one beside it
#: (scripts/zh_book.py).
EDITIONS = {"en": HTML, "zh": HTML / "zh"}
#: Every page of both editions: the zh edition has every English page (translated, or the
#: English text under a notice) and its glossary.
PAGES = [(edition, chapter) for edition in EDITIONS for chapter in _chapters()] + \
    [("zh", "glossary")]
#: What each edition's footer says about reporting an error.
REPORT_AN_ERROR = {"en": "issue tracker", "zh": "问题跟踪器"}


def page_path(edition: str, chapter: str) -> Path:
    """The built page of ``chapter`` (a file name in book/ without .md) in ``edition``."""
    return EDITIONS[edition] / "book" / f"{chapter}.html"


def _require(condition: bool, reason: str) -> None:
    """Skip with a visible reason locally; in CI a missing prerequisite is a failure."""
    if not condition:
        if IN_CI:
            pytest.fail(f"browser test cannot run in CI: {reason}")
        pytest.skip(reason)


# A widget's controls: sliders (numbers) and radio buttons (categories; dpkit.widgets).
CONTROLS = ".widget-slider, .widget-radio"
# Where the keyboard focus goes in a control: a slider's handle, the chosen radio button.
FOCUSABLE = '.noUi-handle, input[type="radio"]:checked'


def shown_value(control) -> str:
    """The value a control shows: a slider's readout, the label of the chosen radio button."""
    if "widget-radio" in (control.get_attribute("class") or ""):
        return control.locator("label:has(input:checked)").inner_text()
    return control.locator(".widget-readout").inner_text()


def nudge(page, control) -> str:
    """Move a widget control one step with the keyboard, as a reader would: a slider left at
    its maximum, else right; radio buttons to the previous choice from the last, else to the
    next. Return the value it showed before."""
    value = shown_value(control)
    focus = control.locator(FOCUSABLE)
    focus.scroll_into_view_if_needed()
    focus.focus()
    if focus.get_attribute("type") == "radio":
        radios = control.locator('input[type="radio"]')
        last = radios.nth(radios.count() - 1).is_checked()
        page.keyboard.press("ArrowUp" if last else "ArrowDown")
    else:
        at_maximum = focus.get_attribute("aria-valuenow") == focus.get_attribute("aria-valuemax")
        page.keyboard.press("ArrowLeft" if at_maximum else "ArrowRight")
    return value


def tab_order_breaks(page, stops: int = 3) -> list[str]:
    """Widgets in which Tab, pressed on one control, does not bring the focus to the next one
    within ``stops`` presses spent inside the first (a slider's editable readout is a stop):
    a control the keyboard cannot reach, or radio buttons that are not one group (Tab would
    visit every choice)."""
    breaks = []
    inside = "(e) => e.contains(document.activeElement)"
    for box in page.locator(".widget-vbox:has(> .widget-slider, > .widget-radio)").all():
        controls = box.locator(f":scope > :is({CONTROLS})").all()
        for here, there in itertools.pairwise(controls):
            here.locator(FOCUSABLE).focus()
            for _ in range(stops):
                page.keyboard.press("Tab")
                if not here.evaluate(inside):
                    break
            if not there.evaluate(inside):
                breaks.append(f"Tab from {shown_value(here)!r} went to "
                              + page.evaluate("document.activeElement.outerHTML.slice(0, 80)"))
    return breaks


def watch_console(page) -> list[str]:
    """Collect what the page logs as an error (console.error, uncaught exceptions)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text[:300]) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {str(e)[:300]}"))
    return errors


def wait_rendered(page, path: Path) -> None:
    """Wait until MathJax has typeset the page (built at ``path``) and the widgets are
    drawn."""
    if page.locator("div.math, span.math").count():
        page.wait_for_selector("mjx-container", state="attached", timeout=15_000)
    page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise"
                  " ? MathJax.startup.promise.then(() => true) : true")
    if path.read_text().count("application/vnd.jupyter.widget-view"):
        page.wait_for_selector(CONTROLS, state="attached", timeout=15_000)
    page.wait_for_timeout(300)


# axe-core's violations, of every impact (minor and moderate too: pandas' blank index
# headers, minor, and the title link outside a landmark, moderate, are fixed by book.js and
# book/_templates/navbar-logo.html).
AXE_RUN = """
async () => {
  const result = await axe.run(document, {resultTypes: ['violations'], preload: false});
  return result.violations
    .map((v) => `${v.impact} ${v.id} (${v.nodes.length}): ` +
                v.nodes.slice(0, 2).map((n) => n.target.join(' ')).join(' | '));
}
"""


def axe_violations(page) -> list[str]:
    """axe-core's violations on the page as it is now."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_RUN)


# What makes the page wider than the window: elements whose right edge is past it and that no
# scrolling, clipping or fixed box contains, widest first.
WIDER_THAN_WINDOW = """
() => {
  const width = document.documentElement.clientWidth;
  const contained = (e) => {
    for (let up = e.parentElement; up && up !== document.body; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.position === 'fixed' ||
          (style.display !== 'inline' && style.overflowX !== 'visible')) return true;
    }
    return false;
  };
  return Array.from(document.querySelectorAll('body *'))
    .map((e) => [e, e.getBoundingClientRect().right])
    .filter(([e, right]) => right > width + 0.5 && !contained(e))
    .sort((a, b) => b[1] - a[1]).slice(0, 3)
    .map(([e, right]) => `<${e.tagName.toLowerCase()} class="${e.className}"> ends at ` +
                         `${Math.round(right)} px: ${(e.textContent || '').trim().slice(0, 50)}`);
}
"""

# Formulas cut off by a box that hides its overflow (a box that scrolls is fine).
CLIPPED_MATH = """
() => {
  const cut = [];
  for (const math of document.querySelectorAll('article mjx-container')) {
    const box = math.getBoundingClientRect();
    for (let up = math.parentElement; up && up.tagName !== 'ARTICLE'; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.display === 'inline' || !['hidden', 'clip'].includes(style.overflowX)) continue;
      const edge = up.getBoundingClientRect();
      if (box.right > edge.right + 1 || box.left < edge.left - 1) {
        cut.push(`${(math.textContent || '').slice(0, 40)} (cut by <${up.tagName.toLowerCase()} ` +
                 `class="${up.className}">)`);
        break;
      }
    }
  }
  return cut;
}
"""


# Formulas that scroll sideways without a visible cue (book.css gives them an edge shadow).
SCROLLING_MATH_WITHOUT_CUE = """
() => Array.from(document.querySelectorAll('article div.math, article mjx-container'))
  .filter((e) => {
    const style = getComputedStyle(e);
    return ['auto', 'scroll'].includes(style.overflowX) && e.scrollWidth > e.clientWidth + 4 &&
           style.boxShadow === 'none';
  })
  .map((e) => (e.textContent || '').slice(0, 40))
"""


# Code blocks (code cells, their printed output) and tables whose lines do not fit their box,
# so that the end of a line is hidden, with no visible cue that the box scrolls sideways
# (book.css wraps code; a table that scrolls gets the edge shadow formulas get). The block
# itself and every box around it up to the article are checked.
CUT_CODE = """
() => Array.from(document.querySelectorAll('article pre, article table'))
  .filter((pre) => pre.offsetParent !== null)
  .filter((pre) => {
    for (let box = pre; box && box.tagName !== 'ARTICLE'; box = box.parentElement) {
      const style = getComputedStyle(box);
      if (style.display === 'inline' || style.overflowX === 'visible') continue;
      if (box.scrollWidth > box.clientWidth + 1 && style.boxShadow === 'none') return true;
    }
    return false;
  })
  .map((pre) => pre.textContent.split('\\n')
                   .reduce((a, b) => (b.length > a.length ? b : a), '').trim().slice(0, 60))
"""


# Text smaller than MIN_TEXT_PX CSS pixels in the widgets (labels, readouts: their computed
# font size) and in the figures and widget frames. An image's text is measured from the size
# of its smallest text in the image's own pixels, which dpkit.plots writes into the <img> as
# data-text-px, times the width the page shows it at over its natural width (a hidden widget
# frame would be shown at the width of the frame shown beside it). An image without
# data-text-px cannot be checked and is reported too.
MIN_TEXT_PX = 11
SMALL_TEXT = """
(least) => {
  const small = [];
  for (const e of document.querySelectorAll('article .jupyter-widgets *')) {
    if (e.offsetParent === null) continue;
    const own = Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    const px = parseFloat(getComputedStyle(e).fontSize);
    if (own && px < least) small.push(`widget text ${e.textContent.trim().slice(0, 30)}: ${px} px`);
  }
  for (const img of document.querySelectorAll('article img')) {
    const box = img.closest('.widget-vbox');
    const shown = img.offsetParent !== null ? img :
      box && Array.from(box.querySelectorAll('img')).find((i) => i.offsetParent !== null);
    if (!shown) continue;
    const px = parseFloat(img.dataset.textPx);
    if (!(px > 0)) { small.push(`image without data-text-px: ${img.alt.slice(0, 40)}`); continue; }
    const size = px * shown.getBoundingClientRect().width / img.naturalWidth;
    if (size < least) small.push(`figure text ${size.toFixed(1)} px: ${img.alt.slice(0, 50)}`);
  }
  return small;
}
"""

# Text in a widget that its box cuts off: a label, a slider's readout, a choice whose text is
# wider than the box that shows it ("1 to 200, then +1% (de" for "... (default)").
CUT_WIDGET_TEXT = """
() => Array.from(document.querySelectorAll('article .jupyter-widgets *'))
  .filter((e) => e.offsetParent !== null &&
    Array.from(e.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim()) &&
    e.scrollWidth > e.clientWidth + 1)
  .map((e) => `${e.textContent.trim().slice(0, 40)} (${e.scrollWidth} px in ${e.clientWidth})`)
"""


@pytest.fixture(scope="module")
def browser():
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require((HTML / "index.html").is_file(), f"book not built at {HTML} (run make book)")
    _require(AXE.is_file(), f"axe-core missing at {AXE} (run make vendor)")
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


@pytest.mark.parametrize(("edition", "name"), PAGES)
def test_page_offline_math_and_widgets(browser, edition, name):
    page_file = page_path(edition, name)
    chapter = f"{edition}/{name}"
    assert page_file.is_file(), f"{chapter}: page missing from the build"
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors = watch_console(page)
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

    # Widgets: every control, moved with the keyboard, changes the frame shown beside it.
    if page_file.read_text().count("application/vnd.jupyter.widget-view"):
        page.wait_for_selector(CONTROLS, state="attached", timeout=15_000)
    # Widget text as first shown (the values moving the controls shows are checked below).
    cut_at_first = page.evaluate(CUT_WIDGET_TEXT)
    assert not cut_at_first, f"{chapter}: widget text cut off at 1200 px: {cut_at_first[:3]}"
    controls = page.locator(CONTROLS)
    for i in range(controls.count()):
        control = controls.nth(i)
        box = control.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")
        before = box.evaluate(VISIBLE_FRAMES)
        assert len(before) == 1, f"{chapter}: control {i} shows {len(before)} frames, want 1"
        value = nudge(page, control)
        page.wait_for_timeout(200)
        after = box.evaluate(VISIBLE_FRAMES)
        assert shown_value(control) != value, f"{chapter}: control {i} did not move"
        assert after != before and len(after) == 1, \
            f"{chapter}: control {i} moved but the figure stayed"
    unreachable = tab_order_breaks(page)
    assert not unreachable, f"{chapter}: the keyboard does not go through a widget: {unreachable}"
    cut = page.evaluate(CUT_CODE)
    assert not cut, f"{chapter}: code, output or table lines cut off at 1200 px: {cut[:3]}"
    small = page.evaluate(SMALL_TEXT, MIN_TEXT_PX)
    assert not small, f"{chapter}: text below {MIN_TEXT_PX} px at 1200 px: {small[:3]}"
    cut = page.evaluate(CUT_WIDGET_TEXT)
    assert not cut, f"{chapter}: widget text cut off at 1200 px: {cut[:3]}"
    # Text alternatives (WCAG 1.1.1), for the figures and every widget frame in the page.
    missing = page.evaluate(IMAGES_WITHOUT_ALT)
    assert not missing, f"{chapter}: images without a text alternative: {missing[:3]}"
    # Licences and how to report an error, on every page.
    footer = " ".join(page.locator("footer").all_inner_texts())
    assert "CC BY 4.0" in footer and "MIT" in footer and REPORT_AN_ERROR[edition] in footer, \
        f"{chapter}: the footer lacks the licences or the way to report an error"
    assert page.locator('a[href*="/issues/new"]').count() >= 1, \
        f"{chapter}: no link to open an issue"
    assert not remote, f"{chapter}: requested from the network: {remote[:3]}"
    assert not failed, f"{chapter}: failed to load: {failed[:3]}"
    assert not errors, f"{chapter}: console errors at 1200 px: {errors[:3]}"
    violations = axe_violations(page)
    assert not violations, f"{chapter}: axe-core at 1200 px: {violations}"
    page.close()


# The language switch is what a tap on its middle reaches (nothing lies over it).
SWITCH_ON_TOP = """
() => {
  const link = document.querySelector('a.language-switch');
  const box = link.getBoundingClientRect();
  const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
  return hit !== null && (hit === link || link.contains(hit));
}
"""


@pytest.mark.parametrize(("edition", "name"), PAGES)
def test_page_at_phone_width(browser, edition, name):
    """At 420 px: no sideways scrolling, no formula, code or table cut off, no text below
    11 px, no widget text cut off, no console error, no axe-core violation; the language
    switch is on the screen."""
    page = browser.new_page(viewport=PHONE)
    errors = watch_console(page)
    chapter = f"{edition}/{name}"
    page.goto(page_path(edition, name).as_uri())
    page.wait_for_load_state("load")
    wait_rendered(page, page_path(edition, name))
    switch = page.locator("a.language-switch").bounding_box()
    assert switch and 0 <= switch["x"] and switch["x"] + switch["width"] <= PHONE["width"] \
        and switch["y"] >= 0, f"{chapter}: the language switch is not on the screen: {switch}"
    assert page.evaluate(SWITCH_ON_TOP), f"{chapter}: something covers the language switch"
    too_wide = page.evaluate(WIDER_THAN_WINDOW)
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= PHONE["width"], \
        f"{chapter}: the page is {scroll_width} px wide at {PHONE['width']} px: {too_wide}"
    clipped = page.evaluate(CLIPPED_MATH)
    assert not clipped, f"{chapter}: formulas cut off at 420 px: {clipped[:3]}"
    hidden = page.evaluate(SCROLLING_MATH_WITHOUT_CUE)
    assert not hidden, f"{chapter}: formulas scroll at 420 px with no visible cue: {hidden[:3]}"
    cut = page.evaluate(CUT_CODE)
    assert not cut, f"{chapter}: code, output or table lines cut off at 420 px: {cut[:3]}"
    small = page.evaluate(SMALL_TEXT, MIN_TEXT_PX)
    assert not small, f"{chapter}: text below {MIN_TEXT_PX} px at 420 px: {small[:3]}"
    cut = page.evaluate(CUT_WIDGET_TEXT)
    assert not cut, f"{chapter}: widget text cut off at 420 px: {cut[:3]}"
    assert not errors, f"{chapter}: console errors at 420 px: {errors[:3]}"
    violations = axe_violations(page)
    assert not violations, f"{chapter}: axe-core at 420 px: {violations}"
    page.close()


def test_the_book_ships_only_what_its_pages_load():
    """The slide decks' reveal.js is vendored outside the book (``.vendor/``), so the built
    book's ``_static`` does not carry 0.75 MB that no page loads."""
    _require((HTML / "index.html").is_file(), f"book not built at {HTML} (run make book)")
    shipped = sorted(path.name for path in (HTML / "_static").rglob("reveal*"))
    assert not shipped, f"the built book ships slide-deck assets: {shipped}"


# The sections of a page in order (0 is the page's title), as book.js matches them between
# the editions: the sections whose first child is a heading.
SECTION_IDS = """
() => Array.from(document.querySelectorAll('.bd-article section[id]'))
  .filter((s) => s.firstElementChild && /^H[1-6]$/.test(s.firstElementChild.tagName))
  .map((s) => s.id)
"""


@pytest.mark.parametrize("source", sorted(EDITIONS))
def test_language_switch_reaches_the_same_section(browser, source):
    """A reader in the fourth section of a chapter presses Enter on the language switch and
    lands on the same chapter of the other edition, at its fourth section."""
    other = "zh" if source == "en" else "en"
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(page_path(source, "laplace").as_uri())
    wait_rendered(page, page_path(source, "laplace"))
    here = page.evaluate(SECTION_IDS)
    assert len(here) > 4, here
    # (instant: the theme scrolls smoothly, and the switch reads where the page is now)
    page.evaluate("(id) => document.getElementById(id).firstElementChild"
                  ".scrollIntoView({behavior: 'instant'})", here[3])
    page.wait_for_timeout(200)
    page.locator("a.language-switch").focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_load_state("load")
    wait_rendered(page, page_path(other, "laplace"))
    assert page.url.split("#")[0] == page_path(other, "laplace").as_uri()
    there = page.evaluate(SECTION_IDS)
    assert len(there) == len(here), "the editions' pages have different sections"
    assert page.url.endswith("#" + there[3]), page.url
    top = page.evaluate("(id) => document.getElementById(id).firstElementChild"
                        ".getBoundingClientRect().top", there[3])
    assert 0 <= top <= 900 / 3, f"the section's heading is at {top} px, not on top"
    page.close()


# Every element with Chinese text of its own, marked in document order, with that text.
MARK_CJK = """
() => {
  const cjk = /[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]/;
  const found = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.offsetParent === null && getComputedStyle(e).position !== 'fixed') continue;
    const own = Array.from(e.childNodes).filter((n) => n.nodeType === 3)
      .map((n) => n.textContent).join('');
    if (cjk.test(own)) { e.dataset.cjk = String(found.length); found.push(own); }
  }
  return found;
}
"""


#: The Chinese characters and punctuation (CJK symbols, ideographs, full-width forms).
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def _font_files() -> dict[str, tuple[str, int]]:
    """``{PostScript name: (font file, face index)}`` of the system's fonts (fontconfig)."""
    listed = subprocess.run(["fc-list", "--format", "%{postscriptname}|%{file}|%{index}\\n"],
                            capture_output=True, text=True, check=True).stdout
    fonts = {}
    for line in listed.splitlines():
        name, path, index = line.rsplit("|", 2)
        fonts.setdefault(name, (path, int(index.split(",")[0] or 0)))
    return fonts


@pytest.mark.parametrize("name", ["intro", "laplace", "composition", "exponential_base2",
                                  "sparse_vector", "glossary"])
def test_no_cjk_glyph_is_missing(browser, name):
    """Every Chinese character of a zh page is drawn from a font that has it: chromium names
    the fonts it used for each element's text (DevTools: CSS.getPlatformFontsForNode), and
    their character maps (fontTools) must hold each character, else it showed as a box."""
    _require(shutil.which("fc-list") is not None, "no fc-list (apt-get install fontconfig)")
    from fontTools.ttLib import TTFont

    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(page_path("zh", name).as_uri())
    wait_rendered(page, page_path("zh", name))
    texts = page.evaluate(MARK_CJK)
    assert texts, f"zh/{name}: no Chinese text found"
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    files, cmaps, missing = _font_files(), {}, []
    for i, text in enumerate(texts):
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": f'[data-cjk="{i}"]'})
        used = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
        if not used:
            continue    # not drawn (a tooltip's text until the pointer is on its button)
        covered: set[int] = set()
        for font in used:
            where = files.get(font["postScriptName"])
            if where is None:
                continue
            if where not in cmaps:
                cmaps[where] = set(TTFont(where[0], fontNumber=where[1], lazy=True)
                                   .getBestCmap())
            covered |= cmaps[where]
        lacking = {c for c in CJK.findall(text) if ord(c) not in covered}
        if lacking:
            missing.append(f"{text.strip()[:30]!r}: {''.join(sorted(lacking))[:10]} "
                           f"(fonts {[f['familyName'] for f in used]})")
    assert not missing, f"zh/{name}: characters drawn without a glyph: {missing[:3]}"
    page.close()
