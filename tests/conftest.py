"""Shared test set-up.

Releases are not padded to their deadlines in the tests: the tests measure no time, and a
statistical test that draws 10**5 releases would otherwise spend most of its time waiting.
The thread that runs a test's fixtures and body counts as inside :func:`dpkit.timing.unpadded`
(``dpkit.timing._inside_unpadded`` answers yes there; a ``with unpadded():`` held across the
fixture's ``yield`` would cover nothing, since a suspended generator's frame is on no stack);
other threads' releases stay padded, and so do a warm-up's padded rounds. A test that needs a
padded release there puts the real ``_inside_unpadded`` back (by monkeypatch, from a reference
taken when its module was imported). ``tests/test_timing.py`` and
``tests/test_first_use.py`` test the padding itself (they keep the real wait), and so does
``tests/test_exponential_deadline.py`` (an overrun counted; its other releases are unpadded
or stop before their work), and so does ``tests/test_breaker27.py`` (its re-warm tests
trace padded releases at margin 1; its other releases are unpadded).
``tests/test_timing.py`` counts the calls and deadlines of single releases: the re-warm of
a function gone cold (:mod:`dpkit._warming`), which runs before a release after 50 µs without
one (light) or 10 ms (full) and which ``tests/test_first_use.py`` tests, is kept out of them
(no pause is long enough there).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

import dpkit._warming
import dpkit.timing


@pytest.fixture(autouse=True)
def _no_padding(request, monkeypatch):
    module = request.module.__name__.rsplit(".", 1)[-1]
    if module == "test_timing":
        monkeypatch.setattr(dpkit._warming, "REWARM_AFTER_NS", 2**62)
        monkeypatch.setattr(dpkit._warming, "LIGHT_REWARM_AFTER_NS", 2**62)
    # Padded here, or the module lifts the padding itself (the SVT breaker reviews record
    # each wait instead).
    if module not in ("test_timing", "test_first_use", "test_exponential_deadline",
                      "test_breaker27", "test_breaker41", "test_breaker42", "test_breaker43",
                      "test_breaker44", "test_breaker45", "test_breaker47",
                      "test_breaker48", "test_breaker49"):
        thread = threading.get_ident()
        monkeypatch.setattr(dpkit.timing, "_inside_unpadded",
                            lambda: threading.get_ident() == thread)


BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def benchmarks():
    """``deadlines`` and ``timing_accumulate`` from ``benchmarks/`` (on ``sys.path`` while
    a module uses them: its scripts import ``timing`` from their folder)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import deadlines
        import timing_accumulate
        yield deadlines, timing_accumulate
    finally:
        sys.path.remove(str(BENCHMARKS))
