"""The language of dpkit's figures and widgets, and their one message catalogue.

The book has an English and a Simplified Chinese edition with the same code cells: the
figure builders (:mod:`dpkit.plots`) and the widgets (:mod:`dpkit.widgets`) pass every label
they draw through :func:`tr`, which returns it in the current :func:`language`. The language is
the one set by :func:`set_language`, else the environment variable ``DPKIT_LANG`` (the zh
build of the book sets it in its kernels), else English.

The catalogue is keyed by the English text: a text with no entry for a language is shown in
English, so an untranslated label is never lost. A label with values in it is a template
(``tr("ε = {epsilon}")``, formatted by the caller). A translation never puts Chinese inside a
label with matplotlib mathtext (``$...$``): mathtext draws with its own fonts, which have no
CJK glyphs, so such a translation writes the formula in plain Unicode. Only teaching code
imports this module; the DP core (mechanisms, calibration, composition, samplers) has no text
to translate.

The exercise checkers' messages (:mod:`dpkit.check`) go through the same :func:`tr`; their
translations live in :mod:`dpkit.i18n_check`, a catalogue of their own that :func:`tr`
consults after this module's :data:`CATALOGUE` (the two share no key).
"""

from __future__ import annotations

import os
from collections import ChainMap

from dpkit.i18n_check import CHECK_CATALOGUE

__all__ = ["LANGUAGES", "language", "set_language", "tr"]

#: The languages dpkit speaks: English (the source text) and Simplified Chinese.
LANGUAGES = ("en", "zh")

_chosen: str | None = None


def _checked(value: object, name: str) -> str:
    if value not in LANGUAGES:
        raise ValueError(f"{name} must be one of {', '.join(LANGUAGES)}, got {value!r}")
    return str(value)


def set_language(value: str | None) -> None:
    """Set the language of figures and widgets for this process.

    Parameters
    ----------
    value : str or None
        One of :data:`LANGUAGES`; ``None`` goes back to ``DPKIT_LANG`` (else English).

    Raises
    ------
    ValueError
        If ``value`` is not ``None`` nor one of :data:`LANGUAGES`.

    Examples
    --------
    >>> set_language("zh"); tr("density")
    '密度'
    >>> set_language(None)
    """
    global _chosen
    _chosen = None if value is None else _checked(value, "language")


def language() -> str:
    """The current language: :func:`set_language`'s, else ``DPKIT_LANG``'s, else ``"en"``.

    Returns
    -------
    str
        One of :data:`LANGUAGES`.

    Raises
    ------
    ValueError
        If ``DPKIT_LANG`` is set (and no language was set) to a value not in :data:`LANGUAGES`.
    """
    if _chosen is not None:
        return _chosen
    value = os.environ.get("DPKIT_LANG", "").strip()
    return _checked(value, "DPKIT_LANG") if value else "en"


def tr(text: str) -> str:
    """``text`` in the current :func:`language`: its catalogue entry, else ``text`` itself.

    Parameters
    ----------
    text : str
        An English label or template, as the figure builders and the checkers write it.

    Returns
    -------
    str
        The translation; ``text`` unchanged in English or when the catalogue has no entry.

    Examples
    --------
    >>> set_language("en"); tr("density")
    'density'
    >>> set_language("zh"); tr("ε = {epsilon}: ratio {ratio}").format(epsilon=1, ratio=2.72)
    'ε = 1：比值 2.72'
    >>> set_language("zh"); tr("right: one Laplace mechanism with this Δ releases both numbers")
    '正确：用这个 Δ 的一个拉普拉斯机制即可同时发布这两个数'
    >>> set_language(None)
    """
    current = language()
    if current == "en":
        return text
    return ChainMap(CATALOGUE[current], CHECK_CATALOGUE[current]).get(text, text)


