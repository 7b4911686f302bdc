"""The numbers of the Laplace chapter's "Under the hood: timing" section that its cells do not
print: each is recomputed here and must appear in both editions' prose.

* The sampling error of the timing attack's differences ("time adds", the gap from chance),
  simulated with the attacker's own code (:mod:`dpkit.attacks.laplace`) at the chapter's sizes
  on releases whose time carries no signal (a review found the prose's earlier claim, that
  both err more than one share, false for the paired "time adds").
* Where a scalar draw stops walking its trials (the scale ``2**55`` grid units), in ε, what
  it reads beyond (as the docstring of :mod:`dpkit._samplers.interval` says too), and how many
  digits a geometric draw decides (``I``).

Deterministic: fixed seeds, no timing.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from dpkit._samplers.bernoulli import GROUP, GROUP_BITS, fixed_plan
from dpkit._samplers.fixed_cost import fixed_discrete_laplace
from dpkit._samplers.interval import MAX_DIGITS
from dpkit.attacks.laplace import _noise_size_guess, learn_timing_profile, timing_attack
from dpkit.laplace import laplace_grid
from dpkit.rng import seeded

BOOK = Path(__file__).resolve().parent.parent / "book"
EDITIONS = {"en": (BOOK / "laplace.md", "## Exercises"),
            "zh": (BOOK / "zh" / "laplace.md", "## 练习")}

# The chapter's attack: sums 0 and 10, ε = 0.5 (scale 20), 1,500 training and test releases.
CANDIDATES, SCALE, EPSILON, N = np.array([0.0, 10.0]), 20.0, 0.5, 1500


def timing_section(edition: str) -> str:
    """The section "Under the hood: timing" of one edition, each run of white space one space."""
    path, end = EDITIONS[edition]
    text = path.read_text()
    start = text.index("(laplace-timing)=")
    return " ".join(text[start:text.index(end, start)].split())


def points(value: float, digits: int) -> str:
    """``value`` as the prose writes it: a true minus sign, a plus sign, no ``-0``."""
    text = f"{abs(value):.{digits}f}"
    if float(text) == 0:
        return "0"
    return ("−" if value < 0 else "+") + text


def simulate(reps: int, seed: int) -> dict[str, np.ndarray]:
    """The chapter's attack on releases whose time is independent noise: per repetition,
    "time adds" (points), the gap from chance (points) and the share of test releases on
    which the two which-dataset guesses agree."""
    rng = np.random.default_rng(seed)
    gains, gaps, agree = [], [], []
    for _ in range(reps):
        noise_train, time_train = rng.laplace(0, SCALE, N), rng.normal(size=N)
        profile = learn_timing_profile(noise_train, time_train)
        secret, noise, times = rng.integers(0, 2, N), rng.laplace(0, SCALE, N), rng.normal(size=N)
        releases = CANDIDATES[secret] + noise
        with_time = timing_attack(releases, times, CANDIDATES, SCALE, profile)
        output_only = timing_attack(releases, times, CANDIDATES, SCALE, None)
        gains.append(np.mean(with_time == secret) - np.mean(output_only == secret))
        agree.append(np.mean(with_time == output_only))
        size, chance = _noise_size_guess(np.concatenate([noise_train, noise]),
                                         np.concatenate([time_train, times]),
                                         profile.cost_edges, N)
        gaps.append(size - chance)
    return {"gain": 100 * np.array(gains), "gap": 100 * np.array(gaps), "agree": np.array(agree)}


def test_the_sampling_error_of_time_adds_and_of_the_gap_from_chance() -> None:
    """"Time adds" spreads less than one share and is biased downward; the gap from chance
    spreads more and is biased downward too; their 95% ranges are those the prose gives."""
    runs = simulate(reps=1000, seed=1)
    bound = math.exp(EPSILON) / (1 + math.exp(EPSILON))
    one_share = 100 * math.sqrt(bound * (1 - bound) / N)      # the first line's share, in points
    gain, gap = runs["gain"], runs["gap"]
    assert gain.std() < one_share < gap.std()
    assert np.median(runs["agree"]) > 0.5                      # "agree on most of them"
    assert gain.mean() < -1 and gap.mean() < -1                # both biased downward
    gain_range = [points(v, 1) for v in np.percentile(gain, [2.5, 97.5])]
    gap_range = [points(v, 0) for v in np.percentile(gap, [2.5, 97.5])]
    assert (gain_range, gap_range) == (["−3.4", "0"], ["−5", "+2"])
    en, zh = timing_section("en"), timing_section("zh")
    for low, high in (gain_range, gap_range):
        assert f"between about {low} and {high} points" in en
        assert f"约 {low} 到 {high} 个百分点之间" in zh


def walks(sensitivity: float, epsilon: float) -> bool:
    """Whether a scalar release at (Δ, ε) draws its noise by the interval walk."""
    return fixed_plan(laplace_grid(sensitivity, epsilon).scale_units)[0] <= MAX_DIGITS


def test_where_a_scalar_draw_stops_walking() -> None:
    """The walk stops at ``2**55`` grid units: at Δ = 1 below ε ≈ 2.9e-11, and at any Δ only
    below about 5.8e-11 (the sensitivity is at most ``2**21 + 1`` grid units whatever Δ, and
    ``2**21`` at the worst Δ, just below 2: ε = 2**-34 ≈ 5.82e-11); above, one
    value's two geometrics decide their digits ``GROUP`` at a time, ``GROUP_BITS`` bits a
    group."""
    assert walks(1.0, 2.92e-11) and not walks(1.0, 2.90e-11)
    for sensitivity in (1.0, 1.5, 2 - 2**-52, 3.0, 10.0, 0.7, 1e-300, 1e100, 2**20 - 1):
        assert walks(sensitivity, 5.83e-11)
        grid = laplace_grid(sensitivity, 1.0)
        assert grid.sensitivity_units <= 2**21 + 1
    assert not walks(2 - 2**-52, 5.81e-11)         # about 5.8e-11: the worst Δ's
    assert fixed_plan(Fraction(2**55 - 1))[0] <= MAX_DIGITS < fixed_plan(Fraction(2**55))[0]
    source, read = seeded(1), []
    original = source.read
    source.read = lambda n: read.append(n) or original(n)
    fixed_discrete_laplace(Fraction(2**56), 1, source)
    digits = fixed_plan(Fraction(2**56))[0] + 1                  # the digits and the tail trial
    assert (GROUP, GROUP_BITS) == (8, 72)
    assert sum(read) * 8 == 2 * math.ceil(digits / GROUP) * GROUP_BITS
    assert (sum(read), 2 * digits * 64 // 8) == (144, 1024)    # dpkit._samplers.interval's
    en, zh = timing_section("en"), timing_section("zh")
    assert ("$2^{55}$ grid units or more ($\\varepsilon$ below a threshold between about "
            "$2.9 \\cdot 10^{-11}$ and $5.8 \\cdot 10^{-11}$ that depends on $\\Delta$: "
            "$2.9 \\cdot 10^{-11}$ at $\\Delta = 1$)") in en
    assert "whatever $\\Delta$" not in en                       # review rev33a, 11: misread
    assert "8 at a time, each group by one uniform of 72 random bits" in en
    for number in ("该阈值约在 $2.9 \\cdot 10^{-11}$ 与 $5.8 \\cdot 10^{-11}$ 之间，"
                   "$\\Delta = 1$ 时约为 $2.9 \\cdot 10^{-11}$", "72 个随机比特"):
        assert number in zh
    appendix = {edition: " ".join(path.read_text().split()) for edition, path in
                (("en", BOOK / "performance.md"), ("zh", BOOK / "zh" / "performance.md"))}
    assert "decided 8 at a time, each group by one uniform of 72 bits" in appendix["en"]
    assert "每 8 位一组来决定，每组由一个 72 个比特的均匀随机数决定" in appendix["zh"]


@pytest.mark.parametrize("scale", [Fraction(1), Fraction(1, 3), Fraction(2097154), Fraction(5, 2)])
def test_the_digits_a_geometric_draw_decides(scale: Fraction) -> None:
    """``2**I`` is the least power of two above ``ceil(64·b)`` (so ``2**I > 64·b``): at
    ``b = 1``, ``I = 7``, as the prose says."""
    top = fixed_plan(scale)[0]
    assert 2**top > math.ceil(64 * scale) >= 2 ** (top - 1)
    if scale == 1:
        assert top == 7
        assert "$I = 7$ at $b = 1$" in timing_section("en")
        assert "$b = 1$ 时 $I = 7$" in timing_section("zh")


def test_the_common_noise_scales_in_epsilon() -> None:
    """Review rev33c 5: one value's "common noise scales" are those below ``2**25`` grid units,
    where the float path adds no extra allowance (``LONG_WALK``). In ε: from about 0.0625 at
    Δ = 1, and from at most 1/8 at any Δ (the sensitivity is at most ``2**21 + 1`` grid units,
    see above, so at ε ≥ 1/8 the scale is at most ``2**24 + 8``). Both editions say so."""
    from dpkit.laplace import scalar_extra_work

    def far(sensitivity: float, epsilon: float) -> bool:
        return scalar_extra_work(laplace_grid(sensitivity, epsilon).scale_units, True) > 0

    assert far(1.0, 0.0624) and not far(1.0, 0.0625)
    assert far(2 - 2**-52, 0.1249)
    for sensitivity in (1.0, 1.5, 2 - 2**-52, 3.0, 10.0, 0.7, 1e-300, 1e100, 2**20 - 1):
        assert not far(sensitivity, 0.125)
    assert ("(below $2^{25}$ grid units: $\\varepsilon$ from about 0.0625 at $\\Delta = 1$, "
            "from at most $1/8$ at any $\\Delta$)") in timing_section("en")
    assert ("低于 $2^{25}$ 个网格单位：$\\Delta = 1$ 时 $\\varepsilon$ 约从 0.0625 起，"
            "无论 $\\Delta$ 为何至多从 $1/8$ 起") in timing_section("zh")


def test_the_overrun_rate_quoted_for_a_1000_value_row() -> None:
    """Review rev33b 4: "the appendix's accumulated audit saw about 1% of the calls of one
    1,000-value Laplace row overrun at load about 2", from the committed results (each call
    of a row is timed on both sides: 2 × calls timed calls). A rewrite of the results that
    changes it fails here, so that the sentence is checked again."""
    import json
    results = BOOK.parent / "benchmarks" / "results" / "timing_accumulated.json"
    rows = [row for row in json.loads(results.read_text())["rows"]
            if row["function"] == "laplace_mechanism" and row["size"] == "1000"]
    worst = max(rows, key=lambda row: row["overruns"] / row["calls"])
    assert 0.0075 <= worst["overruns"] / (2 * worst["calls"]) < 0.015
    assert 1.5 <= worst["load_1min"] < 2.5
    assert ("about 1% of the calls of\none 1,000-value Laplace row overrun at load about 2"
            .replace("\n", " ")) in timing_section("en")
    assert "约有 1% 的调用超时" in timing_section("zh")
