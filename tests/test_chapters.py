"""Every chapter executes top to bottom, as the book build runs it (static widgets).

Each chapter is its own test, so a failing chapter names itself; the failing cell's
traceback is in the report. Durations are printed (no timing asserts: see benchmarks/).
"""

import os
import time
from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.chapter
ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted(p for p in (ROOT / "book").glob("*.md")
                  if p.read_text().startswith("---\njupytext"))


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_executes(path, monkeypatch):
    monkeypatch.setenv("DPKIT_WIDGET_MODE", "static")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    notebook = jupytext.read(path)
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    print(f"{path.stem}: executed in {elapsed:.1f} s")
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, f"{path.stem}: {errors[0]['ename']}: {errors[0]['evalue']}"
    stderr = [o["text"] for c in notebook.cells if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert not stderr or os.environ.get("DPKIT_ALLOW_STDERR"), \
        f"{path.stem}: writes to stderr (a warning in the book): {stderr[0][:300]}"
