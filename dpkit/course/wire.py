"""Plain values across the sandbox boundary, as JSON: nothing is ever unpickled or evaluated.

The grader and the sandboxed worker that runs a student's code exchange one JSON document
per line. :func:`encode` turns plain values into JSON-able data and :func:`decode` turns
them back: ``None``, ``bool``, ``int`` (up to :data:`MAX_INT_BITS` bits, large ones in
hexadecimal), ``float`` (NaN and infinities included), ``str``, ``bytes``, ``Fraction``,
tuples, lists, dicts, NumPy scalars, NumPy arrays of numbers or booleans, other real
numbers (``mpmath.mpf``, ``Decimal``: sent exactly, as an ``int`` or a ``Fraction``,
unless they round to 0 or ±inf as floats),
:class:`dpkit.exponential.Eta`, and the secure sources a check or a judge lends
(:func:`dpkit.check._common.lent_source`: a :class:`dpkit.rng.SecureRandom` keyed by the
grader, sent as its key and nonce before it has drawn anything, so the student's code gets
a source of the default class that draws the same stream, not a proxy it could tell from
real use). Anything else is turned into a *handle* by the ``handle`` callback (the grader
passes its own objects — a query, a random source, a stream — by reference: the worker sees
a proxy whose calls come back to the grader), or refused with :class:`WireError`. A handle
says what kind of object it refers to: ``"source"`` (a :class:`dpkit.rng.RandomSource`),
``"blocks"`` (a random source whose ``bits(k)`` may be served from blocks drawn ahead: its
``lent_in_blocks`` is true) or ``"object"``.

Decoding is safe on hostile input: it builds only the types above, checks every field and
bounds every size, so a student's process can make the grader build nothing but data.

Examples
--------
>>> from fractions import Fraction
>>> import numpy as np
>>> value = (1, 2**100, float("nan"), Fraction(1, 3), np.arange(3), {"a": [True, None]})
>>> back = decode(encode(value))
>>> back[1] == 2**100 and back[3] == Fraction(1, 3) and back[4].tolist() == [0, 1, 2]
True
"""

from __future__ import annotations

import base64
import collections.abc
import dataclasses
import importlib
import itertools
import json
import math
import numbers
import operator
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["MAX_INT_BITS", "MAX_MESSAGE", "MAX_STREAM", "RUN_IN_GRADER", "CountQuery",
           "CountStream", "GeneratorState", "Handle",
           "Unreadable", "WireError", "decode", "dumps", "encode", "in_blocks", "loads",
           "returned"]

MAX_MESSAGE = 64 << 20          # bytes in one message (an array of 8 million floats)
#: The checks of the randomized exercises (``dpkit.course.exercises.JUDGED``): shown in a
#: cell in the sandbox, each is run by the grader on the student's function, as in a
#: notebook, its verdict thrown away (:mod:`dpkit.course.showing`).
RUN_IN_GRADER = frozenset({"check_laplace_mechanism", "check_gaussian_noise",
                           "check_above_threshold", "check_auto_avg",
                           "check_division_free_sampler"})
_MAX_DEPTH = 32
#: Bits of the largest integer that crosses (a draw of a lent source's ``bits(k)`` is one:
#: the grader serves at most this many bits in one draw, and a block of bits lent ahead is
#: smaller). Large integers cross in hexadecimal, which Python converts in linear time and
#: without its 4,300-digit limit on decimal conversions (``sys.set_int_max_str_digits``).
MAX_INT_BITS = 1 << 24
_HEX = re.compile(rf"-?[0-9a-f]{{1,{MAX_INT_BITS // 4}}}")
#: Small value classes of dpkit sent by value (their integer fields, validated on rebuild),
#: each with the module that defines it (its ``__module__``), where it is rebuilt from.
_VALUE_TYPES = {"Eta": ("dpkit.exponential_eta", ("x", "y", "z")),
                "CountQuery": ("dpkit.course.wire", ("index",)),
                "CountStream": ("dpkit.course.wire", ("index", "length"))}
_DTYPES = frozenset({"?", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "e", "f", "d",
                     "g"})


class WireError(ValueError):
    """A value that cannot cross the boundary, or a malformed message."""


