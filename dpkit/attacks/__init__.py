"""Attacks on the unsafe mechanisms of :mod:`dpkit.naive`, with measured success rates.

Each attack can also be pointed at the matching safe mechanism, where it must do no better
than chance: that comparison is what the book's attack demonstrations show.

Examples
--------
The attacks are importable from the package:

>>> import dpkit.attacks
>>> dpkit.attacks.averaging_attack.__module__
'dpkit.attacks.composition'
"""

from dpkit.attacks.composition import *  # noqa: F403
from dpkit.attacks.exponential import *  # noqa: F403
from dpkit.attacks.laplace import *  # noqa: F403
from dpkit.attacks.svt import *  # noqa: F403
