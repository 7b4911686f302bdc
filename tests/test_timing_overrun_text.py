"""What the timing text says about overruns and the constants (review rev33a).

An overrun is a failure of the timing guarantee, not harmless because dpkit counts it: whether a
release overruns can depend on its input, so the time can reveal something with a probability
that plays the part of δ (Ratliff & Vadhan 2024); counting reports overruns, it does not prevent
them. The constants of ``choose_clip_bound`` and ``auto_avg`` follow the same rule as the scalar
ones since a5d3c94. The appendix's cost table names the commits its runs predate, and describes
the accumulated store's per-row hash (bc3c311). These tests hold both editions, the module notes
and the committed results to that.

Deterministic: reads files, and git for the order of commits (skipped without the history).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import dpkit.timing

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
RESULTS = ROOT / "benchmarks" / "results"


def flat(path: Path) -> str:
    """A file's text, each run of white space one space."""
    return " ".join(path.read_text(encoding="utf-8").split())


PAGES = {(edition, page): flat(BOOK / folder / f"{page}.md")
         for edition, folder in (("en", "."), ("zh", "zh"))
         for page in ("laplace", "performance")}


def test_no_page_calls_an_overrun_harmless_because_counted() -> None:
    notes = " ".join((dpkit.timing.__doc__ or "").split())
    for text in (*PAGES.values(), notes):
        assert "(and is counted)" not in text and "（并被计数）" not in text
    assert "unless they overrun it" not in PAGES["en", "laplace"]
    assert "所以除非超过截止时间" not in PAGES["zh", "laplace"]
    for page in ("laplace", "performance"):
        assert "counting reports them, it does not prevent them" in PAGES["en", page]
        assert "plays the part of $\\delta$" in PAGES["en", page]
        assert "统计只是报告超时，并不能阻止超时" in PAGES["zh", page]
        assert "起着 $\\delta$ 的作用" in PAGES["zh", page]
    assert "a failure probability that plays the part of δ" in notes
    assert "it does not prevent them" in " ".join(dpkit.timing.overruns.__doc__.split())


def test_the_clipping_constants_follow_the_scalar_rule_and_the_text_says_so() -> None:
    clipping = flat(ROOT / "dpkit" / "svt" / "clipping.py")
    assert ("the allowance covers the #: slowest input's median, and the margin of 2 its 99.9th "
            "percentile") in clipping
    assert ("and for the sparse-vector chapter's clipping functions (`choose_clip_bound`, "
            "`auto_avg`), the constants cover at least the median work") in PAGES["en", "laplace"]
    assert ("and for `choose_clip_bound` and `auto_avg`, they cover at least the median work"
            in PAGES["en", "performance"])
    assert "裁剪函数（`choose_clip_bound`、`auto_avg`），开销常数至少覆盖" in PAGES["zh", "laplace"]
    assert ("以及对 `choose_clip_bound` 和 `auto_avg`，这些常数至少覆盖"
            in PAGES["zh", "performance"])
    notes = " ".join((dpkit.timing.__doc__ or "").split())
    assert ("and those of :func:`dpkit.svt.choose_clip_bound` and :func:`dpkit.svt.auto_avg` "
            "cover at least the median cost") in notes


def is_ancestor(older: str, newer: str) -> bool:
    """Whether commit ``older`` is an ancestor of ``newer`` (skip without the history)."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", older,
                               newer], capture_output=True, text=True)
    except OSError:
        pytest.skip("no git")
    if done.returncode not in (0, 1):
        pytest.skip(f"git history does not reach {older} or {newer}")
    return done.returncode == 0


def test_the_commits_the_cost_table_names() -> None:
    assert ("The after-run predates commits 3786e22 and bfdd5bb, which raised the scalar "
            "releases' cost constants, and a5d3c94, which lowered those of `choose_clip_bound` "
            "and `auto_avg`; the accumulated run is on code after the first two"
            in PAGES["en", "performance"])
    assert "修复之后的那次运行早于提交 3786e22 和 bfdd5bb" in PAGES["zh", "performance"]
    assert ("An earlier accumulated run, on code older than commit 3786e22"
            in PAGES["en", "performance"])
    after = json.loads((RESULTS / "timing.json").read_text())["meta"]["dpkit_commit"]
    accumulated = json.loads((RESULTS / "timing_accumulated.json").read_text())["meta"]
    for commit in ("3786e22", "bfdd5bb", "a5d3c94"):
        assert is_ancestor(after, commit), f"the after-run ({after}) does not predate {commit}"
    for commit in ("3786e22", "bfdd5bb"):
        assert is_ancestor(commit, accumulated["dpkit_commit"])
    assert is_ancestor("453bab6", "3786e22")      # the store that listed two scalar rows LEAK


def test_the_store_is_described_per_row() -> None:
    script = flat(ROOT / "benchmarks" / "timing_accumulate.py")
    assert "a hash of the code (docstrings and comments left out) of the dpkit modules" in script
    assert "a change to a module the row's function does not import keeps its calls" in script
    assert ("timings under a hash of the code (docstrings and comments left out) of the dpkit "
            "modules that the row's release function imports" in PAGES["en", "performance"])
    assert ("a change to a module the function does not import keeps its calls"
            in PAGES["en", "performance"])
    assert "改动的模块若不在该函数导入之列，该行的调用就得以保留" in PAGES["zh", "performance"]