class CountQuery:
    """A counting query sent by value: ``query(histogram)`` is the count in bin ``index``
    (sensitivity 1 under adding or removing one row).

    The AboveThreshold judge asks thousands of such queries per call (adversarial review
    round 15, C4a: long streams); a query lent by reference costs a round trip to the
    grader each (about 0.1 to 0.2 ms on a busy 2-core machine), one sent by value is
    evaluated in the worker. It holds nothing secret: its index, and the histogram it
    reads, which is an argument of the same call.

    >>> query = decode(encode(CountQuery(2)))
    >>> type(query).__name__, query([5, 6, 7])
    ('CountQuery', 7)
    """

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        if type(index) is not int or index < 0:
            raise WireError(f"a CountQuery index must be an int >= 0, got {index!r}")
        self.index = index

    def __call__(self, data: Any) -> int:
        return int(data[self.index])


#: The longest :class:`CountStream`.
MAX_STREAM = 1 << 20


class CountStream(collections.abc.Sequence):
    """``length`` times the same :class:`CountQuery` ``(index)``, sent by value as two
    integers: it reads as the list ``[CountQuery(index)] * length`` does (``len``, indexing,
    slicing, iteration), and crosses in constant time where that list crosses one query
    at a time (the AboveThreshold judge's long streams, up to 3,000 queries in each of
    4,000 calls, spent about 36 µs a query on the wire: 157 s of a 300 s limit at load 5).

    >>> stream = decode(encode(CountStream(1, 3)))
    >>> type(stream).__name__, len(stream), [q([5, 6]) for q in stream], stream[-1]([5, 6])
    ('CountStream', 3, [6, 6, 6], 6)
    """

    __slots__ = ("_query", "index", "length")

    def __init__(self, index: int, length: int) -> None:
        if type(length) is not int or not 0 <= length <= MAX_STREAM:
            raise WireError(f"a CountStream length must be an int in [0, {MAX_STREAM}], got "
                            f"{length!r}")
        self._query = CountQuery(index)
        self.index, self.length = index, length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return [self._query] * len(range(*key.indices(self.length)))
        if not -self.length <= operator.index(key) < self.length:
            raise IndexError("CountStream index out of range")
        return self._query

    def __iter__(self) -> Iterator[CountQuery]:
        return itertools.repeat(self._query, self.length)


#: The bit generators a :class:`GeneratorState` may name (NumPy's own).
_BIT_GENERATORS = frozenset({"MT19937", "PCG64", "PCG64DXSM", "Philox", "SFC64"})
#: Most children a call may spawn from a generator it was lent (the grader spawns as many
#: to take the count back, so a hostile count must not make it build millions).
MAX_SPAWNED = 10_000


@dataclasses.dataclass(frozen=True)
class GeneratorState:
    """A NumPy generator sent by value: its place among a call's arguments, the state of
    its bit generator and its seed sequence (``entropy``, ``spawn_key``, ``pool_size``,
    ``n_children_spawned``; None if it has none), so that ``generator.spawn`` gives the
    same children on both sides. The worker draws from a copy (:meth:`rebuild`); the grader
    takes back its final state (:meth:`restore`), so the grader's generator advances as if
    the call had drawn from it, or spawned from it, in place."""

    index: int
    state: dict[str, Any]
    seed: dict[str, Any] | None = None

    @classmethod
    def of(cls, generator: np.random.Generator, index: int = 0) -> GeneratorState:
        """The state of ``generator``, the ``index``-th generator of a call."""
        sequence = generator.bit_generator.seed_seq
        seed = None
        if isinstance(sequence, np.random.SeedSequence):
            seed = {"entropy": sequence.entropy, "spawn_key": list(sequence.spawn_key),
                    "pool_size": sequence.pool_size,
                    "n_children_spawned": sequence.n_children_spawned}
        return cls(index, generator.bit_generator.state, seed)

    def rebuild(self) -> np.random.Generator:
        """A generator in this state, with this seed sequence.

        Raises
        ------
        WireError
            If the state or the seed sequence is not one NumPy can take.
        """
        name = self.state.get("bit_generator")
        if name not in _BIT_GENERATORS:
            raise WireError(f"unknown bit generator {name!r}")
        try:
            sequence = None if self.seed is None else np.random.SeedSequence(
                self.seed["entropy"], spawn_key=tuple(self.seed["spawn_key"]),
                pool_size=self.seed["pool_size"],
                n_children_spawned=self.seed["n_children_spawned"])
            bits = getattr(np.random, name)(sequence)
            bits.state = self.state
        except (TypeError, ValueError, KeyError, OverflowError) as error:
            raise WireError(f"malformed generator state: {error}") from error
        return np.random.Generator(bits)

    def restore(self, generator: np.random.Generator) -> None:
        """Put ``generator`` (the one this state was taken from) in this state: its bit
        generator's state, and as many more spawned children as the seed sequence counts.

        Raises
        ------
        WireError
            If the state is not one NumPy can take, or counts fewer children than
            ``generator`` has spawned, or more than :data:`MAX_SPAWNED` new ones.
        """
        sequence = generator.bit_generator.seed_seq
        if self.seed is not None and isinstance(sequence, np.random.SeedSequence):
            spawned = self.seed.get("n_children_spawned")
            if type(spawned) is not int or not (
                    0 <= spawned - sequence.n_children_spawned <= MAX_SPAWNED):
                raise WireError(f"n_children_spawned is {spawned!r}, not in "
                                f"[{sequence.n_children_spawned}, "
                                f"{sequence.n_children_spawned + MAX_SPAWNED}]")
            sequence.spawn(spawned - sequence.n_children_spawned)
        try:
            generator.bit_generator.state = self.state
        except (TypeError, ValueError, KeyError, OverflowError) as error:
            raise WireError(f"malformed generator state: {error}") from error


