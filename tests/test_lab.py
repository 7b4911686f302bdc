"""``make lab`` in a real browser (Debian's chromium, driven by playwright).

Starts the server with the command line of ``make lab`` (``scripts/lab.py``) plus
``--no-browser``, a free loopback port and a token, on a copy of ``book/`` (so that an
autosave cannot rewrite the sources) with empty user settings and workspaces (so that
nothing a person did in their own JupyterLab can open the chapter for us). Then, as a
reader would: double-click the first chapter in the file browser, see it open as a
notebook with its MyST directives and math rendered, run all cells from the Run menu,
wait for the kernel, move the live slider, and see the figure change with no error or
stderr output in any cell. The server and its kernels are stopped in a ``finally``.
"""

import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import jupytext
import pytest
from test_browser import CHROMIUM, LAUNCH_ARGS, _require

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
# The first chapter: a short one whose live widget is a slider over ε and a figure.
CHAPTER = "intro"
START_TIMEOUT = 60.0

MARKDOWN_CELLS = sum(cell.cell_type == "markdown"
                     for cell in jupytext.read(ROOT / "book" / f"{CHAPTER}.md").cells)

_spec = importlib.util.spec_from_file_location("lab", ROOT / "scripts" / "lab.py")
lab = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lab)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api(url: str, method: str = "GET") -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as r:
        return r.read()


def _stop(server: subprocess.Popen, base: str, token: str) -> None:
    """Shut the server down through its API (which stops its kernels, each in a session of
    its own), then kill whatever is left of the server's process group."""
    try:
        _api(f"{base}/api/shutdown?token={token}", method="POST")
        server.wait(timeout=15)
    except (urllib.error.URLError, OSError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(server.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    server.wait(timeout=10)


@pytest.fixture
def lab_server(tmp_path):
    """A JupyterLab server as ``make lab`` starts it; yields (base URL, token)."""
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("_build"))
    port, token = _free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    command = lab.lab_command(tmp_path / "book", [
        "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--LabApp.user_settings_dir={tmp_path / 'user-settings'}",
        f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
    ])
    env = lab.lab_environment()
    assert "DPKIT_WIDGET_MODE" not in env, "the lab's widgets must be live"
    env.update(PYTHONPATH=str(ROOT), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert server.poll() is None, f"the server exited:\n{log.read_text()[-3000:]}"
            try:
                _api(f"{base}/api/status?token={token}")
                break
            except (urllib.error.URLError, OSError):
                assert time.monotonic() < deadline, f"no server after {START_TIMEOUT} s"
                time.sleep(0.5)
        yield base, token
    finally:
        _stop(server, base, token)


ALL_PROMPTS_NUMBERED = """() => {
    const prompts = Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'));
    return prompts.length > 0 && prompts.every((p) => /\\[\\d+\\]/.test(p.textContent));
}"""
IMAGE_CHANGED = "([img, before]) => img.src !== before"
NO_RAW_MYST = """() => Array.from(document.querySelectorAll('.jp-MarkdownCell')).every(
    (c) => c.classList.contains('jp-mod-rendered') && c.innerText.trim() !== ''
           && !c.innerText.includes('```{') && !c.innerText.includes(':::{'))"""


def test_chapter_opens_as_notebook_runs_and_redraws_live(lab_server):
    base, token = lab_server
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab?token={token}")
            entry = page.locator(f".jp-DirListing-item[title*='{CHAPTER}.md']")
            entry.wait_for(timeout=60_000)
            entry.dblclick()

            # Opens as a notebook (the default viewer), not in the text editor.
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell, .jp-FileEditor", timeout=30_000)
            assert page.locator(".jp-FileEditor").count() == 0, "opened as a text file"
            # MyST directives and math render (jupyterlab-myst), no raw directive text.
            cells = page.locator(".jp-MarkdownCell")
            page.wait_for_selector(".jp-MarkdownCell .myst-admonition", timeout=30_000)
            assert page.locator(".jp-MarkdownCell .katex").count() > 0, "math not rendered"
            # Every Markdown cell is in the page (windowing is off in the shipped settings, so
            # no cell waits as an unrendered placeholder for the reader to scroll to it), and
            # jupyterlab-myst has rendered each one.
            expect(cells).to_have_count(MARKDOWN_CELLS, timeout=30_000)
            try:
                page.wait_for_function(NO_RAW_MYST, timeout=30_000)
            except PlaywrightTimeout:
                pass  # the assertion below names the cell that stayed raw
            for rendered, text in cells.evaluate_all(
                    "cells => cells.map((c) => [c.classList.contains('jp-mod-rendered'),"
                    " c.innerText])"):
                assert rendered and text.strip(), f"a Markdown cell is not rendered: {text[:200]}"
                assert "```{" not in text and ":::{" not in text, f"raw MyST: {text[:200]}"

            page.click(".lm-MenuBar-itemLabel:text-is('Run')")
            page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
            page.wait_for_function(ALL_PROMPTS_NUMBERED, timeout=60_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=30_000)
            bad = page.locator(
                ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            assert bad.count() == 0, f"a cell shows an error: {bad.first.inner_text()[:500]}"

            slider = page.locator(".jp-OutputArea .widget-slider").first
            slider.wait_for(timeout=10_000)
            # Live mode: the kernel redraws the figure into the same image element (a static
            # widget would swap in another, pre-rendered image instead).
            image = slider.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]"
                                   ).locator("img").first.element_handle()
            before = image.get_attribute("src")
            readout = slider.locator(".widget-readout").inner_text()
            handle = slider.locator(".noUi-handle")
            handle.scroll_into_view_if_needed()
            handle.focus()
            key = "ArrowLeft" if handle.get_attribute("aria-valuenow") == handle.get_attribute(
                "aria-valuemax") else "ArrowRight"
            page.keyboard.press(key)
            expect(slider.locator(".widget-readout")).not_to_have_text(readout)
            page.wait_for_function(IMAGE_CHANGED, arg=[image, before], timeout=30_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=30_000)
            assert bad.count() == 0, f"a cell shows an error: {bad.first.inner_text()[:500]}"
        finally:
            browser.close()
