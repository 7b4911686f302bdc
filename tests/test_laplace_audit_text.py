"""The Laplace chapter names the events that ``dpkit.check.check_laplace_mechanism``'s audit
tries: up to 49 threshold events at quantiles of the releases, plus "the release equals v" for
up to 20 of the most frequent values seen more than once
(:func:`dpkit.audit.strongest_lower_bound`'s default family). Reviews found the prose naming the
thresholds alone (rev32a), then the equalities without their limit of 20 (rev33a, 12); this
checks the family and both editions.

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


def test_at_most_20_equalities_the_most_frequent() -> None:
    """25 repeated values: the 20 most frequent get an equality event, as the prose says."""
    outputs = [float(i) for i in range(1000)]
    outputs += [v for k in range(25) for v in [1000.0 + k] * (2 + k)]    # 1024.0 the most
    equalities = {name for name in _default_events(outputs) if name.startswith("output == ")}
    assert equalities == {f"output == {1000.0 + k!r}" for k in range(5, 25)}


def test_both_editions_name_both_kinds_of_event() -> None:
    en = " ".join((BOOK / "laplace.md").read_text().split())
    zh = " ".join((BOOK / "zh" / "laplace.md").read_text().split())
    assert "tries up to 49 threshold events, at quantiles of the releases, plus \"the release " \
           "equals $v$\" for up to 20 of the most frequent values $v$ seen more than once" in en
    assert "audits them with threshold events, plus \"the release equals $v$\" for up to 20 of " \
           "the most frequent values $v$ seen more than once" in en
    assert "至多尝试 49 个阈值事件" in zh
    assert "对出现不止一次的值 $v$ 中出现最频繁的至多 20 个，还加上“发布值等于 $v$”这一事件" in zh
    assert "中出现最频繁的至多 20 个的“发布值等于 $v$”事件对它们进行审计" in zh
