"""Colour arithmetic for the accessibility tests: colour-vision deficiency simulation,
CIELAB, CIEDE2000 and the WCAG contrast ratio. Implemented here (no dependency) so the tests
state exactly what they measure.

- Simulation: Machado, Oliveira & Fernandes (2009), "A physiologically-based model for
  simulation of color vision deficiency", IEEE TVCG 15(6):1291–1298, matrices for severity
  1.0 (dichromacy), applied to linear sRGB and clipped to the gamut, as their paper and the
  browsers' developer tools do. Their tritanopia model is the least validated of the three.
- CIELAB: CIE 15:2004, sRGB (IEC 61966-2-1) primaries, D65 white.
- CIEDE2000: Sharma, Wu & Dalal (2005), "The CIEDE2000 color-difference formula:
  implementation notes, supplementary test data, and mathematical observations", Color
  Research & Application 30(1):21–30 (``SHARMA_PAIRS`` holds rows of their test data).
- Contrast: WCAG 2.2, definitions of *relative luminance* and *contrast ratio*.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.colors

Matrix = tuple[tuple[float, float, float], ...]

#: Machado et al. (2009), Table 1 at severity 1.0; "normal" is the identity.
SIMULATIONS: dict[str, Matrix] = {
    "normal": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    "protanopia": ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216),
                   (-0.003882, -0.048116, 1.051998)),
    "deuteranopia": ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                     (-0.011820, 0.042940, 0.968881)),
    "tritanopia": ((1.255528, -0.076749, -0.178779), (-0.078411, 0.930809, 0.147602),
                   (0.004733, 0.691367, 0.303900)),
}

#: Sharma et al. (2005), Table 1, pairs 1, 7, 17, 25 and 34: (Lab 1, Lab 2, ΔE00).
SHARMA_PAIRS = (
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
)


def linear_rgb(colour: str | Sequence[float]) -> tuple[float, float, float]:
    """Linear sRGB components of a matplotlib colour (alpha ignored)."""
    r, g, b = matplotlib.colors.to_rgb(colour)
    return tuple(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
                 for c in (r, g, b))


def simulate(rgb: Sequence[float], deficiency: str) -> tuple[float, float, float]:
    """Linear sRGB as seen with ``deficiency`` (a key of :data:`SIMULATIONS`), clipped."""
    matrix = SIMULATIONS[deficiency]
    return tuple(min(1.0, max(0.0, sum(m * c for m, c in zip(row, rgb, strict=True))))
                 for row in matrix)


def relative_luminance(rgb: Sequence[float]) -> float:
    """WCAG relative luminance of linear sRGB."""
    r, g, b = rgb
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(colour: str, background: str = "white") -> float:
    """WCAG contrast ratio ``(L1 + 0.05) / (L2 + 0.05)`` of two colours, from 1 to 21."""
    high, low = sorted((relative_luminance(linear_rgb(colour)),
                        relative_luminance(linear_rgb(background))), reverse=True)
    return (high + 0.05) / (low + 0.05)


def lab(rgb: Sequence[float]) -> tuple[float, float, float]:
    """CIELAB (D65) of linear sRGB."""
    r, g, b = rgb
    xyz = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b,
           0.2126729 * r + 0.7151522 * g + 0.0721750 * b,
           0.0193339 * r + 0.1191920 * g + 0.9503041 * b)

    def f(t: float) -> float:
        return math.cbrt(t) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = (f(v / w) for v, w in zip(xyz, (0.95047, 1.0, 1.08883), strict=True))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def ciede2000(lab1: Sequence[float], lab2: Sequence[float]) -> float:
    """The CIEDE2000 colour difference (kL = kC = kH = 1), as Sharma et al. (2005) give it."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1 = math.degrees(math.atan2(b1, a1)) % 360 if c1 else 0.0
    h2 = math.degrees(math.atan2(b2, a2)) % 360 if c2 else 0.0
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_big_h = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    l_mean, c_mean = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_mean = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_mean = (h1 + h2) / 2
    else:
        h_mean = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(h_mean - 30))
         + 0.24 * math.cos(math.radians(2 * h_mean))
         + 0.32 * math.cos(math.radians(3 * h_mean + 6))
         - 0.20 * math.cos(math.radians(4 * h_mean - 63)))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * c_mean
    s_h = 1 + 0.015 * c_mean * t
    r_t = (-2 * math.sqrt(c_mean**7 / (c_mean**7 + 25**7))
           * math.sin(math.radians(60 * math.exp(-(((h_mean - 275) / 25) ** 2)))))
    dl, dc, dh_ = (l2 - l1) / s_l, (c2 - c1) / s_c, d_big_h / s_h
    return math.sqrt(dl**2 + dc**2 + dh_**2 + r_t * dc * dh_)


def difference(colour1: str, colour2: str, deficiency: str = "normal") -> float:
    """CIEDE2000 between two colours as a reader with ``deficiency`` sees them."""
    return ciede2000(lab(simulate(linear_rgb(colour1), deficiency)),
                     lab(simulate(linear_rgb(colour2), deficiency)))
