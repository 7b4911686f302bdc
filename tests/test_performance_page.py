"""The committed peer-comparison results have the format book/performance.md reads.

``benchmarks/peers/run.py`` (``make bench-peers``) writes ``benchmarks/results/peers.json``;
the appendix "How fast is exact?" renders it. A future run that changes the format, drops a
table the page shows or a column it reads by name, fails here rather than in the book build.
No timing is asserted: the numbers are whatever the committed run measured.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from datetime import datetime
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "peers.json"
PAGE = ROOT / "book" / "performance.md"
RUN = ROOT / "benchmarks" / "peers" / "run.py"

RATIO = "× dpkit's time (higher = slower)"
#: Tables the page shows, and the columns it looks up by name.
PAGE_COLUMNS = {
    "laplace": {"implementation", RATIO, "ms per vector (best)", "ms per vector (median)"},
    "gaussian": {"implementation", RATIO, "ms per vector (best)", "ms per vector (median)"},
    "scalar": {"release", "µs per call (best)", "µs per call (median)"},
    "discrete_gaussian": {"implementation", "σ", RATIO, "samples per second"},
    "discrete_gaussian_bits": {"sampler", "σ", "entropy (bits)", "bits per sample",
                               "bits above entropy"},
    "selection": {"implementation", RATIO, "ε"},
    "analytic_sigma": {"implementation", RATIO, "σ at ε = 1"},
    "composition": {"implementation", RATIO, "ε certified", "ε − ε*", "exact δ at that ε",
                    "certifies δ = 1e-06?"},
    "ceiling": {"dpkit release", "bits per sample read", "ms reading those bytes",
                "share of the time"},
}
#: Optional: present only when benchmarks/bits.py existed at the run.
OPTIONAL_COLUMNS = {"dpkit_bits": {"sampler", "scale", "entropy (bits)", "bits per sample"}}
PEERS = ("dpkit", "opendp", "dp-accounting", "diffprivlib", "tmlt.core", "numpy")


@pytest.fixture(scope="module")
def results() -> dict:
    return json.loads(RESULTS.read_text())


def test_header_has_date_machine_versions(results: dict) -> None:
    datetime.strptime(results["date"], "%Y-%m-%d %H:%M UTC")
    assert {"cpu", "cores", "os", "python"} <= results["machine"].keys()
    assert results["machine"]["cpu"] and results["machine"]["cores"] >= 1
    for name in PEERS:
        assert results["versions"].get(name), f"no version recorded for {name}"
    assert isinstance(results["repeats"], int) and results["repeats"] >= 1
    assert results["timer"]
    assert results["os_random_bytes_per_second"] > 0
    assert results["os_random_bytes_per_second_1mib"] > 0
    for moment in ("start", "end"):
        assert len(results["load_average"][moment]) == 3, moment


def test_every_table_is_well_formed(results: dict) -> None:
    ids = [table["id"] for table in results["tables"]]
    assert len(ids) == len(set(ids)), f"repeated table ids: {ids}"
    for table in results["tables"]:
        assert {"id", "title", "columns", "rows", "skipped", "note"} <= table.keys()
        assert table["title"] and table["note"], table["id"]
        assert table["rows"], f"table {table['id']} is empty"
        for row in table["rows"]:
            assert len(row) == len(table["columns"]), (table["id"], row)
        for skipped in table["skipped"]:
            assert skipped["implementation"] and skipped["reason"]


def test_tables_and_columns_the_page_reads(results: dict) -> None:
    tables = {table["id"]: table for table in results["tables"]}
    for key, columns in PAGE_COLUMNS.items():
        assert key in tables, f"the page shows table {key!r}, missing from the results"
        assert columns <= set(tables[key]["columns"]), (key, tables[key]["columns"])
    for key, columns in OPTIONAL_COLUMNS.items():
        if key in tables:
            assert columns <= set(tables[key]["columns"]), (key, tables[key]["columns"])
    for key in ("laplace", "gaussian"):
        assert tables[key]["length"] >= 1 and isinstance(tables[key]["grid_exponent"], int)
    assert tables["gaussian"]["sigma"] > 0 and tables["laplace"]["scale"] > 0
    composition = tables["composition"]
    assert composition["exact_optimum"] > 0 and composition["basic_composition"] > 0
    # dpkit is measured in every table that compares implementations.
    for key in ("laplace", "gaussian", "discrete_gaussian", "selection", "analytic_sigma",
                "composition"):
        assert any(str(row[0]).startswith("dpkit") for row in tables[key]["rows"]), key


def test_page_shows_only_known_tables() -> None:
    shown = set(re.findall(r'show\("([a-z_]+)"\)', PAGE.read_text()))
    assert shown, "the page shows no table"
    assert shown <= PAGE_COLUMNS.keys() | OPTIONAL_COLUMNS.keys(), shown


def load_run():
    spec = importlib.util.spec_from_file_location("bench_peers_run", RUN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bits_table_from_benchmarks_bits_interface(tmp_path: Path, monkeypatch) -> None:
    """run.py turns benchmarks/bits.py's ``table()`` rows into the page's ``dpkit_bits``."""
    run = load_run()
    stub = tmp_path / "bits.py"
    stub.write_text('def table():\n    return [{"sampler": "discrete Laplace", "scale": 2, '
                    '"entropy_bits": 3.0, "bits_per_sample": 11.5}]\n')
    monkeypatch.setattr(run, "BITS_SCRIPT", stub)
    table = run.dpkit_bits_table()
    assert table["id"] == "dpkit_bits"
    assert OPTIONAL_COLUMNS["dpkit_bits"] <= set(table["columns"])
    assert table["rows"] == [["discrete Laplace", 2.0, 3.0, 11.5, 8.5]]


def test_bits_table_skipped_when_script_missing(capsys, monkeypatch) -> None:
    run = load_run()
    monkeypatch.setattr(run, "BITS_SCRIPT", run.ROOT / "benchmarks" / "no_such_bits.py")
    assert run.dpkit_bits_table() is None
    assert "skipped" in capsys.readouterr().out


def test_bits_table_failure_does_not_end_the_run(tmp_path: Path, capsys, monkeypatch) -> None:
    run = load_run()
    stub = tmp_path / "bits.py"
    stub.write_text("def table():\n    raise RuntimeError('broken sampler')\n")
    monkeypatch.setattr(run, "BITS_SCRIPT", stub)
    assert run.dpkit_bits_table() is None
    assert "not measured: RuntimeError: broken sampler" in capsys.readouterr().out


def test_exact_profile_matches_closed_forms() -> None:
    """The exact δ(ε') that decides "certifies δ?" in table (f), on cases solvable by hand.

    k = 1: δ(ε') = (e^{ε0} − e^{ε'})₊ / (1 + e^{ε0}); k = 2, ε' = 0: (e^{ε0} − 1)/(e^{ε0} + 1).
    """
    run = load_run()
    e0 = 0.5
    one = run.ExactProfile(e0, 1)
    for total in (0.0, 0.2, 0.49):
        expected = (math.exp(e0) - math.exp(total)) / (1 + math.exp(e0))
        assert one.delta(total) == pytest.approx(expected, rel=1e-12)
    assert one.delta(0.5) == 0.0 and one.delta(0.7) == 0.0
    two = run.ExactProfile(e0, 2)
    assert two.delta(0.0) == pytest.approx(math.expm1(e0) / (math.exp(e0) + 1), rel=1e-12)
    target = 0.1
    star = one.optimum(target, 0.0, e0)
    assert one.delta(star) <= target < one.delta(np.nextafter(star, 0.0))
    assert star == pytest.approx(math.log(math.exp(e0) - target * (1 + math.exp(e0))),
                                 rel=1e-12)


def test_results_are_found_from_any_working_directory(tmp_path: Path, monkeypatch) -> None:
    """The page runs as a notebook from anywhere (nbconvert executes it in the notebook's
    folder): its ``find_results`` falls back on the clone of the installed dpkit."""
    source = PAGE.read_text()
    start = source.index("def find_results(")
    code = source[start:source.index("\n\n\n", start)]
    namespace: dict = {"Path": Path}
    exec(code, namespace)   # the page's own function, read from the repository
    monkeypatch.chdir(tmp_path)
    found = namespace["find_results"]()
    assert found.is_file() and found.parts[-3:] == RESULTS.parts[-3:]


def test_every_row_the_audit_left_open_was_rerun_and_passes():
    """performance.md says every row rerun in the follow-up passes: each row of the committed
    audit (``timing.json``) that did not pass has a rerun in ``timing_followup.md``, with at
    least as many calls per side, and every rerun passes."""
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    audit = json.loads((results / "timing.json").read_text())["rows"]
    page = (results / "timing_followup.md").read_text()
    cells = [line.strip(" |").split(" | ") for line in page.splitlines()
             if line.startswith("| ") and not line.startswith(("| function", "|---"))]
    reruns = {(c[0], c[1], c[2].removesuffix(" [review]")): (int(c[3]), c[-1]) for c in cells}
    open_rows = [row for row in audit if row["verdict"] != "pass"]
    assert reruns and all(verdict == "pass" for _, verdict in reruns.values()), reruns
    for row in open_rows:
        calls, _ = reruns[(row["function"], row["size"], row["pair"])]
        assert calls >= row["calls"], row


def test_page_prints_powers_readably(monkeypatch, capsys) -> None:
    """What the appendix shows (printed lines, table notes, cells) writes powers as 2⁻³⁷, not
    as the plain text ``2^-37`` of the results file: every code cell of the page is run, its
    ``display`` calls and printed output collected."""
    import IPython.display
    import jupytext

    shown: list = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects, **_: shown.extend(objects))
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for cell in jupytext.read(PAGE).cells:
        if cell.cell_type == "code":
            exec(cell.source, namespace)  # the page's own code, as the book build runs it
    text = capsys.readouterr().out + "".join(
        str(getattr(item, "data", "")) + (item.to_html() if hasattr(item, "to_html") else "")
        for item in shown)
    plain = re.findall(r".{30}\d\^[-\w].{10}", text)
    assert not plain, f"powers printed as plain text: {plain[:3]}"
    assert len(shown) >= 10 and "2⁻³⁷" in text and "2ᵏ" in text, text[:500]



ENGLISH_LINES = ("Committed results of one run", "Takeaway:", "One value at σ = 1",
                 "OpenDP's Laplace measurement certified", "Laplace release of",
                 "Laplace: dpkit's exact release", "OpenDP's Gaussian measurement, given",
                 "Laplace, vector of the same length", "proposals. A proposal's trials",
                 "Figure: dpkit's vector samplers", "One scalar Laplace release took",
                 "before: dpkit at", "pairs timed in both runs", "After the fix,",
                 "In the after-run,", "dpkit's draw took", "The deadline of that selection",
                 "Exact optimum ε*", "dpkit's secure source (ChaCha20)")
CHINESE_LINES = ("已提交的 benchmarks/peers/run.py", "要点：", "每秒发布约 160 万个值",
                 "σ = 1 时的单个值", "OpenDP 的拉普拉斯测量", "的拉普拉斯发布",
                 "拉普拉斯：dpkit 的精确发布", "OpenDP 的高斯测量", "拉普拉斯，同样长度的向量",
                 "一轮 97 个提议。一个提议的试验", "图：dpkit 的向量采样器", "一次标量拉普拉斯发布",
                 "之前：dpkit 版本", "在两次运行都计时的", "修复之后，", "在修复之后的运行中",
                 "dpkit 的抽样用了", "那次选择（", "精确最优值 ε*", "dpkit 的安全随机源")


@pytest.mark.parametrize(("language", "expected", "foreign"), [
    ("en", ENGLISH_LINES, ("要点：", "拉普拉斯")),
    ("zh", CHINESE_LINES, ENGLISH_LINES)])
def test_summary_lines_follow_the_edition(monkeypatch, capsys, language: str,
                                          expected: tuple, foreign: tuple) -> None:
    """The page's code cells are the same in both editions: the run's header, the takeaway
    (160 万, not 1.6 百万, in zh), the ratios after tables (a) and (b), OpenDP's
    certificates, the time of reading the random bytes, the rounds of the fixed-cost
    sampler, the releases' entropies, the figure's summary, the scalar release, the timing
    audit's runs and rows, the selection's deadline, the composition's sentence and the
    source's rate are printed in the language of the edition (:func:`dpkit.i18n.language`),
    so the zh page does not print them in English. The figure's labels and the tables
    (titles and notes from the results file) stay in English."""
    import IPython.display
    import jupytext

    from dpkit.i18n import in_language

    monkeypatch.setattr(IPython.display, "display", lambda *objects, **_: None)
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    with in_language(language):
        for cell in jupytext.read(PAGE).cells:
            if cell.cell_type == "code":
                exec(cell.source, namespace)  # the page's own code, as the book build runs it
    text = capsys.readouterr().out.replace("\n", " ")
    assert all(phrase in text for phrase in expected), text[:500]
    assert not any(phrase in text for phrase in foreign), text[:500]

def _pins(path: Path) -> dict[str, str]:
    """``{name: version}`` of the ``name==version`` lines of a requirements file."""
    pins = {}
    for line in path.read_text().splitlines():
        name, sep, version = line.split("#")[0].strip().partition("==")
        if sep:
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_peers_lock_pins_what_dpkit_imports() -> None:
    """``make bench-peers`` installs its lock with ``--no-deps`` and runs the working tree's
    dpkit: every core dependency of dpkit (pyproject's ``dependencies``), and what those
    need at run time, must be in the lock at the book's version, or the run fails to import
    dpkit (as it did when ``cryptography`` became a core dependency)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {name.lower() for name in project["dependencies"]}
    needed = core | {"cffi", "pycparser"}     # cryptography's run-time dependencies
    root = _pins(ROOT / "requirements.txt")
    peers = _pins(ROOT / "benchmarks" / "peers" / "requirements.txt")
    missing = sorted(needed - peers.keys())
    assert not missing, f"benchmarks/peers/requirements.txt lacks {missing}"
    differ = {n: (peers[n], root[n]) for n in needed if n in root and peers[n] != root[n]}
    assert not differ, f"peers' pins differ from requirements.txt: {differ}"


def test_page_acceptance_is_the_closed_form(monkeypatch, capsys) -> None:
    """The page's ``acceptance`` (Poisson summation) is CKS Algorithm 3's exact acceptance:
    at σ = 1 and t = 1 it is the direct sum ``tanh(1/2)·e^(-1/2)·Σ_{|y|<=40} e^(-y²/2)`` =
    0.70257839, which the lower bound ``1 - rejection_bound`` equals to 8 digits; with
    ``c = (1 - e^(-1/t))/2``, ``t = floor(σ) + 1`` it gives the rates test_breaker35
    asserts (0.435 at σ = 1, 0.641 at σ² = 10); and one value at σ = 1 costs 80/0.7026 =
    113.9 bits and 1.42 rounds, as the page prints (1/0.70 would give 1.43)."""
    import IPython.display
    import jupytext

    from dpkit._samplers.interval_gaussian import rejection_bound

    monkeypatch.setattr(IPython.display, "display", lambda *objects, **_: None)
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for cell in jupytext.read(PAGE).cells:
        if cell.cell_type == "code":
            exec(cell.source, namespace)  # the page's own code, as the book build runs it
    capsys.readouterr()
    acceptance = namespace["acceptance"]
    direct = math.tanh(0.5) * math.exp(-0.5) * sum(math.exp(-y * y / 2) for y in range(-40, 41))
    assert acceptance(1.0, 1.0, math.tanh(0.5)) == pytest.approx(direct, rel=1e-12)
    assert round(direct, 8) == 0.70257839
    assert round(1 - float(rejection_bound(Fraction(1), Fraction(1))), 8) == 0.70257839
    assert namespace["accept"] == pytest.approx(direct, rel=1e-12)
    for sigma2, rate in ((1, 0.435), (10, 0.641)):
        t = math.isqrt(sigma2) + 1
        assert round(acceptance(sigma2, t, (1 - math.exp(-1 / t)) / 2), 3) == rate
    assert f"{1 / namespace['accept']:.2f}" == "1.42"


def test_acceptance_display_follows_from_the_stated_laws() -> None:
    """Both editions state the proposal's law ``c·e^(-|y|/t)`` (``-0`` a rejected proposal)
    and the display ``q = c·e^(-σ²/(2t²))·Σ_y e^(-y²/(2σ²))``, with ``c = (1 - e^(-1/t))/2``,
    ``t = floor(σ) + 1`` for 2 to 64 values and ``c = tanh(1/(2t))`` for one value (t = 1
    at σ = 1); those give the printed 0.435 and 0.703 by direct sums. Putting the discrete
    Laplace's mass at 0, ``tanh(1/4)``, into the first sampler's display would give 0.542,
    not 0.435 (review rev45, item 1). Fails before that review, whose display read ``P[Y =
    0]`` with two values."""
    def q(sigma: float, t: float, c: float) -> float:
        return c * math.exp(-sigma**2 / (2 * t * t)) * sum(
            math.exp(-y * y / (2 * sigma**2)) for y in range(-60, 61))

    assert round(q(1, 2, (1 - math.exp(-1 / 2)) / 2), 3) == 0.435
    assert round(q(1, 1, math.tanh(1 / 2)), 3) == 0.703
    assert round(q(1, 2, math.tanh(1 / 4)), 3) == 0.542
    for page in (PAGE, ROOT / "book" / "zh" / "performance.md"):
        text = page.read_text()
        assert "P[Y = 0]" not in text, page
        assert "q = c\\; e^{-\\sigma^2/(2t^2)} \\sum_y e^{-y^2/(2\\sigma^2)}" in text, page
        for stated in ("c\\,e^{-|y|/t}", "c = (1 - e^{-1/t})/2", "t = \\lfloor\\sigma\\rfloor + 1",
                       "c = \\tanh(1/(2t))", "e^{-\\gamma(y)}"):
            assert stated in text, (page, stated)


#: Printed lines of the appendix's sampler cells, pinned (whitespace collapsed): the table of
#: the rounds of the requests of 64 values (a round's bits from the plans, the run's bits,
#: the rounds, the acceptance and the chance of one round: review rev45, item 13), one value
#: at the mechanism's σ, OpenDP's allowance, and the entropy line's conclusion over (c″)'s
#: scales from 10**6 (review rev45, item 11).
PINNED = (
    "Requests of 64 values, a round of 97 proposals. A proposal's trials: the geometric's "
    "digits (G digits) and its tail trial, floor(E)'s 7 digits and its tail trial, E's 40 "
    "fractional digits.",
    "σ t G digits trials bits a round bits read rounds q one round "
    "1 2 8 57 5,541.125 11,082.250 2.00 0.435 6.9 × 10⁻⁶ "
    "100 101 13 62 6,026.125 6,026.125 1.00 0.756 0.988 "
    "10,000 10001 20 69 6,705.125 6,705.125 1.00 0.760 0.991",
    "a round reads 80 bits (t = 1) and accepts with probability 0.703 (the sampler of 2 to 64 "
    "values: t = 2, 0.435), so a value takes 1.42 rounds on average, 114 bits",
    "One value at the Gaussian mechanism's σ, about 2⁴⁰ grid units: 120 bits a round, accepted "
    "with probability 0.760, 158 bits per value, 116 above its entropy of 42.1 bits.",
    "One grid step per value adds 100,000 × 2⁻³⁷ = 7.3 × 10⁻⁷ to the sensitivity 1; at "
    "OpenDP's scale 1 that gives ε = 1.000001, which agrees with OpenDP's certificate",
    "11.5 and 15.4 above the entropy. At its 2 scales from 10⁶ up (1,000,000 and "
    "1,099,511,627,776), table (c″) read 11.3 to 15.6 above the entropy (both samplers): both "
    "releases' excess lies within that range.",
)


def test_sampler_lines_print_the_pinned_numbers(monkeypatch, capsys) -> None:
    """The numbers the prose of "Random bits" quotes or leans on (0.435 and two rounds at
    σ = 1, one round at 100 and 10**4; 0.760, 158 and 116 at the mechanism's σ; the
    releases' excess 11.5 and 15.4 within (c″)'s 11.3 to 15.6 at its scales from 10**6) are
    printed as :data:`PINNED` says, from the committed results and the samplers' plans.
    Fails at 54ae8fe, which printed "57 digit trials a proposal (9 + 8 + 40)", "accepts 64
    of 97" and a range over both samplers, and before review rev45, which printed the rounds
    as three paragraphs and the excess per sampler and scale."""
    import IPython.display
    import jupytext

    from dpkit.i18n import in_language

    monkeypatch.setattr(IPython.display, "display", lambda *objects, **_: None)
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    with in_language("en"):
        for cell in jupytext.read(PAGE).cells:
            if cell.cell_type == "code":
                exec(cell.source, namespace)  # the page's own code, as the book build runs it
    text = " ".join(capsys.readouterr().out.split())
    missing = [line for line in PINNED if line not in text]
    assert not missing, missing