#: The translations, keyed by the English text (one dictionary per language but English).
CATALOGUE: dict[str, dict[str, str]] = {"zh": {
    # Shared words.
    "density": "密度",
    "released value": "发布值",
    "coin flip": "抛硬币",
    "true answer": "真实回答",
    "ε = {epsilon}: ratio {ratio}": "ε = {epsilon}：比值 {ratio}",
    # intro: the Adult data, randomized response, the chapter map.
    "age (years)": "年龄（岁）",
    "people": "人数",
    "Age": "年龄",
    "share of people": "人数占比",
    "Income": "收入",
    "yes": "是",
    "no": "否",
    "P(report yes)": "P(报告“是”)",
    "true share": "真实比例",
    "±1.96 std": "±1.96 倍标准差",
    "estimate ({surveys} surveys)": "估计值（{surveys} 次调查）",
    "surveys": "调查次数",
    "n = {n}: std {std}": "n = {n}\n标准差 {std}",
    "An arrow means “is used by”": "箭头表示“被……使用”",
    "Introduction": "引言",
    "What the promise means": "差分隐私的承诺意味着什么",
    "The Laplace mechanism": "拉普拉斯机制",
    "The Gaussian mechanism": "高斯机制",
    "The analytic Gaussian mechanism": "解析高斯机制",
    "Composition": "组合",
    "The base-2 exponential mechanism": "以 2 为底的指数机制",
    "The sparse vector technique": "稀疏向量技术",
    # promise: the trade-off figure.
    "band $e^{\\pm\\varepsilon}$ × (on D′):\non D must stay inside":
        "D′ 上密度的 e^(±ε) 倍带：\nD 上的密度须在带内",
    "on D": "D 上",
    "on D′": "D′ 上",
    "Output densities, ε = {epsilon}, δ = {delta}": "输出密度，ε = {epsilon}，δ = {delta}",
    "impossible\nunder (ε, δ)-DP": "(ε, δ)-差分隐私下\n不可能",
    "threshold tests\non these outputs": "对这些输出的\n阈值检验",
    "false positives α": "假阳性 α",
    "false negatives β": "假阴性 β",
    "Tests: best guess ≤ {bound}": "检验：最佳猜对率 ≤ {bound}",
    # laplace: releases, tails, the least-significant-bit attack.
    "{releases} releases (dpkit.laplace)": "{releases} 个发布值（dpkit.laplace）",
    "density of f(D) + Lap({scale})": "f(D) + Lap({scale}) 的密度",
    "true answer f(D)": "真实答案 f(D)",
    "95% interval ±{alpha}": "95% 区间 ±{alpha}",
    "Tails of Lap(b): P[|noise| > t] = exp(−t/b)": "Lap(b) 的尾部：P[|噪声| > t] = exp(−t/b)",
    "P[|noise| > t]": "P[|噪声| > t]",
    "textbook (dpkit.naive)": "教科书版本（dpkit.naive）",
    "safe (dpkit.laplace)": "安全版本（dpkit.laplace）",
    # gaussian and analytic_gaussian.
    "dimension d": "维数 d",
    "noise std per coordinate": "每个坐标的噪声标准差",
    "Gaussian smaller\nfrom d = {crossing}": "自 d = {crossing} 起\n高斯噪声更小",
    "noise on one coordinate": "单个坐标上的噪声",
    "d = {dimension}: std ratio {ratio}": "d = {dimension}：比值 {ratio}",
    "ε = 1: end of the\nclassic theorem": "ε = 1：经典定理止于此",
    "true δ of the classic σ": "经典 σ 的真实 δ",
    "Classic σ judged by the exact profile": "用精确的隐私轮廓检验经典 σ",
    "target δ": "目标 δ",
    "analytic": "解析",
    "classic": "经典",
    "classic, ε < 1": "经典，ε < 1",
    "classic, ε ≥ 1": "经典，ε ≥ 1",
    "Privacy profiles of Gaussian noise": "高斯噪声的隐私轮廓",
    "outside the band:\npaid for by δ": "带外部分：\n由 δ 支付",
    "{inside} of releases inside the interval": "{inside} 的发布值落在区间内",
    "Attack\ndecides": "攻击\n作出判断",
    "share of releases": "发布值占比",
    "Right when\nit decides": "作出判断时\n判断正确",
    "share of decisions": "判断占比",
    "Overall\naccuracy": "总体\n准确度",
    "ε-DP band $[1/(1+e^\\varepsilon), e^\\varepsilon/(1+e^\\varepsilon)]$, ε = 1/b":
        "ε-差分隐私带 [1/(1+e^ε), e^ε/(1+e^ε)]，ε = 1/b",
    "Laplace, std √2·d/ε": "拉普拉斯，标准差 √2·d/ε",
    "Gaussian, classic σ": "高斯，经典 σ",
    "Laplace: 95% in ±{half}": "拉普拉斯 95% 区间 ±{half}",
    "Gaussian: 95% in ±{half}": "高斯 95% 区间 ±{half}",
    "ε = {epsilon}, ratio {ratio}": "ε = {epsilon}，比值 {ratio}",
    "ε = {epsilon}: no classic": "ε = {epsilon}：经典校准不适用",
    "erf-based solver, ε = {epsilon}": "基于 erf 的求解器，ε = {epsilon}",
    "true δ / target δ": "真实 δ / 目标 δ",
    "Solving δ(σ) = δ with Φ(t) = (1 + erf(t/√2))/2": "用 Φ(t) = (1 + erf(t/√2))/2 求解 δ(σ) = δ",
}}
