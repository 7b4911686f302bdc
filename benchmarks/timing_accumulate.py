"""The timing audit, accumulated: add calls to each row across runs until every row has
``--target`` calls per side (default ``2·10**4``, issue #18's goal).

``benchmarks/timing.py`` times each row once, for at most ``--row-seconds``; a row whose
call is slow (a padded release of 1,000 SVT answers takes a third of a second) gets the
minimum of 1,000 calls per side, and 2·10**4 calls per side on every row would take about
60 hours of one core on a two-core machine. This script keeps each row's raw timings in a
store, adds them in chunks, and certifies each row on everything gathered so far, so the
work can be spread over many runs, on quiet machines, and stopped at any moment (a chunk
is saved when it ends; a run cut short loses at most the chunk it was timing).

**Store.** ``benchmarks/results/timing_raw/<version>/`` (``--store``), committed: the audit
takes dozens of core-hours, more than one working session on one machine, and a machine's own
disk does not outlive it, so the timings live in the repository. For each row a ``.json`` of its
chunks (date, load, calls per side, overruns, this process's reference speed, seed) and one file
per chunk, ``<row>-<chunk>.npy.xz``: the chunk's timings (ns, exact) as a ``(2, calls)`` int64
array, the two sides' rows, LZMA-compressed (about 1.5 bytes a timing). A chunk's file is
written once and never changed, so each commit adds only the new chunks. A row's
``<version>`` is a hash of the code (docstrings and comments left out) of the dpkit modules
its release function can run -- those that importing the function's module loads, in a
fresh interpreter (:func:`row_modules`; dpkit's modules import nothing inside functions) --,
of the row's two calls (their code, the helpers of ``timing.py`` they name, the values they
hold: :func:`_feed`), of the timing margin, and of the versions of Python, NumPy and gmpy2
(breaker review 33, F2). A change to any of them starts the row again, since timings of
other code certify nothing about this one; a change to a module the row's function does
not import keeps its calls (a fix to the clipping functions keeps the Laplace rows).
``--prune`` deletes the folders of versions no row has now. What
the hash cannot see: state that another module's import-time code sets for the whole
process (other than the margin), such as warm-ups it registers; the state of an object a
call holds that is not a number, array, container or dataclass (counted by its type);
code of another module than the call's own that is not dpkit's. A run that finds a dpkit module
loaded during its calls that was not loaded before them stops with an error. Two runs
may add to the store at once if they take different shards (``--shard i/n``: the rows
whose key's CRC-32 is ``i`` mod ``n``), one pinned to each core.

**Chunks.** Each chunk warms the row up, then times ``c`` calls per side in a fresh seeded
random interleaving (seed, row, chunk number), as ``timing.py`` does; ``c`` is what fits in
``--chunk-seconds`` (at least 200, at most what the row still needs). With ``--max-load L``
a chunk is discarded, unsaved, when the 1-minute load average at its start or end is above
``L`` (other programs on the machine, such as a test suite on the other core, add overruns:
0 to 8 in 40,000 calls of a row with the machine otherwise idle, up to 408 with tests
running on the same core). The choice depends on the load alone, never on the timings, and
each chunk is interleaved on its own, so it leaves the certification valid; the table gives
each row's load range. Every chunk's calls
are interleaved, and each chunk has as many calls on each side, so the pooled timings of
the two sides are mixtures over the same chunks and the certification of
:func:`timing.certify` holds on them (its notes: calls under drifting load).

**Order.** Rows are served cheapest first (the estimated time of the calls they still
need), so a short run completes as many rows as it can.

Run (the store's state by default; nothing is timed or written)::

    .venv/bin/python benchmarks/timing_accumulate.py
    taskset -c 0 .venv/bin/python benchmarks/timing_accumulate.py --run --minutes 60 --shard 0/2
    taskset -c 1 .venv/bin/python benchmarks/timing_accumulate.py --run --minutes 60 --shard 1/2
    .venv/bin/python benchmarks/timing_accumulate.py --write   # timing_accumulated.{md,json}
    .venv/bin/python benchmarks/timing_accumulate.py --prune   # drop other code's timings

``--write`` certifies every row that has calls in the store and writes
``benchmarks/results/timing_accumulated.md`` and ``.json`` (the table of ``timing.py``,
with each row's calls, chunks and load range; rows the store has not reached are listed as
such).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import datetime
import hashlib
import io
import json
import lzma
import os
import shutil
import subprocess
import sys
import time
import types
import zlib
from decimal import Decimal
from fractions import Fraction
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np
import timing as audit
from timing import (  # benchmarks/ is on sys.path when run
    PASS_ACCURACY,
    PASS_EPSILON,
    RESULTS,
    Pair,
    all_pairs,
    certify,
    environment,
    markdown_table,
    time_pair,
    verdict,
    warm_up,
)

import dpkit
import dpkit.timing

TARGET = 20_000
CHUNK_SECONDS = 120.0
MIN_CHUNK = 200
STORE = RESULTS / "timing_raw"


def _release_modules() -> list[Path]:
    """The source files of the dpkit modules loaded now (after ``timing.py``'s imports,
    every module a release can run: a run checks that its calls load no other)."""
    root = Path(dpkit.__file__).resolve().parent
    files = {Path(module.__file__).resolve() for name, module in list(sys.modules.items())
             if name.split(".")[0] == "dpkit" and getattr(module, "__file__", None)}
    return sorted(path for path in files if path.is_relative_to(root))


def _code(path: Path) -> bytes:
    """A module's code without its docstrings and comments: its syntax tree, dumped. What
    a row's hash covers (a fix to a docstring leaves the timings valid)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:]
    return ast.dump(tree).encode()


