"""Shared test set-up.

Releases are not padded to their deadlines in the tests (:func:`dpkit.timing.unpadded`):
the tests measure no time, and a statistical test that draws 10**5 releases would
otherwise spend most of its time waiting. ``tests/test_timing.py`` and
``tests/test_first_use.py`` test the padding itself (they keep the real wait).
"""

from __future__ import annotations

import pytest

import dpkit.timing


@pytest.fixture(autouse=True)
def _no_padding(request):
    if request.module.__name__.rsplit(".", 1)[-1] in ("test_timing", "test_first_use"):
        yield
    else:
        with dpkit.timing.unpadded():
            yield
