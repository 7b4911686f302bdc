"""Deliberately unsafe textbook mechanisms: **never use these to release data**.

Each function reproduces a classic textbook or library implementation faithfully, bugs
that matter for the lesson included, so that :mod:`dpkit.attacks` can break it. Every
docstring states the privacy the function really gives. The safe versions live in
:mod:`dpkit.laplace`, :mod:`dpkit.gaussian`, :mod:`dpkit.exponential` and :mod:`dpkit.svt`.

Examples
--------
>>> import dpkit.naive
>>> "never use" in dpkit.naive.__doc__.lower()
True
"""

from dpkit.naive.exponential import *  # noqa: F403
from dpkit.naive.gaussian import *  # noqa: F403
from dpkit.naive.laplace import *  # noqa: F403
from dpkit.naive.svt import *  # noqa: F403