class Handle:
    """A reference to an object that stays on the other side (see :func:`encode`)."""

    __slots__ = ("ident",)

    def __init__(self, ident: int) -> None:
        self.ident = ident

    def __repr__(self) -> str:
        return f"Handle({self.ident})"


class Unreadable:
    """What the grader receives for a value the student's function returned that cannot
    cross (a complex number, an object of the student's): the name of its type (checked:
    an identifier of at most 40 characters). Checks read it as a wrong answer, which their
    feedback quotes by its repr, so the student reads "your function returned <a value
    of type complex, which cannot be graded: return a number>", not that it raised."""

    __slots__ = ("type_name",)
    unreadable = True               # how dpkit.check tells it (it does not import the course)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<a value of type {self.type_name}, which cannot be graded: return a number>"


_TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def returned(value: Any) -> Any:
    """:func:`encode` of a value a student's function returned, in the worker: an
    :class:`Unreadable` naming its type if it cannot cross."""
    try:
        return encode(value)
    except WireError:
        name = type(value).__name__
        return {"$unreadable": name if _TYPE_NAME.fullmatch(name) else "object"}


def _array(value: np.ndarray) -> dict[str, Any]:
    if value.dtype.char not in _DTYPES or value.dtype.kind not in "biuf":
        raise WireError(f"an array of dtype {value.dtype} cannot be sent")
    data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
    return {"$nd": [data.dtype.str, list(value.shape),
                    base64.b64encode(data.tobytes()).decode("ascii")]}


def encode(value: Any, handle: Callable[[Any], int] | None = None, depth: int = 0) -> Any:
    """``value`` as JSON-able data; objects that are not plain values go to ``handle``, which
    returns the number the other side will use to refer to them.

    Raises
    ------
    WireError
        If ``value`` holds an object that is not a plain value and ``handle`` is None, or
        nests deeper than 32 levels.
    """
    if depth > _MAX_DEPTH:
        raise WireError("the value nests too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if abs(value) < 2**53:
            return value
        if value.bit_length() > MAX_INT_BITS:
            raise WireError(f"an integer of {value.bit_length()} bits is over the "
                            f"{MAX_INT_BITS}-bit limit")
        return {"$hex": format(value, "x")}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, Handle):
        return {"$handle": [value.ident, "object"]}
    if isinstance(value, GeneratorState):
        return {"$generator": [value.index, encode(value.state, None, depth + 1),
                               encode(value.seed, None, depth + 1)]}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, Fraction):
        return {"$frac": [encode(value.numerator), encode(value.denominator)]}
    if isinstance(value, np.ndarray):
        return _array(value)
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return {"$np": _array(np.asarray(value))["$nd"]}
    if isinstance(value, (numbers.Real, Decimal)):
        return encode(_real(value))
    if type(value).__name__ in _VALUE_TYPES and type(value).__module__ == _VALUE_TYPES[
            type(value).__name__][0]:
        fields = _VALUE_TYPES[type(value).__name__][1]
        return {"$obj": [type(value).__name__, [encode(getattr(value, f)) for f in fields]]}
    if isinstance(value, (list, tuple)):
        items = [encode(v, handle, depth + 1) for v in value]
        return items if isinstance(value, list) else {"$tuple": items}
    if isinstance(value, dict):
        return {"$dict": [[encode(k, handle, depth + 1), encode(v, handle, depth + 1)]
                          for k, v in value.items()]}
    from dpkit.rng import RandomSource, lent_key

    keyed = lent_key(value)
    if keyed is not None:
        return {"$secure": [base64.b64encode(part).decode("ascii") for part in keyed]}
    if handle is None:
        raise WireError(f"a value of type {type(value).__name__} cannot be sent")

    kind = "object"
    if isinstance(value, RandomSource):
        kind = "blocks" if in_blocks(value) else "source"
    return {"$handle": [handle(value), kind]}


