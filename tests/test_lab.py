"""The lab (``python -m dpkit.course lab``, ``make lab``): its files, and a real JupyterLab.

Without a browser: every chapter, read by the lab's contents manager as JupyterLab reads it
and saved back as JupyterLab saves it, keeps its bytes, and comes with the kernelspec and
``language_info`` a real kernel reports, so that JupyterLab has nothing to change on opening
it; the student and instructor labs differ only in nbgrader's instructor parts.

In a real browser (Debian's chromium, driven by playwright): the server starts as
``python -m dpkit.course.lab FOLDER`` does, plus ``--no-browser``, a free loopback port and a
token, on a copy of the repository's ``book/`` (so that an autosave cannot rewrite the
sources) beside the student notebooks and a released assignment, with empty user settings
and workspaces (so that nothing a person did in their own JupyterLab can open the chapter
for us). Then, as a student would: double-click the first chapter in the file browser,
see it open as a notebook with its MyST directives and math rendered and not marked as
modified, run all cells from the Run menu, wait for the kernel, move the live slider, see
the figure change with no error or stderr output in any cell, save, and find the chapter's
file unchanged; open the student notebook and the assignment; find only the Assignment List
in the Nbgrader menu. The instructor's lab has the Formgrader. Servers and kernels are
stopped in a ``finally``.
"""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import jupytext
import pytest
from jupyter_client.manager import start_new_kernel
from test_browser import CHROMIUM, LAUNCH_ARGS, _require, nudge

from dpkit.course import lab
from dpkit.course.notebooks import export

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "book").glob("*.md"))
# The first chapter: a short one whose live widget is a slider over ε and a figure.
CHAPTER = "intro"
START_TIMEOUT = 60.0
STUDENT_NOTEBOOK = f"_build/notebooks/student/{CHAPTER}.ipynb"
ASSIGNMENT = f"_build/course/release/{CHAPTER}/{CHAPTER}.ipynb"
NBGRADER_INSTRUCTOR = ["Course List", "Formgrader", "Create assignment"]

MARKDOWN_CELLS = sum(cell.cell_type == "markdown"
                     for cell in jupytext.read(ROOT / "book" / f"{CHAPTER}.md").cells)


