"""Exercise checkers: each takes a student's answer and returns a readable :class:`Verdict`.

One submodule per chapter; the checks are deterministic (fixed seeds), so a teacher grading
a class gets the same verdicts as the student did.
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
