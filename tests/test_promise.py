"""Figures of the intro and promise chapters, and numbers typed in their prose."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from matplotlib.figure import Figure

from dpkit.audit import tradeoff_bound
from dpkit.plots.intro import CHAPTER_MAP, chapter_map_figure
from dpkit.plots.promise import output_distributions, tradeoff_figure

ROOT = Path(__file__).resolve().parent.parent


def test_chapter_map_follows_the_table_of_contents() -> None:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    entries = [c for part in toc.get("parts", [toc]) for c in part["chapters"]]
    chapters = [Path(toc["root"]).name] + [Path(c["file"]).name for c in entries]
    mapped = [name for name, _, _, _ in CHAPTER_MAP]
    assert mapped == [c for c in chapters if c in mapped]
    assert set(chapters) - set(mapped) <= {"errata", "teaching", "performance", "bibliography"}
    numbered = [Path(c["file"]).name for part in toc.get("parts", [])
                if part.get("numbered") for c in part["chapters"]]
    for i, (name, number, title, needs) in enumerate(CHAPTER_MAP):
        assert set(needs) <= set(mapped[:i])   # a chapter builds only on earlier ones
        # the book's numbering (numbered parts count from 1; the root is unnumbered) and the
        # title of the chapter's "# " heading
        assert number == (numbered.index(name) + 1 if name in numbered else None)
        if number is not None:
            heading = re.search(r"^# (.+)$", (ROOT / "book" / f"{name}.md").read_text(),
                                re.MULTILINE)
            assert heading is not None and title == heading.group(1).strip()
    assert isinstance(chapter_map_figure(), Figure)


@pytest.mark.parametrize("epsilon, delta", [(0.25, 0.0), (1.0, 0.0), (1.0, 0.01), (2.0, 0.05)])
def test_example_outputs_are_private_and_tight(epsilon: float, delta: float) -> None:
    """The figure's two output distributions are (ε, δ)-DP: their threshold tests respect
    the trade-off bound, and come close to it (they are calibrated exactly)."""
    on_d, on_d_prime = output_distributions(epsilon, delta)
    thresholds = np.linspace(-40, 41, 4001)
    alpha, beta = on_d.sf(thresholds), on_d_prime.cdf(thresholds)
    bound = np.array([tradeoff_bound(a, epsilon, delta) for a in alpha])
    assert np.all(beta >= bound - 1e-9)
    assert np.min(beta - bound) < 1e-3
    figure = tradeoff_figure(epsilon, delta)
    assert isinstance(figure, Figure) and len(figure.axes) == 2


def test_household_numbers_in_the_group_privacy_solution() -> None:
    """ex-promise-group: "δ = 10^{-6}(1 + e^{0.5} + e^{1} + e^{1.5}) ≈ 9.8 × 10^{-6}, at most
    4e^{1.5} × 10^{-6} ≈ 1.8 × 10^{-5}"."""
    text = (ROOT / "book" / "promise.md").read_text()
    assert r"\approx 9.8 \times 10^{-6}" in text and r"\approx 1.8 \times 10^{-5}" in text
    assert f"{sum(math.exp(0.5 * i) for i in range(4)):.1f}" == "9.8"
    assert f"{4 * math.exp(1.5) / 10:.1f}" == "1.8"


def test_intro_epsilon_sentence() -> None:
    """intro: "$e^{0.1} \\approx 1.10517$, so at ε = 0.1 no event becomes more than 10.52%
    more likely": the bound must be true (e^0.1 − 1 = 0.10517…; "10.5%" was not)."""
    text = (ROOT / "book" / "intro.md").read_text()
    assert re.search(r"e\^\{0\.1\} \\approx 1\.10517\$", text)
    assert f"{math.exp(0.1):.5f}" == "1.10517"
    stated = re.search(r"no\s+event becomes more than ([\d.]+)% more likely", text)
    assert stated is not None
    assert 100 * (math.exp(0.1) - 1) <= float(stated[1])


def test_figure_parameters_are_validated() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        tradeoff_figure(0.0, 0.0)
    with pytest.raises(ValueError, match="delta"):
        output_distributions(1.0, 1.0)


@pytest.mark.parametrize("chapter", sorted(p.stem for p in (ROOT / "book").glob("*.md")))
def test_dollar_signs_in_prose_are_escaped(chapter: str) -> None:
    """A bare "$50K" in Markdown prose opens TeX math and garbles the paragraph; code cells
    (between ``` fences) print dollars verbatim and are exempt."""
    text = (ROOT / "book" / f"{chapter}.md").read_text()
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    assert not re.search(r"(?<!\\)\$\d+K", prose)


def test_parallel_composition_under_substitution_states_the_delta_of_group_privacy() -> None:
    """promise: under substitution parallel composition gives (2ε, (1 + e^ε)δ), not (2ε, 2δ)."""
    text = (ROOT / "book" / "promise.md").read_text()
    assert r"is $(2\varepsilon, (1 + e^\varepsilon)\delta)$-DP under substitution" in text
    assert 1 + math.exp(0.0) == 2  # the (2ε, 2δ) of a moved record is never larger


@pytest.mark.parametrize("chapter", sorted(
    p.stem for p in (ROOT / "book").glob("*.md")
    if "```{admonition} Learning goals" in p.read_text()))
def test_learning_goals_look_alike_in_every_chapter(chapter: str) -> None:
    """Each chapter opens with a paragraph, then its "Learning goals" box in the same style
    (issue #20: composition and sparse_vector opened with a plain blue box)."""
    text = (ROOT / "book" / f"{chapter}.md").read_text()
    title = text.index("\n# ")
    box = text.index("```{admonition} Learning goals\n")
    assert text[box:].split("\n")[1] == ":class: tip"
    opening = text[text.index("\n", title + 1):box]
    assert re.search(r"\w.*\.\s*$", opening, flags=re.S), "no opening paragraph"


@pytest.mark.parametrize("epsilon, delta", [(1.0, 0.05), (0.25, 0.01), (2.0, 0.01)])
def test_the_figure_shades_both_excursions_and_their_areas_are_as_the_text_says(
        epsilon: float, delta: float) -> None:
    """promise, the trade-off figure: with δ > 0 the density on D leaves the band above its
    upper edge and below its lower edge, and both are shaded (only the upper one was, student
    review finding 4). The text says the upper red area is δ and the lower one δe^{-ε}."""
    from scipy import integrate

    hatched = [c for c in tradeoff_figure(epsilon, delta).axes[0].collections if c.get_hatch()]
    assert len(hatched) == 2
    assert not [c for c in tradeoff_figure(epsilon, 0.0).axes[0].collections if c.get_hatch()]
    on_d, on_d_prime = output_distributions(epsilon, delta)
    grow = math.exp(epsilon)

    def area(excess):
        return integrate.quad(lambda y: max(0.0, excess(y)), -80, 80, points=[0.5],
                              limit=400)[0]

    upper = area(lambda y: on_d.pdf(y) - grow * on_d_prime.pdf(y))
    lower = area(lambda y: on_d_prime.pdf(y) / grow - on_d.pdf(y))
    assert upper == pytest.approx(delta, rel=1e-6)
    assert lower == pytest.approx(delta / grow, rel=1e-6)
    text = (ROOT / "book" / "promise.md").read_text()
    assert "the calibration makes it $\\delta$" in text
    assert "of those outputs: $\\delta e^{-\\varepsilon}$" in text