@cache
def row_modules(function: str) -> tuple[Path, ...]:
    """The source files of the dpkit modules that importing the module of the audited
    release ``function`` (a name ``timing.py`` imports) loads, in a fresh interpreter: every
    dpkit module whose code the function can run."""
    module = getattr(audit, function).__module__
    probe = ("import importlib, sys; importlib.import_module(sys.argv[1]); "
             "print('\\n'.join(m.__file__ for n, m in list(sys.modules.items()) "
             "if n.split('.')[0] == 'dpkit' and getattr(m, '__file__', None)))")
    root = Path(dpkit.__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": str(root.parent)}
    found = subprocess.run([sys.executable, "-c", probe, module], capture_output=True,
                           text=True, check=True, env=env).stdout.split()
    return tuple(sorted({Path(path).resolve() for path in found}))


#: Values counted by their ``repr`` wherever they occur (never deduplicated: CPython shares
#: some of them between unrelated places, such as small ints and interned strings).
_ATOMS = (bool, int, float, complex, str, bytes, Decimal, Fraction, np.generic)


def _feed(digest: Any, value: Any, seen: dict[int, tuple[int, Any]]) -> None:
    """Add to ``digest`` what a row's call is made of: a function's bytecode, constants,
    defaults, closure and the functions (a cached or partial one through what it wraps)
    and values of its own module it names (so a helper of ``timing.py`` the call runs, such
    as an SVT query, counts, and the constants it reads), and the values it holds (arrays
    by their bytes, sets in sorted order, a dataclass by its fields). Deterministic across
    processes: an object of another kind counts by its type alone, never by a ``repr``
    that may hold its address.
    An object met again (a cycle, a value both calls hold) adds a reference to when it was
    first met; ``seen`` keeps every object it met alive, so that no temporary built here
    (a closure's list of values) frees an id that the next one reuses (breaker review 34,
    F3)."""
    put = digest.update
    if value is None or isinstance(value, _ATOMS):
        put(f"{type(value).__name__}:{value!r}".encode())
        return
    if id(value) in seen:
        put(f"ref{seen[id(value)][0]}".encode())
        return
    seen[id(value)] = (len(seen), value)
    if isinstance(value, types.FunctionType):
        code = value.__code__
        put(b"function")
        _feed(digest, code, seen)
        for part in (value.__defaults__, value.__kwdefaults__,
                     [cell.cell_contents for cell in value.__closure__ or ()]):
            _feed(digest, part, seen)
        for name in code.co_names:
            target = value.__globals__.get(name)
            if target is not None and not isinstance(target, (types.ModuleType, type)) and \
                    getattr(target, "__module__", value.__module__) == value.__module__:
                _feed(digest, target, seen)
    elif isinstance(value, partial):
        put(b"partial")
        _feed(digest, [value.func, value.args, value.keywords], seen)
    elif callable(value) and isinstance(getattr(value, "__wrapped__", None),
                                        types.FunctionType):
        put(f"wrapped:{type(value).__qualname__}".encode())   # functools.cache, say
        _feed(digest, value.__wrapped__, seen)
    elif isinstance(value, types.CodeType):
        put(value.co_code + repr(value.co_names).encode())
        _feed(digest, value.co_consts, seen)
    elif isinstance(value, (list, tuple)):
        put(f"{type(value).__name__}{len(value)}".encode())
        for item in value:
            _feed(digest, item, seen)
    elif isinstance(value, (set, frozenset)) and all(isinstance(v, _ATOMS) for v in value):
        _feed(digest, (type(value).__name__, sorted(map(repr, value))), seen)
    elif isinstance(value, dict):
        _feed(digest, list(value.items()), seen)
    elif isinstance(value, np.ma.MaskedArray):
        put(b"masked" + np.ma.getmaskarray(value).tobytes())
        _feed(digest, np.ma.getdata(value), seen)
    elif isinstance(value, np.ndarray):
        put(f"array{value.dtype}{value.shape}".encode())
        if value.dtype == object:
            _feed(digest, value.tolist(), seen)
        else:
            put(value.tobytes())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        put(f"dataclass:{type(value).__module__}.{type(value).__qualname__}".encode())
        _feed(digest, [getattr(value, field.name) for field in dataclasses.fields(value)],
              seen)   # an Eta the exponential rows hold (breaker review 34, F5)
    else:
        put(f"object:{type(value).__module__}.{type(value).__qualname__}".encode())


def row_version(pair: Pair) -> str:
    """The name of the row's folder in the store: a hash of the code (:func:`_code`) of the
    dpkit modules the row's function can run (:func:`row_modules`), of the row's two calls
    (:func:`_feed`), of the process's timing margin, and of the versions of Python, NumPy
    and gmpy2 (an upgrade changes every row's time)."""
    root = Path(dpkit.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in row_modules(pair.function):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + _code(path) + b"\0")
    _feed(digest, [pair.call_x, pair.call_y], {})
    gmpy2 = sys.modules.get("gmpy2")
    digest.update(f"{dpkit.timing.margin()}|{sys.version}|{np.__version__}|"
                  f"{getattr(gmpy2, 'version', lambda: None)()}".encode())
    return digest.hexdigest()[:12]


def row_id(pair: Pair) -> str:
    """The file name of a row in the store (the CRC-32 of its key, as in ``timing.py``)."""
    return f"{zlib.crc32(pair.key.encode()):08x}"


class Row:
    """One row's timings and chunks in the store."""

    def __init__(self, store: Path, pair: Pair) -> None:
        self.pair, self.version = pair, row_version(pair)
        self.folder = store / self.version
        self.log = self.folder / f"{row_id(pair)}.json"

        self.x = self.y = np.zeros(0, dtype=np.int64)
        self.chunks: list[dict] = []
        if self.log.exists():
            meta = json.loads(self.log.read_text(encoding="utf-8"))
            if meta["key"] != pair.key:
                raise RuntimeError(f"{self.log} holds {meta['key']!r}, not {pair.key!r}")
            self.chunks = meta["chunks"]
            timings = [self._read(number, chunk["calls"])
                       for number, chunk in enumerate(self.chunks)]
            self.x = np.concatenate([self.x, *(t[0] for t in timings)])
            self.y = np.concatenate([self.y, *(t[1] for t in timings)])

    def _chunk_file(self, number: int) -> Path:
        """Where chunk ``number`` (from 0) of the row keeps its timings."""
        return self.folder / f"{row_id(self.pair)}-{number:04d}.npy.xz"

    def _read(self, number: int, calls: int) -> np.ndarray:
        """Chunk ``number``'s timings, a ``(2, calls)`` int64 array (checked against its log)."""
        path = self._chunk_file(number)
        timings = np.load(io.BytesIO(lzma.decompress(path.read_bytes())), allow_pickle=False)
        if timings.dtype != np.int64 or timings.shape != (2, calls):
            raise RuntimeError(f"{path}: {timings.dtype} {timings.shape} timings, the chunk "
                               f"log says (2, {calls}) int64")
        return timings

    @property
    def calls(self) -> int:
        """Calls per side gathered so far."""
        return len(self.x)

    def seconds_per_call(self) -> float | None:
        """The mean time of one call in the chunks so far (None before the first)."""
        return float(np.concatenate([self.x, self.y]).mean()) / 1e9 if self.calls else None

    def add_chunk(self, calls: int, seed: int, max_load: float | None = None) -> dict:
        """Warm up, time ``calls`` calls per side (a fresh interleaving), and return the
        chunk's record; save it unless the load average at its start or end was above
        ``max_load`` (the record then has ``"discarded": True``)."""
        load, start = os.getloadavg()[0], time.perf_counter()
        warm_up(self.pair.call_x, self.pair.call_y)
        rng = np.random.default_rng([seed, zlib.crc32(self.pair.key.encode()), len(self.chunks)])
        overran = dpkit.timing.overruns()
        t_x, t_y = time_pair(self.pair.call_x, self.pair.call_y, calls, rng)
        reference = dpkit.timing.reference()
        chunk = {"date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                 "calls": calls, "overruns": dpkit.timing.overruns() - overran,
                 "load_1min": round(load, 2), "load_end": round(os.getloadavg()[0], 2),
                 "seconds": round(time.perf_counter() - start, 1), "seed": seed,
                 "reference_scalar_us": round(reference.scalar * 1e6, 3),
                 "reference_vector_ns": round(reference.vector * 1e9, 4)}
        if max_load is not None and max(chunk["load_1min"], chunk["load_end"]) > max_load:
            return {**chunk, "discarded": True}
        self._save(np.stack([t_x, t_y]).astype(np.int64), chunk)
        self.x, self.y = np.concatenate([self.x, t_x]), np.concatenate([self.y, t_y])
        self.chunks.append(chunk)
        return chunk

    def _save(self, timings: np.ndarray, chunk: dict) -> None:
        """Write the new chunk's timings, then the log with its record (each through a
        temporary file and a rename: a run stopped between the two leaves a chunk file the
        log does not list, overwritten by the next chunk)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        data, buffer = self._chunk_file(len(self.chunks)), io.BytesIO()
        np.save(buffer, timings, allow_pickle=False)
        partial = data.with_suffix(".tmp")
        partial.write_bytes(lzma.compress(buffer.getvalue(), preset=9))
        partial.replace(data)
        log = self.log.with_suffix(".tmp")
        log.write_text(json.dumps({"key": self.pair.key, "chunks": [*self.chunks, chunk]},
                                  indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        log.replace(self.log)

    def result(self, seed: int) -> dict:
        """The row certified on every call gathered, in ``timing.py``'s row format."""
        found = certify(self.x, self.y,
                        np.random.default_rng([seed, zlib.crc32(self.pair.key.encode())]))
        loads = [c["load_1min"] for c in self.chunks] + [c["load_end"] for c in self.chunks]
        pair = self.pair
        return {"function": pair.function, "size": pair.size, "pair": pair.description,
                "origin": pair.origin, "promised_epsilon": pair.promised, "calls": self.calls,
                "version": self.version, "overruns": sum(c["overruns"] for c in self.chunks),
                "load_1min": max(loads), "load_range": [min(loads), max(loads)],
                "chunks": len(self.chunks), "seconds": sum(c["seconds"] for c in self.chunks),
                "first": self.chunks[0]["date"], "last": self.chunks[-1]["date"],
                **found.__dict__, "verdict": verdict(found, pair.promised)}


def rows_of(store: Path, shard: tuple[int, int] | None = None) -> list[Row]:
    """Every audit row (or one shard of them) with what the store holds for its code."""
    pairs = all_pairs()
    if shard is not None:
        pairs = [p for p in pairs if zlib.crc32(p.key.encode()) % shard[1] == shard[0]]
    return [Row(store, pair) for pair in pairs]


def run(rows: list[Row], target: int, minutes: float, chunk_seconds: float, seed: int,
        max_load: float | None = None) -> None:
    """Add chunks, cheapest row first, until ``minutes`` have passed or all reach ``target``
    (a chunk timed above ``max_load`` is discarded: :meth:`Row.add_chunk`)."""
    stop = time.monotonic() + 60 * minutes
    cost = {id(r): r.seconds_per_call() for r in rows}
    for row in rows:
        if cost[id(row)] is None and row.calls < target:
            cost[id(row)] = warm_up(row.pair.call_x, row.pair.call_y)
    while time.monotonic() < stop:
        open_rows = [r for r in rows if r.calls < target]
        if not open_rows:
            print("every row has its calls", flush=True)
            return
        row = min(open_rows, key=lambda r: cost[id(r)] * (target - r.calls))
        left = stop - time.monotonic()
        fit = int(min(chunk_seconds, left) / (2 * cost[id(row)]))
        if fit < MIN_CHUNK and fit < target - row.calls:
            print(f"{left:.0f} s left: too little for a chunk of the cheapest open row",
                  flush=True)
            return
        calls = min(target - row.calls, max(MIN_CHUNK, fit))
        chunk = row.add_chunk(calls, seed, max_load)
        if chunk.get("discarded"):
            print(f"{row.pair.key}: chunk of {calls} discarded (load {chunk['load_1min']} to "
                  f"{chunk['load_end']}, above {max_load})", flush=True)
            continue
        cost[id(row)] = row.seconds_per_call()
        print(f"{row.pair.key}: +{calls} -> {row.calls} calls per side "
              f"({chunk['seconds']:.0f} s, load {chunk['load_1min']}, "
              f"{chunk['overruns']} overruns)", flush=True)


def status(rows: list[Row], target: int) -> str:
    """How far the store is: rows at the target, rows started, calls still needed, and an
    estimate of the time they need on one core."""
    done = sum(r.calls >= target for r in rows)
    started = sum(r.calls > 0 for r in rows)
    known = [r for r in rows if r.calls]
    hours = sum(r.seconds_per_call() * 2 * max(0, target - r.calls) for r in known) / 3600
    return (f"{done} of {len(rows)} rows have {target:,} calls per side; {started} have some; "
            f"the rows started still need about {hours:.1f} core-hours of calls"
            + (f", and {len(rows) - started} rows are not started" if started < len(rows) else ""))


def report(meta: dict, results: list[dict], missing: list[str]) -> str:
    """The Markdown page of the accumulated audit."""
    target = meta["target"]
    at_target = sum(r["calls"] >= target for r in results)
    passed = sum(r["verdict"] == "pass" for r in results)
    return "\n".join([
        "# Timing audit of dpkit's release functions, accumulated", "",
        f"`benchmarks/timing_accumulate.py`: chunks timed from {meta['first']} to "
        f"{meta['last']}; written {meta['date']} at commit `{meta['commit']}` (dpkit/ last "
        f"changed in `{meta['dpkit_commit']}`). Each row's calls ran the code that dpkit has in "
        f"every module the row's function imports: the store keeps a row's calls under a hash "
        f"of that code, of the row's two calls, of the timing margin and of the versions of "
        f"Python, NumPy and gmpy2 (`version` in the JSON); a row timed on anything else is not "
        f"reached.",
        "",
        f"Machine: {meta['cpu_count']} CPUs, {meta['platform']}, Python {meta['python']}, "
        f"NumPy {meta['numpy']}. Each row's load column is the largest 1-minute load average "
        f"seen at the start or end of its chunks.", "",
        f"Target: {target:,} calls per side. {at_target} of {len(results)} rows timed reach "
        f"it; {len(missing)} rows of the audit are not in the store yet. The statistics and "
        f"verdicts are those of `timing.py` (certified ε: Clopper–Pearson at 1 − 1e-6; "
        f"`pass`: certified ε ≤ {PASS_EPSILON} and accuracy ≤ {PASS_ACCURACY}), on every "
        f"call gathered for the row.", "",
        f"{passed} of {len(results)} rows timed pass.", "",
        markdown_table(results), "",
        *(["Not timed yet:", "", *[f"- {key}" for key in missing], ""] if missing else [])])


def write(rows: list[Row], store: Path, target: int, seed: int) -> None:
    """Certify every row with calls; write ``timing_accumulated.{md,json}``."""
    timed = [r for r in rows if r.calls]
    if not timed:
        raise SystemExit(f"nothing to write: the store {store} has no row of this code")
    results = [r.result(seed) for r in timed]
    dates = [c["date"] for r in timed for c in r.chunks]
    root = Path(dpkit.__file__).resolve().parent
    modules = sorted({str(path.relative_to(root)) for r in rows
                      for path in row_modules(r.pair.function)})
    source = hashlib.sha256()     # the modules' bytes now: a reader's copy compares with it
    for module in modules:
        source.update(module.encode() + b"\0" + (root / module).read_bytes() + b"\0")
    meta = {**environment(), "target": target, "seed": seed,
            "modules": modules, "source_hash": source.hexdigest()[:12],
            "first": min(dates)[:16].replace("T", " "), "last": max(dates)[:16].replace("T", " ")}
    missing = [r.pair.key for r in rows if not r.calls]
    page = report(meta, results, missing)
    (RESULTS / "timing_accumulated.md").write_text(page, encoding="utf-8")
    (RESULTS / "timing_accumulated.json").write_text(
        json.dumps({"meta": meta, "rows": results, "missing": missing}, indent=1,
                   ensure_ascii=False) + "\n", encoding="utf-8")
    print(page)


def prune(store: Path) -> None:
    """Delete the folders of ``store`` that hold the timings of code no row has now."""
    current = {row.version for row in rows_of(store)}
    for folder in sorted(store.iterdir()) if store.is_dir() else []:
        if folder.is_dir() and folder.name not in current:
            chunks = len(list(folder.glob("*.npy.xz")))
            shutil.rmtree(folder)
            print(f"pruned {folder.name}: {chunks} chunks of code that no row has now")


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="add calls to the store")
    parser.add_argument("--minutes", type=float, default=60.0,
                        help="how long --run adds calls (default 60)")
    parser.add_argument("--shard", default=None, help="i/n: only the rows of shard i of n")
    parser.add_argument("--target", type=int, default=TARGET,
                        help=f"calls per side each row should reach (default {TARGET})")
    parser.add_argument("--chunk-seconds", type=float, default=CHUNK_SECONDS,
                        help=f"timed seconds per chunk (default {CHUNK_SECONDS:.0f})")
    parser.add_argument("--seed", type=int, default=0, help="seeds interleavings and splits")
    parser.add_argument("--store", type=Path, default=STORE,
                        help=f"the store's folder (default {STORE})")
    parser.add_argument("--max-load", type=float, default=None,
                        help="discard a chunk timed at a 1-minute load average above this")
    parser.add_argument("--prune", action="store_true",
                        help="delete the store's folders of versions that no row has now")
    parser.add_argument("--write", action="store_true",
                        help="certify the rows and write timing_accumulated.{md,json}")
    args = parser.parse_args(argv)
    if args.shard is not None:
        i, _, n = args.shard.partition("/")
        if not (i.isdigit() and n.isdigit() and 0 <= int(i) < int(n)):
            parser.error(f"--shard must be i/n with 0 <= i < n, got {args.shard!r}")
        args.shard = (int(i), int(n))
    if args.minutes <= 0 or args.target < 1 or args.chunk_seconds <= 0 or (
            args.max_load is not None and args.max_load <= 0):
        parser.error("--minutes, --target, --chunk-seconds and --max-load must be positive")
    return args


def main(argv: list[str] | None = None) -> None:
    """Show the store's state; with ``--run`` add calls; with ``--write`` write the table."""
    args = parse(argv)
    rows = rows_of(args.store, args.shard)
    print(f"store {args.store}: {status(rows, args.target)}", flush=True)
    if args.run:
        loaded = _release_modules()
        run(rows, args.target, args.minutes, args.chunk_seconds, args.seed, args.max_load)
        if _release_modules() != loaded:
            raise SystemExit("dpkit modules were loaded during the calls that were not loaded "
                             f"before: {sorted(set(_release_modules()) - set(loaded))}; "
                             "import them in timing.py: their code may be in no row's hash")
        print(f"store {args.store}: {status(rows, args.target)}", flush=True)
    if args.prune:
        prune(args.store)
    if args.write:
        write(rows_of(args.store), args.store, args.target, args.seed)


if __name__ == "__main__":
    main()
