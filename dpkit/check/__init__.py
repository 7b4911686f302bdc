"""Exercise checkers: each takes a student's answer and returns a readable :class:`Verdict`.

One submodule per chapter; the checks are deterministic (fixed seeds), so a teacher grading
a class gets the same verdicts as the student did.

Verdicts speak the reader's language (:func:`dpkit.i18n.language`: ``set_language`` or
``DPKIT_LANG``): every message is an English template passed through :func:`dpkit.i18n.tr`,
whose Simplified Chinese is in :mod:`dpkit.i18n_check`; only the text changes with the
language, never what is checked or the numbers a verdict reports.
"""


from dpkit.check._verdict import Verdict
from dpkit.check.composition import *  # noqa: F403
from dpkit.check.exponential import *  # noqa: F403
from dpkit.check.gaussian import *  # noqa: F403
from dpkit.check.intro import *  # noqa: F403
from dpkit.check.laplace import *  # noqa: F403
from dpkit.check.promise import *  # noqa: F403
from dpkit.check.svt import *  # noqa: F403

__all__ = ["Verdict"]
