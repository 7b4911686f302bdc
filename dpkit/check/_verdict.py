"""The result type every exercise checker returns."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from dpkit.i18n import tr


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking a student's answer.

    Attributes
    ----------
    passed : bool
        Whether the answer is accepted.
    message : str
        One sentence a student can act on: where the answer fails and what is wrong with it
        (a failing verdict never states the expected answer), or what a passing answer
        achieves.
    details : tuple of str
        Supporting facts (test statistics, measured values), shown under the message.

    The checkers write ``message`` and ``details`` in the current language
    (:func:`dpkit.i18n.language`), and so are the headings printed here ("NOT YET",
    "PASSED"): Simplified Chinese when it is ``"zh"``, English otherwise.

    Examples
    --------
    >>> verdict = Verdict(False, "the scale should grow when epsilon shrinks", ("eps=1: 1.0",))
    >>> bool(verdict)
    False
    >>> print(verdict)
    NOT YET: the scale should grow when epsilon shrinks
      - eps=1: 1.0
    """

    passed: bool
    message: str
    details: tuple[str, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        head = (tr("PASSED: {message}") if self.passed
                else tr("NOT YET: {message}")).format(message=self.message)
        return "\n".join([head, *("  - " + d for d in self.details)])

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#b35900"
        items = "".join(f"<li>{html.escape(d)}</li>" for d in self.details)
        label = tr("Passed:") if self.passed else tr("Not yet:")
        return (f'<div style="border-left:4px solid {colour};padding:0.3em 0.8em">'
                f"<strong>{label}</strong> {html.escape(self.message)}"

                f"{'<ul>' + items + '</ul>' if items else ''}</div>")
