"""What the grader lends a student's function for one call, and the only uses it serves.

A query, a random source or a stream that a checker or a judge passes to a student's
function stays in the grader (:class:`dpkit.course.sandbox.Sandbox`): the worker's proxy
(:class:`dpkit.course.worker.Remote`) asks for each use, and :class:`Lent` serves only the
uses such an object is for (calling a query, drawing from a random source, iterating a
stream); no attribute is ever read.
"""

from __future__ import annotations

import math
import types
from fractions import Fraction
from typing import Any

from dpkit.course.wire import MAX_INT_BITS, WireError, decode, encode, in_blocks

__all__ = ["MAX_DRAW_BITS", "SOURCE_METHODS", "Lent", "draw_bits", "uses"]

#: What the worker may do with each kind of lent object: nothing else, and no attribute is
#: ever read (a generator's ``gi_frame`` or a function's globals would reach the grader).
SOURCE_METHODS = frozenset({"bits", "bytes", "randbelow", "bernoulli", "uniform", "uint64",
                            "uniforms"})
_PROTOCOL = ("__call__", "__iter__", "__next__", "__len__", "__getitem__")
#: One draw from a lent random source: at most 2 MiB of bits, the largest integer the wire
#: carries (a block of bits lent ahead, ``worker._MOST_BLOCK_BITS``, is smaller).
MAX_DRAW_BITS = MAX_INT_BITS


def draw_bits(method: str, args: list[Any], kwargs: dict[str, Any]) -> int:
    """About how many random bits a use of a lent source asks for (refused above a cap, so
    a student's code cannot make the grader allocate or loop without bound)."""
    values = [*args, *kwargs.values()]
    first = values[0] if values else 1
    if method in ("uint64", "uniforms"):
        shape = first if isinstance(first, (tuple, list)) else (first,)
        if not all(type(s) is int and s >= 0 for s in shape):
            raise TypeError("size must be an int or a tuple of ints")
        return 64 * math.prod(shape)
    if method == "bytes":
        return 8 * first if type(first) is int else 0
    if method in ("bits", "block"):
        return first if type(first) is int else 0
    if method == "randbelow":
        return first.bit_length() if type(first) is int else 0
    if method == "bernoulli":
        return Fraction(first).denominator.bit_length() if isinstance(first, (int, Fraction)) \
            else 0
    return 64


def uses(value: Any) -> frozenset[str]:
    """The uses the worker may make of ``value``; empty if it may not be lent at all."""
    from dpkit.rng import RandomSource

    if isinstance(value, RandomSource):
        return SOURCE_METHODS | {"block"} if in_blocks(value) else SOURCE_METHODS
    if isinstance(value, types.GeneratorType):
        return frozenset({"__iter__", "__next__"})
    if isinstance(value, types.FunctionType):            # a query written as a lambda
        return frozenset({"__call__"})
    if type(value).__module__.split(".")[0] == "dpkit" and not isinstance(value, type):
        return frozenset(m for m in _PROTOCOL if callable(getattr(type(value), m, None)))
    return frozenset()


class Lent:
    """The grader's objects lent to the worker for one call (a query, a random source, a
    stream), and the only uses of them it serves (:func:`uses`): calling a query, drawing
    from a random source, iterating a stream. Only such objects are lent; anything else a
    use returns must be a plain value."""

    def __init__(self) -> None:
        self._objects: dict[int, Any] = {}
        self._next = 0

    def lend(self, value: Any) -> int:
        if not uses(value):
            raise WireError(f"a value of type {type(value).__name__} cannot be sent")
        self._next += 1
        self._objects[self._next] = value
        return self._next

    def clear(self) -> None:
        self._objects.clear()

    def serve(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one use of a lent object; the reply to send back."""
        try:
            target = self._objects[int(request.get("handle", -1))]
            method = str(request.get("method"))
            args = decode(request.get("args", []))
            kwargs = decode(request.get("kwargs", {}))
            if method not in uses(target) or not isinstance(args, list) \
                    or not isinstance(kwargs, dict) or not all(isinstance(k, str)
                                                              for k in kwargs):
                raise TypeError(f"the grader's object does not allow {method[:40]!r}")
            if method in (*SOURCE_METHODS, "block") \
                    and draw_bits(method, args, kwargs) > MAX_DRAW_BITS:
                raise ValueError(f"one draw may ask for at most {MAX_DRAW_BITS} random bits")
            if method == "__next__":
                result = next(target)
            elif method == "__iter__":
                result = iter(target)
            else:
                result = getattr(target, method)(*args, **kwargs)
            return {"op": "result", "value": encode(result, self.lend)}
        except KeyError:
            return {"op": "error", "type": "RuntimeError",
                    "message": "that object is no longer available"}
        except Exception as error:  # the grader's object raised: the student's code sees it
            return {"op": "error", "type": type(error).__name__, "message": str(error)[:2000]}
