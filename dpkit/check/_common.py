"""Helpers shared by the exercise checkers: calling student code safely, reading numbers."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["call", "number"]


def call(fn: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Call a student's function; return ``(result, None)`` or ``(None, error text)``.

    >>> call(lambda x: 1 / x, 0)
    (None, 'ZeroDivisionError: division by zero')
    """
    try:
        return fn(*args), None
    except Exception as error:  # any failure of student code becomes a readable verdict
        return None, f"{type(error).__name__}: {error}"


def number(value: Any) -> float | None:
    """``value`` as a finite float, or None if it is not a finite real number.

    >>> number(2), number(float("nan")), number(True), number(10**400), number(1j)
    (2.0, None, None, None, None)
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return None
    try:
        value = float(value)
    except (OverflowError, TypeError, ValueError):  # 10**400, exotic Real types
        return None
    return value if math.isfinite(value) else None
