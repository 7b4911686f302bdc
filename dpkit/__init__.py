"""dpkit: exact, floating-point-safe differential privacy for *Differential Privacy, Interactively*.

The safe mechanisms live in one module per topic (:mod:`dpkit.randomized_response`,
:mod:`dpkit.laplace`, :mod:`dpkit.gaussian`, :mod:`dpkit.exponential`, :mod:`dpkit.svt`,
:mod:`dpkit.composition`); they validate their input through :mod:`dpkit._checks`, draw
randomness from :mod:`dpkit.rng` (secure by default, seeded only for teaching) and noise
from the private exact samplers of :mod:`dpkit._samplers`.

Above that core, and never imported by it: :mod:`dpkit.naive` (the deliberately unsafe
textbook versions) and :mod:`dpkit.attacks` (the attacks that break them), then
:mod:`dpkit.plots`, :mod:`dpkit.check` and :mod:`dpkit.widgets` for the chapters, and
:mod:`dpkit.course` for teachers (``python -m dpkit.course``). ``tests/test_layout.py``
keeps the imports one way.

Examples
--------
Submodules load on first use:

>>> import dpkit
>>> dpkit.laplace.laplace_scale(1.0, 0.5)
2.0
>>> release = dpkit.laplace.laplace_mechanism(10.0, 1.0, 0.5, rng=dpkit.rng.seeded(1))
>>> abs(release - 10.0) < 100
True
"""

__version__ = "0.1.0"

import importlib
from types import ModuleType

_SUBMODULES = frozenset({
    "attacks", "audit", "check", "composition", "datasets", "exponential", "gaussian",
    "laplace", "naive", "plots", "randomized_response", "rng", "snapping", "svt", "timing",
    "widgets",
})


def __getattr__(name: str) -> ModuleType:
    """Import submodules on first use, so ``import dpkit; dpkit.check.…`` works cheaply."""
    if name in _SUBMODULES:
        return importlib.import_module(f"dpkit.{name}")
    raise AttributeError(f"module 'dpkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES)
