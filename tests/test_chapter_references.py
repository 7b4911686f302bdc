"""Theorem numbers in the analytic_gaussian and composition chapters and in what their code
prints and draws.

The book numbers its own theorems by chapter, so a number taken from another book must come
with its source ("Dwork and Roth, Theorem 3.20"): a bare "Theorem 3.20" or "Thm 3.20" reads as
one of the book's own, in another chapter (student review of analytic_gaussian and
composition, finding 1). The chapters name their own results with ``{prf:ref}``; their code
output, figures and exercise checks name them in words ("advanced composition", "the classic
theorem").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from matplotlib.text import Text

from dpkit.plots import composition, gaussian
from dpkit.plots._style import alt_text

BOOK = Path(__file__).resolve().parent.parent / "book"
CHAPTERS = ("analytic_gaussian", "composition")

#: A numbered result of the form a book uses ("Theorem 3.20", "Cor. 3.21", "Theorem A.1").
_NUMBERED = re.compile(r"\b(?:Theorem|Thm\.?|Corollary|Cor\.|Lemma|Example|Proposition)"
                       r"\s+(?:[A-Z]\.\d+|\d+\.\d+)")
#: What may stand right before it: its authors ("Dwork and Roth, ", "Dwork & Roth's "), a
#: citation role ("{cite:p}`dwork2014algorithmic` ("), or "their" after the authors.
_SOURCE = re.compile(r"(?:[A-Z][a-z]+\s+(?:and|&)\s+[A-Z][a-z]+(?:'s)?|`[\w-]+`|\btheir)"
                     r"[,\s(]*$")


#: An earlier number of the same list ("Theorem 3.20 and Corollary 3.21"): the source
#: before the list counts for each of its numbers.
_LISTED = re.compile(_NUMBERED.pattern + r"\s*(?:,|and|;)\s*$")


def bare_numbers(text: str) -> list[str]:
    """The numbered results in ``text`` not preceded by their source, with 40 characters
    before each."""
    found = []
    for match in _NUMBERED.finditer(text):
        before = " ".join(text[max(0, match.start() - 120):match.start()].split())
        while (listed := _LISTED.search(before)) is not None:
            before = before[:listed.start()].rstrip()
        if not _SOURCE.search(before):
            found.append(f"...{before[-40:]} {match.group(0)}")
    return found


def test_the_rule_finds_a_bare_number_and_accepts_a_sourced_one() -> None:
    """The rule can fail: each bare form the review found is caught, each sourced form is
    not."""
    for bare in ("citing Theorem A.1. Is", "ε = 1: end of\nTheorem A.1", "Thm 3.20 total",
                 '"advanced (Thm 3.20)"', "prove its Corollary 3.21,", "the decomposition of "
                 "Lemma 3.17 described there", "their claim; Theorem 3.20 and Corollary 3.21"):
        assert bare_numbers(bare), bare
    for sourced in ("(Dwork and Roth, Theorem 3.20)",
                    "(Dwork and\n  Roth, Theorem 3.20 and Corollary 3.21)",
                    "{cite:p}`dwork2014algorithmic` (Theorem 3.20)", "their Lemma 3.17",
                    "(Dwork & Roth's Theorem A.1)", "{cite:t}`bao2021cgm` (Lemma 2.4)",
                    "(Bun and Steinke, Lemma 1.7)"):
        assert not bare_numbers(sourced), sourced


@pytest.mark.parametrize("stem", CHAPTERS)
def test_no_bare_theorem_number_of_another_book(stem: str) -> None:
    assert bare_numbers((BOOK / f"{stem}.md").read_text()) == []


@pytest.mark.parametrize("builder, kwargs", [
    (composition.composition_figure, {"epsilon0": 0.1, "delta_prime": 1e-6, "k_max": 100,
                                      "points": 5}),
    (composition.textbook_crossover_figure, {"epsilon": 1.0, "delta": 10e-5, "k_max": 100}),
    (gaussian.classic_validity_figure, {"deltas": (1e-3,)}),
], ids=lambda value: getattr(value, "__name__", ""))
def test_figures_name_no_bare_theorem_number(builder, kwargs) -> None:
    """Every text drawn (labels, legend, annotations) and the text alternative."""
    figure = builder(**kwargs)
    texts = [text.get_text() for text in figure.findobj(Text)] + [alt_text(figure)]
    assert [found for text in texts for found in bare_numbers(text)] == []
