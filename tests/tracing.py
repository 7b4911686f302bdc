"""The calls a release makes, for structural timing tests (no timing asserts): two
releases on neighbouring inputs must run the same Python and C calls in the same order."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any


def calls_of(release: Callable[[], Any]) -> tuple[list[str], Any]:
    """The Python and C calls ``release()`` makes, in order, and its result; a
    ``ValueError`` it raises is the result (a refusal on both sides is the same path)."""
    names: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            names.append(frame.f_code.co_qualname)
        elif event == "c_call":
            names.append(getattr(arg, "__qualname__", type(arg).__name__))

    enabled = gc.isenabled()
    gc.collect()
    gc.disable()        # a collection inside the trace would run gc.callbacks (Hypothesis's)
    sys.setprofile(profile)
    try:
        result = release()
    except ValueError as error:
        result = error
    finally:
        sys.setprofile(None)
        if enabled:
            gc.enable()
    return names, result