@pytest.fixture(scope="module")
def kernel_metadata():
    """What JupyterLab sets once the kernel of the chapters (python3) is up: the kernelspec
    from the kernel spec, and the language_info a real kernel reports."""
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        info = client.kernel_info(reply=True, timeout=30)["content"]["language_info"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    spec = manager.kernel_spec
    return {"name": "python3", "display_name": spec.display_name,
            "language": spec.language}, info


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_a_chapter_opens_unchanged_and_saves_to_the_same_bytes(tmp_path, chapter,
                                                               kernel_metadata):
    (tmp_path / "book").mkdir()
    shutil.copy(chapter, tmp_path / "book")
    path = f"book/{chapter.name}"
    manager = lab.ChapterContentsManager(root_dir=str(tmp_path))
    model = manager.get(path, content=True, type="notebook")
    kernelspec, language_info = kernel_metadata
    metadata = model["content"]["metadata"]
    # JupyterLab would set exactly these once the kernel starts: nothing to mark modified.
    assert metadata["kernelspec"] == kernelspec
    assert metadata["language_info"] == language_info
    # What the browser receives and sends back on save: JSON.
    sent = json.loads(json.dumps(model["content"]))
    manager.save({"type": "notebook", "format": "json", "content": sent}, path)
    assert (tmp_path / path).read_bytes() == chapter.read_bytes(), f"{path} was rewritten"


def test_the_student_lab_leaves_out_nbgrader_instructor_parts():
    settings = lab.settings_dir()
    student = lab.lab_environment(environ={"DPKIT_WIDGET_MODE": "static",
                                           "JUPYTER_CONFIG_PATH": "/elsewhere"})
    assert "DPKIT_WIDGET_MODE" not in student, "the lab's widgets must be live"
    assert student["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [str(settings / "student"),
                                                                "/elsewhere"]
    assert student["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT), "kernels import this dpkit"
    instructor = lab.lab_environment(instructor=True, environ={})
    assert "JUPYTER_CONFIG_PATH" not in instructor

    page = json.loads((settings / "student" / "labconfig" / "page_config.json").read_text())
    assert sorted(page["disabledExtensions"]) == [
        "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:create-assignment",
        "@jupyter/nbgrader:formgrader"]
    server = json.loads((settings / "student" / "jupyter_server_config.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"] == {
        "nbgrader.server_extensions.formgrader": False,
        "nbgrader.server_extensions.course_list": False}

    arguments = lab.lab_arguments(ROOT, ["--port=9999"])
    assert "--ServerApp.contents_manager_class=dpkit.course.lab.ChapterContentsManager" \
        in arguments
    assert "--ContentsManager.preferred_dir=book" in arguments
    assert arguments[-1] == "--port=9999"


def test_a_folder_that_does_not_exist_is_a_message_and_exit_code_2(tmp_path):
    missing = tmp_path / "no-such-folder"
    result = subprocess.run([sys.executable, "-m", "dpkit.course.lab", str(missing)],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert str(missing) in result.stderr and "Traceback" not in result.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api(url: str, method: str = "GET") -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=10) as r:
        return r.read()


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


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


@pytest.fixture(scope="module")
def course_folder(tmp_path_factory):
    """A copy of the chapters, beside the student notebooks (``make notebooks``) and, as
    ``make assignments`` would release it, the first chapter's assignment (here the student
    notebook stands in for nbgrader's copy: the lab serves any notebook there alike)."""
    folder = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "book", folder / "book", ignore=shutil.ignore_patterns("_build"))
    export(ROOT / "book", folder / "_build" / "notebooks")
    (folder / ASSIGNMENT).parent.mkdir(parents=True)
    shutil.copy(folder / STUDENT_NOTEBOOK, folder / ASSIGNMENT)
    return folder


def _lab_server(folder: Path, tmp_path: Path, *options: str):
    """A lab server as ``python -m dpkit.course lab FOLDER`` starts it; yields (base URL,
    token)."""
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    port, token = _free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "dpkit.course.lab", str(folder), *options,
               "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--LabApp.user_settings_dir={tmp_path / 'user-settings'}",
               f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}"]
    env = dict(os.environ, DPKIT_WIDGET_MODE="static", PYTHONPATH=str(ROOT),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
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


@pytest.fixture(scope="module")
def student_lab(course_folder, tmp_path_factory):
    yield from _lab_server(course_folder, tmp_path_factory.mktemp("student"))


@pytest.fixture(scope="module")
def instructor_lab(course_folder, tmp_path_factory):
    yield from _lab_server(course_folder, tmp_path_factory.mktemp("instructor"), "--instructor")


@pytest.fixture(scope="module")
def browser():
    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield launched
        launched.close()


ALL_PROMPTS_NUMBERED = """() => {
    const prompts = Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'));
    return prompts.length > 0 && prompts.every((p) => /\\[\\d+\\]/.test(p.textContent));
}"""
IMAGE_CHANGED = """([box, before]) => {
    const img = box.querySelector('img');
    return img !== null && img.src !== before;
}"""
NO_RAW_MYST = """() => Array.from(document.querySelectorAll('.jp-MarkdownCell')).every(
    (c) => c.classList.contains('jp-mod-rendered') && c.innerText.trim() !== ''
           && !c.innerText.includes('```{') && !c.innerText.includes(':::{'))"""
KERNEL_IDLE = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
MODIFIED_TAB = ".lm-TabBar-tab.jp-mod-current.jp-mod-dirty"


def _open(page, base: str, token: str, notebook: str) -> None:
    """Open ``notebook`` by its address and wait until it shows as a rendered notebook."""
    from playwright.sync_api import expect

    page.goto(f"{base}/lab/tree/{notebook}?token={token}")
    current = page.locator(".jp-NotebookPanel:visible")
    expect(page.locator(".lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel").first
           ).to_have_text(Path(notebook).name, timeout=60_000)
    current.locator(".jp-MarkdownCell.jp-mod-rendered").first.wait_for(timeout=60_000)


def _nbgrader_menu(page) -> list[str]:
    """The visible items of the Nbgrader menu."""
    page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    items = page.locator(".lm-Menu-content .lm-Menu-item").evaluate_all(
        "items => items.filter((i) => getComputedStyle(i).display !== 'none')"
        ".map((i) => i.querySelector('.lm-Menu-itemLabel').innerText.trim())")
    page.keyboard.press("Escape")
    return items


@pytest.mark.browser
def test_chapter_opens_as_notebook_runs_redraws_live_and_saves_unchanged(
        browser, student_lab, course_folder):
    base, token = student_lab
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    source = course_folder / "book" / f"{CHAPTER}.md"
    before = source.read_bytes()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{base}/lab?token={token}")
        # The file browser opens in book/.
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
        # Opened, its kernel up: not modified.
        page.wait_for_selector(KERNEL_IDLE, timeout=30_000)
        assert page.locator(MODIFIED_TAB).count() == 0, "opening the chapter modified it"

        page.click(".lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
        page.wait_for_function(ALL_PROMPTS_NUMBERED, timeout=60_000)
        page.wait_for_selector(KERNEL_IDLE, timeout=30_000)
        bad = page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        assert bad.count() == 0, f"a cell shows an error: {bad.first.inner_text()[:500]}"

        slider = page.locator(".jp-OutputArea .widget-slider").first
        slider.wait_for(timeout=10_000)
        # Live mode: the kernel redraws the figure, so the widget's one frame (an <img> in an
        # HTML widget, replaced on each redraw) shows a new image. A static widget would
        # switch to another pre-rendered frame instead, leaving its first <img> as it was.
        box = slider.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")
        before_src = box.locator("img").first.get_attribute("src")
        readout = nudge(page, slider)
        expect(slider.locator(".widget-readout")).not_to_have_text(readout)
        page.wait_for_function(IMAGE_CHANGED, arg=[box.element_handle(), before_src],
                               timeout=30_000)
        page.wait_for_selector(KERNEL_IDLE, timeout=30_000)
        assert bad.count() == 0, f"a cell shows an error: {bad.first.inner_text()[:500]}"

        # Saved after running: the outputs are not part of the chapter, the bytes are.
        page.click(".lm-MenuBar-itemLabel:text-is('File')")
        page.click(".lm-Menu-item[data-command='docmanager:save']")
        expect(page.locator(MODIFIED_TAB)).to_have_count(0, timeout=30_000)
        assert source.read_bytes() == before, "saving the chapter rewrote it"
    finally:
        page.close()


@pytest.mark.browser
def test_student_lab_opens_the_notebooks_and_assignments_without_instructor_tools(
        browser, student_lab):
    base, token = student_lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        for notebook in (STUDENT_NOTEBOOK, ASSIGNMENT):
            _open(page, base, token, notebook)
        assert _nbgrader_menu(page) == ["Assignment List"]
        assert page.get_by_text("Create Assignment", exact=True).count() == 0
        assert _status(f"{base}/formgrader?token={token}") == 404
    finally:
        page.close()


@pytest.mark.browser
def test_instructor_lab_has_nbgrader_whole(browser, instructor_lab):
    base, token = instructor_lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open(page, base, token, ASSIGNMENT)
        assert _nbgrader_menu(page) == ["Assignment List", *NBGRADER_INSTRUCTOR]
        assert _status(f"{base}/formgrader?token={token}") == 200
    finally:
        page.close()
