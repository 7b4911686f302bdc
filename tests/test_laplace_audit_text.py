"""The Laplace chapter names the events that ``dpkit.check.check_laplace_mechanism``'s audit
tries: up to 49 threshold events at quantiles of the releases, plus "the release equals v" for
values seen more than once (:func:`dpkit.audit.strongest_lower_bound`'s default family). A
review found the prose naming the thresholds alone; this checks the family and both editions.

Deterministic: no randomness, no timing.
"""

from __future__ import annotations

from pathlib import Path

from dpkit.audit import _default_events

BOOK = Path(__file__).resolve().parent.parent / "book"


def test_the_default_events_are_thresholds_and_repeated_values() -> None:
    outputs = [float(i) for i in range(1000)] + [3.5, 3.5, 7.25, 7.25, 7.25]
    names = list(_default_events(outputs))
    thresholds = [name for name in names if name.startswith("output > ")]
    equalities = [name for name in names if name.startswith("output == ")]
    assert len(thresholds) == 49
    assert sorted(equalities) == ["output == 3.5", "output == 7.25"]
    assert len(names) == len(thresholds) + len(equalities)


def test_both_editions_name_both_kinds_of_event() -> None:
    en = " ".join((BOOK / "laplace.md").read_text().split())
    zh = " ".join((BOOK / "zh" / "laplace.md").read_text().split())
    assert "tries up to 49 threshold events, at quantiles of the releases, plus \"the release " \
           "equals $v$\" for values $v$ seen more than once" in en
    assert "audits them with threshold events, plus \"the release equals $v$\" for values $v$ " \
           "seen more than once" in en
    assert "至多尝试 49 个阈值事件" in zh and "还加上“发布值等于 $v$”这一事件" in zh
    assert "的“发布值等于 $v$”事件对它们进行审计" in zh
