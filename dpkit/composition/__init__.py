"""Composition: how privacy loss adds up over many releases, and a budget that enforces it.

The code is being split into modules; for now everything lives in
:mod:`dpkit.composition.optimal`.
"""

from dpkit.composition.optimal import *  # noqa: F403
from dpkit.composition.optimal import __all__  # noqa: F401
