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
import math
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
EXPONENTIAL = {edition: flat(BOOK / folder / "exponential_base2.md")
               for edition, folder in (("en", "."), ("zh", "zh"))}


def test_no_page_calls_an_overrun_harmless_because_counted() -> None:
    notes = " ".join((dpkit.timing.__doc__ or "").split())
    for text in (*PAGES.values(), notes):
        assert "(and is counted)" not in text and "（并被计数）" not in text
    assert "unless they overrun it" not in PAGES["en", "laplace"]
    assert "所以除非超过截止时间" not in PAGES["zh", "laplace"]
    for page in ("laplace", "performance"):
        assert "counting reports them, it does not prevent them" in PAGES["en", page]
        assert "统计只是报告超时，并不能阻止超时" in PAGES["zh", page]
    assert "counts them without preventing them" in notes
    assert "it does not prevent them" in " ".join(dpkit.timing.overruns.__doc__.split())


def test_the_overrun_delta_is_stated_once_with_its_factor_and_its_limits() -> None:
    """Review rev33b 1-4, rev33c 1-3, 7: δ = (1 + e^ε)·p, p over all inputs, with the proof, in
    the Laplace chapter; estimated, not proven; void under load the adversary controls; adding
    up over releases, outside dpkit's accounting; too large to be a DP guarantee (δ ≪ 1/n).
    The other places point to it instead of restating "a failure probability that plays the
    part of δ" (δ = p). The number at ε = 1 is (1 + e)·10**-3."""
    at_one = f"{(1 + math.e) * 1e-3:.1e}".replace("e-03", " \\cdot 10^{-3}")
    assert at_one == "3.7 \\cdot 10^{-3}"
    hundred = f"{100 * (1 + math.e) * 1e-3:.2f}"                 # k = 100 releases, ε = 1
    assert hundred == "0.37"
    assert f"({hundred} for 100 releases at $\\varepsilon = 1$ with $p = 10^{{-3}}$)" in (
        PAGES["en", "laplace"])
    assert f"100 次发布为 {hundred}" in PAGES["zh", "laplace"]
    notes = " ".join((dpkit.timing.__doc__ or "").split())
    for text in (*PAGES.values(), notes, EXPONENTIAL["en"]):
        assert "plays the part of" not in text and "起着 $\\delta$ 的作用" not in text
    en, zh = PAGES["en", "laplace"], PAGES["zh", "laplace"]
    for phrase in ("with $\\delta = (1 + e^{\\varepsilon})\\,p$", "bound, over *all* inputs",
                   "e^{\\varepsilon} (\\Pr[M(D') \\in S] + p) + p$", "It is estimated, not proven",
                   f"(${at_one}$ at $\\varepsilon = 1$)",
                   "whose load the adversary does not control",
                   "to at most $k(1 + e^{\\varepsilon})\\,p$", "accounting does not include them",
                   "much smaller than $1/n$", "a strong mitigation, not a proof",
                   "a bad event of probability $p$ always gives a valid $\\delta$",
                   "how much rarer has not been measured"):
        assert phrase in en, phrase
    for phrase in ("其中 $\\delta = (1 + e^{\\varepsilon})\\,p$", "对*所有*输入而言",
                   "它是估计出来的，没有证明",
                   f"（$\\varepsilon = 1$ 时为 ${at_one}$）", "攻击者控制不了机器负载",
                   "至多为 $k(1 + e^{\\varepsilon})\\,p$", "隐私核算并不包括它们", "远小于 $1/n$",
                   "有力的缓解措施，而不是证明", "概率为 $p$ 的坏事件总能给出一个有效的 $\\delta$",
                   "能少多少没有测量过"):
        assert phrase in zh, phrase
    for edition in ("en", "zh"):
        assert "(1 + e^{\\varepsilon})\\,p)$" in PAGES[edition, "performance"]
        assert "{ref}`laplace-timing`" in EXPONENTIAL[edition]
    assert "pure $\\varepsilon$-DP for its output" in EXPONENTIAL["en"]
    assert "no failure" not in EXPONENTIAL["en"] and "没有失败" not in EXPONENTIAL["zh"]
    assert "Here $p$ covers the fallback only" in EXPONENTIAL["en"]
    assert "Here $p$ covers the fallback only" in PAGES["en", "performance"]
    assert "这里的 $p$ 只涵盖回退路径" in EXPONENTIAL["zh"]
    assert "这里的 $p$ 只涵盖回退路径" in PAGES["zh", "performance"]
    assert "(ε, (1 + e^ε)·p)-DP, p the largest overrun probability over all inputs" in notes
    margin_doc = " ".join(dpkit.timing.set_margin.__doc__.split())
    assert "of the slowest input of one value" in margin_doc and "no bound for other" in margin_doc


def test_the_audit_guesser_threshold_is_compared_with_what_epsilon_allows() -> None:
    """Review rev33c 13: ε = 0.05 allows a guesser e**0.05/(1 + e**0.05) = 51.25%."""
    allowed = f"{100 * math.exp(0.05) / (1 + math.exp(0.05)):.2f}%"
    assert allowed == "51.25%"
    for edition in ("en", "zh"):
        assert f"{allowed}" in PAGES[edition, "performance"]


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