def _real(value: numbers.Real | Decimal) -> int | float | Fraction:
    """A real number of a type the wire has no tag for (``mpmath.mpf``, ``Decimal``, a
    :class:`numbers.Real` of the student's), as one it has: exactly, an ``int`` or a
    ``Fraction``, when it is an integer or a finite number whose float is neither 0 nor
    ±inf (or it is 0); otherwise its float (what :func:`dpkit.check._common.coerce` reads
    it as: 0, ±inf or NaN), so a huge exponent never makes a huge fraction.

    Raises
    ------
    WireError
        If its conversions fail or do not give an ``int`` or a ``float``.
    """
    name = type(value).__name__
    try:
        if isinstance(value, numbers.Integral):
            integer = int(value)
            if type(integer) is int:
                return integer
        else:
            real = float(value)
            if type(real) is not float:
                raise TypeError(f"its float is of type {type(real).__name__}")
            if not math.isfinite(real) or real == 0 != value:
                return real
            numerator, denominator = map(int, value.as_integer_ratio() if hasattr(
                value, "as_integer_ratio") else real.as_integer_ratio())
            if type(numerator) is int and type(denominator) is int and denominator > 0:
                return Fraction(numerator, denominator) if denominator > 1 else numerator
    except (ArithmeticError, TypeError, ValueError) as error:
        raise WireError(f"a number of type {name} cannot be sent: {error}") from error
    raise WireError(f"a number of type {name} cannot be sent")


def in_blocks(source: Any) -> bool:
    """Whether a random source lent to the worker may have its ``bits(k)`` served there from
    blocks of bits drawn ahead (its ``lent_in_blocks`` attribute is True; see
    :class:`dpkit.check.exponential.BitsOnly` and :class:`dpkit.course.worker.RemoteSource`)."""
    return getattr(source, "lent_in_blocks", False) is True


def _int(text: Any) -> int:
    """The integer :func:`encode` wrote in hexadecimal (at most :data:`MAX_INT_BITS` bits)."""
    if not isinstance(text, str) or _HEX.fullmatch(text) is None:
        raise WireError("malformed integer")
    return int(text, 16)


def _decode_array(fields: Any) -> np.ndarray:
    if not (isinstance(fields, list) and len(fields) == 3):
        raise WireError("malformed array")
    dtype, shape, data = fields
    if not (isinstance(dtype, str) and dtype[1:] and dtype[1:] in
            {np.dtype(c).str[1:] for c in _DTYPES} and isinstance(shape, list)
            and len(shape) <= 32 and all(isinstance(n, int) and 0 <= n for n in shape)
            and isinstance(data, str) and len(data) <= MAX_MESSAGE):
        raise WireError("malformed array")
    raw = base64.b64decode(data, validate=True)
    kind = np.dtype(dtype)
    if kind.kind not in "biuf" or len(raw) != kind.itemsize * math.prod(shape):
        raise WireError("malformed array")
    return np.frombuffer(raw, dtype=kind).reshape(shape).astype(kind.newbyteorder("="))


def decode(data: Any, handle: Callable[[int, str], Any] | None = None, depth: int = 0) -> Any:
    """The value :func:`encode` made; ``handle(ident, kind)`` rebuilds a handle (``kind`` is
    ``"source"`` or ``"blocks"`` for a :class:`dpkit.rng.RandomSource`, see the module
    docstring, else ``"object"``; default: a :class:`Handle`).

    Raises
    ------
    WireError
        If ``data`` is not what :func:`encode` makes.
    """
    if depth > _MAX_DEPTH:
        raise WireError("the value nests too deeply")
    if data is None or isinstance(data, (bool, str, int, float)):
        return data
    if isinstance(data, list):
        return [decode(v, handle, depth + 1) for v in data]
    if not (isinstance(data, dict) and len(data) == 1):
        raise WireError("malformed value")
    (tag, body), = data.items()
    if tag == "$hex":
        return _int(body)
    if tag == "$float":
        if body not in ("nan", "inf", "-inf"):
            raise WireError("malformed float")
        return float(body)
    if tag == "$bytes" and isinstance(body, str):
        return base64.b64decode(body, validate=True)
    if tag == "$frac" and isinstance(body, list) and len(body) == 2:
        numerator, denominator = (decode(v, None, depth + 1) for v in body)
        if not (type(numerator) is int and type(denominator) is int and denominator > 0):
            raise WireError("malformed fraction")
        return Fraction(numerator, denominator)
    if tag == "$nd":
        return _decode_array(body)
    if tag == "$np":
        return _decode_array(body)[()]
    if tag == "$tuple" and isinstance(body, list):
        return tuple(decode(v, handle, depth + 1) for v in body)
    if tag == "$dict" and isinstance(body, list):
        result = {}
        for pair in body:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise WireError("malformed dict")
            key = decode(pair[0], None, depth + 1)
            if not isinstance(key, (str, int, float, bool, tuple, type(None))):
                raise WireError("malformed dict key")
            result[key] = decode(pair[1], handle, depth + 1)
        return result
    if tag == "$obj" and isinstance(body, list) and len(body) == 2 and body[0] in _VALUE_TYPES:
        module, fields = _VALUE_TYPES[body[0]]
        values = [decode(v, None, depth + 1) for v in body[1]] if isinstance(body[1], list) \
            else []
        if len(values) != len(fields) or not all(type(v) is int for v in values):
            raise WireError(f"malformed {body[0]}")
        return getattr(importlib.import_module(module), body[0])(*values)
    if tag == "$generator" and isinstance(body, list) and len(body) in (2, 3) \
            and type(body[0]) is int:
        state, seed = (decode(v, None, depth + 1) for v in (*body[1:], None)[:2])
        if not (isinstance(state, dict) and (seed is None or isinstance(seed, dict))):
            raise WireError("malformed generator state")
        return GeneratorState(body[0], state, seed)
    if tag == "$secure" and isinstance(body, list) and len(body) == 2 \
            and all(isinstance(part, str) and len(part) <= 64 for part in body):
        from dpkit.rng import replayable_secure_source

        try:
            return replayable_secure_source(*(base64.b64decode(part, validate=True)
                                              for part in body))
        except ValueError as error:
            raise WireError(f"malformed secure source: {error}") from error
    if tag == "$unreadable" and isinstance(body, str) and _TYPE_NAME.fullmatch(body):
        return Unreadable(body)
    if tag == "$handle" and isinstance(body, list) and len(body) == 2 \
            and type(body[0]) is int and body[1] in ("source", "blocks", "object"):
        return handle(body[0], body[1]) if handle is not None else Handle(body[0])
    raise WireError("malformed value")


def dumps(message: dict[str, Any]) -> bytes:
    """One message as a line of JSON (UTF-8, no NaN literals)."""
    text = json.dumps(message, allow_nan=False, separators=(",", ":")).encode()
    if len(text) > MAX_MESSAGE:
        raise WireError(f"a message of {len(text)} bytes is over the {MAX_MESSAGE} limit")
    return text + b"\n"


def loads(line: bytes) -> dict[str, Any]:
    """A message from one line; :class:`WireError` if it is not a JSON object."""
    if len(line) > MAX_MESSAGE + 1:
        raise WireError("message too long")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise WireError("malformed message") from error
    if not isinstance(message, dict):
        raise WireError("malformed message")
    return message
