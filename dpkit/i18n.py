"""The language of dpkit's figures and widgets, and their one message catalogue.

The book has an English and a Simplified Chinese edition with the same code cells: the
figure builders (:mod:`dpkit.plots`) and the widgets (:mod:`dpkit.widgets`) pass every label
they draw, and each figure's text alternative (what a screen reader says for it and for a
widget's frame), through :func:`tr`, which returns it in the current :func:`language`; so do
the words ``make pdf`` adds to the printed book (scripts/pdf.py). The language is
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
from collections.abc import Iterator
from contextlib import contextmanager

from dpkit.i18n_check import CHECK_CATALOGUE

__all__ = ["LANGUAGES", "in_language", "language", "set_language", "tr"]

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


@contextmanager
def in_language(value: str) -> Iterator[None]:
    """Speak ``value`` inside a ``with`` block, then the language set before it again.

    The course tooling (:mod:`dpkit.course`) builds a notebook in one edition's language
    this way, whatever this process speaks otherwise.

    Parameters
    ----------
    value : str
        One of :data:`LANGUAGES`.

    Yields
    ------
    None
        The block runs in ``value``; the language set before it (by :func:`set_language`,
        or none) is back after it, even if it raised.

    Raises
    ------
    ValueError
        If ``value`` is not one of :data:`LANGUAGES` (before the block runs).

    Examples
    --------
    >>> set_language("en")
    >>> with in_language("zh"):
    ...     tr("density")
    '密度'
    >>> language()
    'en'
    >>> set_language(None)
    """
    global _chosen
    before, _chosen = _chosen, _checked(value, "language")
    try:
        yield
    finally:
        _chosen = before


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
    # intro: the figures' text alternatives.
    "Two bar charts of the Adult data ({people} people). Left: a histogram of age, from "
    "{youngest} to {oldest} years, most people between {low} and {high}. Right: the "
    "share of each income class: {shares}.":
        "两幅 Adult 数据（{people} 人）的柱状图。左：年龄的直方图，从 {youngest} 岁到 {oldest} 岁，"
        "大多数人在 {low} 岁到 {high} 岁之间。右：各收入类别的人数占比：{shares}。",
    "the introduction": "引言",
    "{chapter} builds on {needs}": "{chapter} 建立在 {needs} 之上",
    " and ": "、",
    ", except: {jumps}": "，但以下除外：{jumps}",
    "Map of the chapters in reading order: {chapters}. Each builds on the one "
    "before{exceptions}.":
        "按阅读顺序排列的章节图：{chapters}。每一章都建立在前一章之上{exceptions}。",
    "Randomized response at ε = {epsilon}. Left: bars of the probability of reporting "
    "yes, {yes} for a true yes and {no} for a true no. Right: a histogram of the "
    "de-biased estimate over {surveys} simulated surveys of the same n = {n} people, "
    "centred on the true share {share} with standard deviation {std}.":
        "ε = {epsilon} 的随机响应。左：报告“是”的概率的柱状图，真实回答为“是”时为 {yes}，为“否”时"
        "为 {no}。右：对同样 n = {n} 个人进行 {surveys} 次模拟调查所得去偏估计值的直方图，以真实"
        "比例 {share} 为中心，标准差为 {std}。",
    # promise: the text alternative.
    "Laplace": "拉普拉斯",
    "Gaussian": "高斯",
    "the density on D leaves the band on both sides, where δ = {delta} pays for it":
        "D 上的密度在两侧都越出了带，越出的部分由 δ = {delta} 承担",
    "the density on D stays inside the band": "D 上的密度始终在带内",
    "Two charts at ε = {epsilon}, δ = {delta}. Top: the {noise} output densities on D and "
    "on D′, one unit apart, and the band e^±ε times the density on D′; {band}. Bottom: "
    "the false negatives against the false positives of threshold tests on these "
    "outputs stay above the region that (ε, δ)-DP makes impossible; no test guesses "
    "right more than {bound} of the time.":
        "ε = {epsilon}、δ = {delta} 时的两幅图。上：相距一个单位的 D 和 D′ 上的{noise}输出密度，"
        "以及 D′ 上密度的 e^±ε 倍带；{band}。下：对这些输出做阈值检验，其假阴性对假阳性的曲线"
        "始终位于 (ε, δ)-差分隐私所排除的区域之上；没有哪个检验猜对的概率超过 {bound}。",
    # laplace: the text alternatives.
    "Histogram of {releases} releases of the safe Laplace mechanism around the true "
    "answer {truth}, at ε = {epsilon} and Δ = {sensitivity} (noise scale b = {scale}), "
    "under the Laplace density; {inside} of the releases fall inside the 95% interval "
    "±{alpha}.":
        "直方图：安全的拉普拉斯机制在真实答案 {truth} 附近的 {releases} 个发布值，ε = {epsilon}，"
        "Δ = {sensitivity}（噪声尺度 b = {scale}），叠加拉普拉斯密度；{inside} 的发布值落在 95% "
        "区间 ±{alpha} 内。",
    "Line chart, on a log scale, of the tail probability P[|noise| > t] = exp(−t/b) of "
    "Laplace noise for t from 0 to 30, one line for each scale {scales}; each line falls "
    "below β = 0.05 at t = b ln 20 ({crossings}).":
        "对数坐标折线图：拉普拉斯噪声的尾部概率 P[|噪声| > t] = exp(−t/b)，t 从 0 到 30，每个"
        "尺度一条线（{scales}）；每条线在 t = b ln 20（{crossings}）处降到 β = 0.05 以下。",
    "{low} to {high}": "{low} 到 {high}",
    "{naive} on the textbook mechanism and {safe} on the safe one":
        "教科书版本机制上为 {naive}，安全版本上为 {safe}",
    "Three bar charts of Mironov's attack on the textbook and the safe Laplace mechanism "
    "at noise scales b = {scales}. Left: the attack names an input on {decided} of the "
    "releases. Middle: it is right on {right} of its decisions. Right: overall accuracy "
    "{accuracy}, against the ε-DP band from 1/(1+e^ε) to e^ε/(1+e^ε) drawn on the middle "
    "and right panels.":
        "三幅柱状图：Mironov 的攻击作用于教科书版本和安全版本的拉普拉斯机制，噪声尺度 "
        "b = {scales}。左：攻击指认出一个输入的发布值占比，{decided}。中：攻击的判断中正确的"
        "占比，{right}。右：总体准确度，{accuracy}；中图和右图画出了从 1/(1+e^ε) 到 e^ε/(1+e^ε) 的 "
        "ε-差分隐私带作为对照。",
    # gaussian and analytic_gaussian: the text alternatives.
    "Two charts at ε = {epsilon}, δ = {delta}. Left: log-log lines of the noise standard "
    "deviation per coordinate against the dimension d from 1 to 1000, for Laplace noise "
    "(√2·d/ε) and Gaussian noise (classic σ); the Gaussian is smaller from "
    "d = {crossing}. Right: the two noise densities of one coordinate at d = {dimension}; "
    "95% of Laplace noise lies within ±{laplace}, of Gaussian noise within ±{gaussian} "
    "(standard deviation ratio {ratio}).":
        "ε = {epsilon}、δ = {delta} 时的两幅图。左：双对数折线图，每个坐标的噪声标准差随维数 d"
        "（1 到 1000）的变化，分别为拉普拉斯噪声（√2·d/ε）和高斯噪声（经典 σ）；自 d = {crossing} "
        "起高斯噪声更小。右：d = {dimension} 时单个坐标上的两种噪声密度；拉普拉斯噪声的 95% 落在 "
        "±{laplace} 内，高斯噪声的则落在 ±{gaussian} 内（标准差之比 {ratio}）。",
    "Log-log line chart of the true δ of the classic σ = √(2 ln(1.25/δ))/ε (Δ = 1) "
    "against ε from 0.05 to 20, one line per target δ = {deltas}; each line crosses its "
    "target (a dotted line) at ε = {crossings}, and is not private beyond. The classic "
    "theorem (Dwork and Roth, Theorem A.1) covers only ε < 1.":
        "双对数折线图：经典 σ = √(2 ln(1.25/δ))/ε（Δ = 1）的真实 δ 随 ε（0.05 到 20）的变化，每个"
        "目标 δ 一条线（δ = {deltas}）；每条线在 ε = {crossings} 处越过其目标（一条点线），此后"
        "不再满足差分隐私。经典定理（Dwork 与 Roth，定理 A.1）只覆盖 ε < 1。",
    "the classic σ is {ratio} times larger": "经典 σ 是它的 {ratio} 倍",
    "the classic calibration does not apply (ε ≥ 1)": "经典校准不适用（ε ≥ 1）",
    "Two log-scale line charts of the noise σ (for Δ = 1) from the classic and the "
    "analytic calibrations: left, against ε at δ = {delta}; right, against δ at "
    "ε = {epsilon}. At ε = {epsilon}, δ = {delta} the analytic σ is {sigma} and "
    "{verdict}.":
        "两幅对数坐标折线图：经典校准和解析校准给出的噪声 σ（Δ = 1）；左：δ = {delta} 时随 ε 的"
        "变化；右：ε = {epsilon} 时随 δ 的变化。在 ε = {epsilon}、δ = {delta} 时，解析 σ 为 "
        "{sigma}，{verdict}。",
    "σ = {sigma}Δ has δ(1) = {delta}": "σ = {sigma}Δ 时 δ(1) = {delta}",
    "Line chart, δ on a log scale, of the privacy profile δ(ε) of Gaussian noise for ε "
    "from 0 to 8, one line per noise level: {levels}. Larger σ gives a smaller δ at every "
    "ε.":
        "折线图（δ 取对数坐标）：高斯噪声的隐私轮廓 δ(ε)，ε 从 0 到 8，每个噪声水平一条线："
        "{levels}。σ 越大，在每个 ε 处的 δ 越小。",
    "{ratio} at ε = {epsilon}": "ε = {epsilon} 时为 {ratio}",
    "Log-log line chart of the true δ divided by the target δ, for targets from 1e-25 "
    "to 1e-4 (decreasing to the right). The erf-based solver drifts above 1, that is "
    "above its target, to a ratio of {ratios}; dpkit.gaussian.analytic_sigma at ε = 1 "
    "stays at most {safe}.":
        "双对数折线图：真实 δ 除以目标 δ，目标从 1e-25 到 1e-4（向右递减）。基于 erf 的求解器"
        "漂移到 1 以上，即超出其目标，比值达到：{ratios}；dpkit.gaussian.analytic_sigma 在 ε = 1 "
        "时至多为 {safe}。",
    # The text alternative of a figure no builder described (dpkit.plots.alt_text).
    "horizontal axis: {label}": "横轴：{label}",
    "vertical axis: {label}": "纵轴：{label}",
    "{title} ({axes})": "{title}（{axes}）",
    "Chart: {described}.": "图：{described}。",
    "Chart.": "图。",
    # The PDF's fixed words (scripts/pdf.py and scripts/pdf_print.js; "Introduction" above).
    "Contents": "目录",
    "page {page} of {total}": "第 {page} 页，共 {total} 页",
    "Printed at {settings}; in the HTML book, sliders change {listed}.":
        "印出的是 {settings} 时的画面；在 HTML 版中，可用滑块改变{listed}。",
    "Printed at {settings}; in the HTML book, the controls change {listed}.":
        "印出的是 {settings} 时的画面；在 HTML 版中，可用控件改变{listed}。",
    "Printed from the HTML book: each interactive figure shows the setting named above it; "
    "in the HTML book and the notebooks its sliders and choices change it.":
        "本 PDF 由 HTML 版印出：每个交互式图形显示的是其上方注明的设置；在 HTML 版和笔记本中，"
        "可用图形的滑块和选项改变设置。",
    "Found an error? Report it at {address}.": "发现错误？请在 {address} 报告。",
    # Lists in a figure's text alternative (", " is with the course notebooks' words below).
    "; ": "；",
    # composition: totals against k, the textbook's plot, the privacy loss, the averaging attack.
    "basic: k·ε₀": "基本组合：k·ε₀",
    "advanced": "高级组合",
    "basic": "基本组合",
    "optimal": "最优组合",
    "zCDP (ρ = k·ε₀²/2)": "zCDP（ρ = k·ε₀²/2）",
    "advanced < basic\nfrom k = {k}": "自 k = {k} 起\n高级组合 < 基本组合",
    "advanced beats basic from k = {k}": "自 k = {k} 起高级组合优于基本组合",
    "advanced never beats basic up to k = {k}": "直到 k = {k}，高级组合都不优于基本组合",
    "k (number of mechanisms)": "k（机制个数）",
    "total ε": "总 ε",
    "Log-log line chart of the total ε of k mechanisms, each ε₀ = {epsilon0}-DP, for k "
    "from 1 to {k}, at δ' = {delta}. At k = {k} basic composition gives {basic}, "
    "advanced {advanced}, zCDP {zcdp} and optimal {optimal}; {when}.":
        "双对数折线图：k 个机制（每个满足 ε₀-差分隐私，ε₀ = {epsilon0}）的总 ε，k 从 1 到 {k}，"
        "δ' = {delta}。在 k = {k} 时，基本组合给出 {basic}，高级组合 {advanced}，zCDP {zcdp}，"
        "最优组合 {optimal}；{when}。",
    "sequential: k·ε": "顺序组合：k·ε",
    "as plotted: 2ε√(2k ln(1/δ))": "教科书所画：2ε√(2k ln(1/δ))",
    "advanced composition: ε√(2k ln(1/δ)) + kε(e^ε − 1)":
        "高级组合：ε√(2k ln(1/δ)) + kε(e^ε − 1)",
    "optimal composition": "最优组合",
    "false crossover\nk ≈ {k}": "虚假交叉点\nk ≈ {k}",
    "ε = {epsilon} per query, δ = {delta}": "每次查询 ε = {epsilon}，δ = {delta}",
    "the real advanced composition total drops below k·ε from k = {k}":
        "真正的高级组合总量自 k = {k} 起低于 k·ε",
    "the real advanced composition total stays above k·ε at every k":
        "真正的高级组合总量在每个 k 上都高于 k·ε",
    "crosses": "与 k·ε 相交于",
    "would cross (off the chart)": "将与 k·ε 相交（在图外）于",
    "Line chart of the total ε against k from 1 to {k_max}, at ε = {epsilon} per query "
    "and δ = {delta}. The curve a textbook plots as advanced composition, "
    "2ε√(2k ln(1/δ)), {crosses} k·ε at k ≈ {crossover}, but {real_text}; optimal "
    "composition stays at or below k·ε.":
        "折线图：总 ε 随 k 的变化，k 从 1 到 {k_max}，每次查询 ε = {epsilon}，δ = {delta}。"
        "教科书当作高级组合画出的曲线 2ε√(2k ln(1/δ)) {crosses} k ≈ {crossover}，但{real_text}；"
        "最优组合始终不高于 k·ε。",
    "randomized response (worst case)": "随机响应（最坏情形）",
    "Laplace count": "拉普拉斯计数",
    "{name} ε = {value}: RR {rr}, Laplace {lap}": "{name} ε = {value}：RR {rr}，拉普拉斯 {lap}",
    "δ measured at each ε: E[(1 − e^(ε − loss))₊]": "各 ε 处测得的 δ：E[(1 − e^(ε − 损失))₊]",
    "total privacy loss ln(P[view | in] / P[view | out])":
        "总隐私损失 ln(P[所见 | 在内] / P[所见 | 不在内])",
    "experiments": "实验次数",
    "k = {k} releases at ε = {epsilon}, δ' = {delta}\nmean loss of randomized response {mean}":
        "k = {k} 次发布，ε = {epsilon}，δ' = {delta}\n随机响应的平均损失 {mean}",
    "Histograms of the total privacy loss of k = {k} releases at ε = {epsilon} about one "
    "person, over {trials} simulated experiments, for randomized response (mean {mean}) "
    "and for Laplace counts, with vertical lines at the totals the composition theorems "
    "give at δ' = {delta}: {totals}.":
        "直方图：关于一个人的 k = {k} 次发布（每次 ε = {epsilon}）的总隐私损失，共 {trials} 次模拟"
        "实验，分别为随机响应（均值 {mean}）和拉普拉斯计数；竖线标出各组合定理在 δ' = {delta} "
        "时给出的总量：{totals}。",
    "exact probability": "精确概率",
    "simulated ({trials} attacks)": "模拟（{trials} 次攻击）",
    "accountant stops here\n(budget ε = {budget}: {allowed} answers)":
        "隐私会计在此停止\n（预算 ε = {budget}：{allowed} 个回答）",
    "answers averaged (m)": "参与平均的回答数 m",
    "P(rounded mean = true count)": "P(取整后的均值 = 真实计数)",
    "Averaging attack, ε = {epsilon} per answer": "平均攻击，每个回答 ε = {epsilon}",
    "where the attack succeeds with probability {p}": "此时攻击的成功概率为 {p}",
    "before the first answer": "在第一个回答之前",
    "Line chart of the probability that the rounded mean of m Laplace answers, each at "
    "ε = {epsilon}, equals the true count, for m from 1 to {n_max} on a log scale: the "
    "exact curve rises from {first} to {last}, and simulated points ({trials} attacks "
    "each) follow it. An accountant with budget ε = {budget} stops after {allowed} "
    "answers, {stop}.":
        "折线图：m 个拉普拉斯回答（每个 ε = {epsilon}）取整后的均值等于真实计数的概率，m 从 1 "
        "到 {n_max}，对数坐标：精确曲线从 {first} 升到 {last}，模拟点（每点 {trials} 次攻击）"
        "与之吻合。预算 ε = {budget} 的隐私会计在 {allowed} 个回答之后停止，{stop}。",
    "Laplace (density)": "拉普拉斯（密度）",
    "Gaussian, same ρ": "高斯，相同的 ρ",
    "privacy loss $\\mathcal{L}$": "隐私损失 L",
    "density / mass": "密度 / 概率质量",
    "Loss, ε₀ = {epsilon0}": "隐私损失，ε₀ = {epsilon0}",
    "Laplace, closed form": "拉普拉斯，闭式",
    "Gaussian, Balle–Wang": "高斯，Balle–Wang",
    "Privacy profiles": "隐私轮廓",
    "Laplace (stems: point masses)": "拉普拉斯（竖线：点质量）",
    "numerical E[(1 − e^(ε−$\\mathcal{L}$))₊]": "数值积分 E[(1 − e^(ε − L))₊]",
    "Two charts at ε₀ = {epsilon0}. Left: the distribution of the privacy loss L of "
    "Laplace noise, a density on ({low}, {high}) with point masses {high_mass} at {high} "
    "and {low_mass} at {low}, and of Gaussian noise with σ = Δ/ε₀ and the same "
    "ρ = {rho}, a normal density. Right: their privacy profiles δ(ε) for ε from 0 to "
    "{last}, closed forms as lines, numerical integrals of the loss as points on them.":
        "ε₀ = {epsilon0} 时的两幅图。左：拉普拉斯噪声的隐私损失 L 的分布，在 ({low}, {high}) 上"
        "有密度，并在 {high} 处有点质量 {high_mass}、在 {low} 处有点质量 {low_mass}；以及 "
        "σ = Δ/ε₀、ρ 相同（ρ = {rho}）的高斯噪声的隐私损失分布，为正态密度。右：二者的隐私轮廓 "
        "δ(ε)，ε 从 0 到 {last}，闭式为曲线，对隐私损失的数值积分为曲线上的点。",
    # exponential_base2: the exact and the naive distribution, timings, attacks, selection.
    "exact, base 2 (η = {eta})": "精确，以 2 为底（η = {eta}）",
    "naive float code": "朴素浮点代码",
    "probability": "概率",
    "outcome (loss of o1 = {loss}, the others 1 to 4 more)":
        "结果（o1 的损失 = {loss}，其余多 1 到 4）",
    "naive code divides 0 by 0: every weight underflowed": "朴素代码计算 0/0：所有权重都下溢",
    "naive P(o1) = {naive} vs exact {exact}\n{impossible} outcome(s) impossible for the naive code":
        "朴素 P(o1) = {naive}，精确 {exact}\n朴素代码有 {impossible} 个结果不可能出现",
    "the naive float code divides 0 by 0 (every weight underflowed)":
        "朴素浮点代码计算 0/0（所有权重都下溢）",
    "the naive float code gives {naive} and never returns {impossible} of the outcomes":
        "朴素浮点代码给出 {naive}，且有 {impossible} 个结果从不返回",
    "Bar chart of the output probabilities of {size} outcomes o1 to o{size}, at "
    "ε = {epsilon} and ε·u(o1)/2 = {exponent} (loss of o1 {loss}, the others 1 to 4 "
    "more): the exact base-2 mechanism gives P(o1) = {exact}; {naive_text}.":
        "柱状图：{size} 个结果 o1 到 o{size} 的输出概率，ε = {epsilon}，ε·u(o1)/2 = {exponent}"
        "（o1 的损失为 {loss}，其余多 1 到 4）：精确的以 2 为底的机制给出 P(o1) = {exact}；"
        "{naive_text}。",
    "naive (float)": "朴素（浮点）",
    "fast (exact)": "快速（精确）",
    "fallback path (forced)": "回退路径（强制）",
    "full precision (exact)": "全精度（精确）",
    "search (exact)": "搜索（精确）",
    "{label} from {first} s at n = {n_first} to {last} s at n = {n_last}":
        "{label}从 n = {n_first} 时的 {first} 秒到 n = {n_last} 时的 {last} 秒",
    "number of outcomes n (utility u(o) = o)": "结果个数 n（效用 u(o) = o）",
    "seconds per sample": "每次采样的秒数",
    "Log-log line chart of the seconds per sample against the number of outcomes n, one "
    "line per sampler: {ends}.":
        "双对数折线图：每次采样的秒数随结果个数 n 的变化，每个采样器一条线：{ends}。",
    "exact, base 2": "精确，以 2 为底",
    "input d": "输入 d",
    "neighbour d′": "邻近输入 d′",
    "frequency of o1": "o1 的频率",
    "zero-rounding": "舍入为零",
    "truncated-addition": "截断加法",
    "{name} attack, claimed ε = {epsilon}\nprivacy loss: {naive} (naive), {exact} (exact)":
        "{name}攻击，声称 ε = {epsilon}\n隐私损失：{naive}（朴素），{exact}（精确）",
    "Bar chart of how often the output is o1 on an input d and on its neighbour d′, for "
    "the {name} attack at claimed ε = {epsilon}: the naive float code {naive_d} and "
    "{naive_d2} (privacy loss {naive_loss}), the exact base-2 mechanism {exact_d} and "
    "{exact_d2} (privacy loss {exact_loss}).":
        "柱状图：{name}攻击（声称 ε = {epsilon}）中，输出在输入 d 和其邻近输入 d′ 上为 o1 的频率："
        "朴素浮点代码为 {naive_d} 和 {naive_d2}（隐私损失 {naive_loss}），精确的以 2 为底的机制为 "
        "{exact_d} 和 {exact_d2}（隐私损失 {exact_loss}）。",
    "other {count}": "其他 {count} 个",
    "exponential mechanism = noisy max, Gumbel noise": "指数机制 = 报告带噪最大值，Gumbel 噪声",
    "noisy max, Laplace noise": "报告带噪最大值，拉普拉斯噪声",
    "probability of being reported": "被报告的概率",
    "occupation": "职业",
    "Most common occupation, ε = {epsilon}\n(noise scale 2/ε = {scale})":
        "最常见的职业，ε = {epsilon}\n（噪声尺度 2/ε = {scale}）",
    "{name} {exponential} and {laplace}": "{name} {exponential} 和 {laplace}",
    "Horizontal bar chart of the probability that each occupation is reported as the "
    "most common, at ε = {epsilon} (noise scale 2/ε = {scale}), by the exponential "
    "mechanism and by report noisy max with Laplace noise: {shares}.":
        "水平柱状图：每种职业被报告为最常见职业的概率，ε = {epsilon}（噪声尺度 2/ε = {scale}），"
        "分别由指数机制和加拉普拉斯噪声的报告带噪最大值给出：{shares}。",
    # sparse_vector: clipping bounds, auto_avg, the cost of a search, the audit, a run.
    "age": "年龄",
    "capital-gain": "资本收益",
    "candidates": "候选界",
    "column": "列",
    "1 to 200, then +1% (default)": "1 到 200，之后每步 +1%（默认）",
    "powers of 2": "2 的幂",
    "largest value {value} (left)": "最大值 {value}（左）",
    "chosen bound U": "选出的界 U",
    "runs": "运行次数",
    "ε = {epsilon}: bounds chosen": "ε = {epsilon}：选出的界",
    "true mean {mean} (right)": "真实均值 {mean}（右）",
    "private − true average": "差分隐私平均值 − 真实平均值",
    "median |error| {median}": "|误差| 的中位数 {median}",
    "Two histograms over {runs} runs of auto_avg on the {column} column of the Adult data "
    "at ε = {epsilon}, candidate bounds {grid}. Left: the clipping bound chosen (median "
    "{chosen}) against the largest value {largest}. Right: the private average minus the "
    "true mean {mean}, median |error| {median}.":
        "两幅直方图：在 Adult 数据的{column}列上运行 auto_avg {runs} 次，ε = {epsilon}，"
        "候选界为“{grid}”。左：选出的裁剪界（中位数 {chosen}），对照最大值 {largest}。右："
        "满足差分隐私的平均值减去真实均值 {mean}，|误差| 的中位数为 {median}。",
    "auto_avg, {column}": "auto_avg，{column}",
    "{column} from {first}% to {last}%": "{column}从 {first}% 到 {last}%",
    "dividing by a\nsecond noisy sum": "除以第二个\n带噪的和",
    "ε (total)": "总 ε",
    "median |error|, % of true mean": "|误差| 的中位数（占真实均值的 %）",
    "auto_avg on Adult, {runs} runs per point": "auto_avg 在 Adult 上，每点 {runs} 次运行",
    "Log-log line chart of the median error of auto_avg on the Adult data, in percent of "
    "the true mean, {runs} runs per point, at total ε = {epsilons}: {summaries}. Dividing "
    "by a second noisy sum stays near 100% (dashed line).":
        "双对数折线图：auto_avg 在 Adult 数据上的误差中位数，以占真实均值的百分比表示，每点 "
        "{runs} 次运行，总 ε = {epsilons}：{summaries}。除以第二个带噪的和的版本始终接近 "
        "100%（虚线）。",
    "noise every answer: nε": "给每个回答加噪：nε",
    "queries the search may examine, n (fixed in advance)": "搜索可能检查的查询个数 n（事先固定）",
    "privacy cost (ε)": "隐私代价 (ε)",
    "First query above a threshold, ε = {epsilon}": "第一个高于阈值的查询，ε = {epsilon}",
    "Line chart of the privacy cost of finding the first query above a threshold, against "
    "the number n of queries the search may examine, 1 to {n}, at ε = {epsilon}: noising "
    "every answer costs nε, {total} at n = {n}; AboveThreshold costs ε = {epsilon} however "
    "many.":
        "折线图：找出第一个高于阈值的查询的隐私代价，随搜索可能检查的查询个数 n（1 到 {n}）的"
        "变化，ε = {epsilon}：给每个回答加噪的代价是 nε，在 n = {n} 时为 {total}；"
        "AboveThreshold 无论 n 多大，代价都是 ε = {epsilon}。",
    ": an exercise": "：留作练习",
    "audited lower bound": "审计得到的下界",
    "audited lower bound, above the claim": "审计得到的下界，高于声称值",
    "claimed ε": "声称的 ε",
    "true ε": "真实 ε",
    "SVT variant": "SVT 变体",
    "Audited ε, 95% confidence": "审计得到的 ε，95% 置信度",
    "each answer noised, exact threshold": "每个回答加噪，阈值精确",
    "no noise on the query answers": "查询回答不加噪声",
    "noisy answer released with the index": "带噪回答随下标一起发布",
    "no cutoff: every positive reported": "无截止条件：报告每个肯定回答",
    "query noise Lap(4/(3ε)), c = 2": "查询噪声 Lap(4/(3ε))，c = 2",
    "{variant}: claimed {claimed}, audited at least {audited}, true ε{true}":
        "{variant}：声称 {claimed}，审计至少 {audited}，真实 ε{true}",
    "Horizontal bar chart of the audited lower bound on ε, at 95% confidence, of each SVT "
    "variant beside its claimed ε: {variants}. {caught} of {count} are caught above their "
    "claim.":
        "水平柱状图：各 SVT 变体在 95% 置信度下审计得到的 ε 下界，及其声称的 ε：{variants}。"
        "{count} 个中有 {caught} 个被查出高于其声称值。",
    "true answer $q_i(D)$": "真实回答 qᵢ(D)",
    "noisy answer (seen)": "带噪回答（已检查）",
    "never examined": "从未检查",
    "threshold T = {threshold}": "阈值 T = {threshold}",
    "noisy threshold T + τ (τ = {tau})": "带噪阈值 T + τ（τ = {tau}）",
    "query (age a)": "查询（年龄 a）",
    "answer": "回答",
    "AboveThreshold at ε = {epsilon}: stops at a = {stop}":
        "AboveThreshold，ε = {epsilon}：停在 a = {stop}",
    "the run stops at a = {stop}, the first noisy answer at or above the noisy threshold":
        "运行停在 a = {stop}，即第一个不低于带噪阈值的带噪回答",
    "no noisy answer reaches it": "没有带噪回答达到它",
    "Chart of one run of AboveThreshold at ε = {epsilon} over {count} queries (ages "
    "{first} to {last}): the true answers go from {first_answer} to {last_answer}, the "
    "threshold is T = {threshold} and the noisy threshold {noisy}; {outcome}. Queries "
    "after it are never examined.":
        "图：AboveThreshold 在 ε = {epsilon} 时对 {count} 个查询（年龄 {first} 到 {last}）的一次"
        "运行：真实回答从 {first_answer} 变到 {last_answer}，阈值为 T = {threshold}，带噪阈值为 "
        "{noisy}；{outcome}。此后的查询从未被检查。",
    "$-q_U$ (≈ rows above U)": "−q_U（≈ 高于 U 的行数）",
    "−threshold = 20/ε = {value}": "−阈值 = 20/ε = {value}",
    "largest value {value}": "最大值 {value}",
    "candidate bound U": "候选界 U",
    "largest value": "最大值",
    "Log-log step chart of −q_U, about the number of rows above the candidate bound U, "
    "against U, one panel per Adult column ({columns}), with the threshold line at "
    "20/ε = {value} and the largest value of each column: {largest}.":
        "双对数阶梯图：−q_U（约为高于候选界 U 的行数）随 U 的变化，Adult 的每一列一个面板"
        "（{columns}），带有 20/ε = {value} 处的阈值线和每列的最大值：{largest}。",
    # Course notebooks: fixed words.
    # dpkit.course.myst: numbered directives, solutions, proofs, boxes, references.
    "Theorem {number}": "定理 {number}",
    "Definition {number}": "定义 {number}",
    "Lemma {number}": "引理 {number}",
    "Corollary {number}": "推论 {number}",
    "Proposition {number}": "命题 {number}",
    "Algorithm {number}": "算法 {number}",
    "Example {number}": "例 {number}",
    "Remark {number}": "注记 {number}",
    "Conjecture {number}": "猜想 {number}",
    "Axiom {number}": "公理 {number}",
    "Criterion {number}": "判据 {number}",
    "Assumption {number}": "假设 {number}",
    "Observation {number}": "观察 {number}",
    "Property {number}": "性质 {number}",
    "Exercise {number}": "练习 {number}",
    "**Solution to {exercise}.**": "**{exercise} 的解答。**",
    "*Proof.* {body}": "*证明：* {body}",
    " ({title})": "（{title}）",
    "**{head}**{title}. {body}": "**{head}**{title}：{body}",
    "**Note.**": "**备注：**",
    "**Warning.**": "**警告：**",
    "**Tip.**": "**小技巧：**",
    "**Important.**": "**重要：**",
    "**Hint.**": "**提示：**",
    "**Caution.**": "**小心：**",
    "**Attention.**": "**注意：**",
    "**Danger.**": "**危险：**",
    "**Error.**": "**错误：**",
    "**Seealso.**": "**参见：**",
    "Chapter {number}, *{title}*": "第 {number} 章 *{title}*",
    "{text} (in *{title}*)": "{text}（见 *{title}*）",
    "*(the value printed by the code)*": "*（代码输出中打印的值）*",
    # dpkit.course.notebooks: the student's cells.
    "**Your answer.** *(Write your proof or design here.)*":
        "**你的答案。** *（在此写下你的证明或设计。）*",
    "# Your working, if the exercise asks you to compute something.\n":
        "# 如果练习要求计算，请在此写出你的计算过程。\n",
    "# Your code here.": "# 在此编写你的代码。",
    "# your answer": "# 你的答案",
    "# Figures and widgets in this notebook's language.\nimport dpkit.i18n\n\n"
    "dpkit.i18n.set_language({lang!r})\n":
        "# 本笔记本的图表和控件使用中文。\nimport dpkit.i18n\n\n"
        "dpkit.i18n.set_language({lang!r})\n",
    # dpkit.course.assignments and dpkit.course.written: the assignment's cells and stubs.
    "# Assignment — {number}{title}": "# 作业 — {number}{title}",
    "Chapter {number}: ": "第 {number} 章：",
    ", ": "、",  # between the items of a list (the allowed modules)
    "Write your answers in the cells marked `# YOUR CODE HERE` or *YOUR ANSWER HERE*, "
    "then run every cell. Each code exercise has a public test (the same `dpkit.check` "
    "verdict as in the book) and may have hidden tests that run when it is graded; "
    "written answers are graded by hand. Grading runs your notebook in order: the code "
    "cells you add run too, so a helper you define in a cell above an answer is there "
    "for it; the set-up and test cells are taken from the teacher's copy, whatever "
    "yours hold. A copy of an answer cell (Jupyter copies its grading tag with it) is "
    "part of that answer: the cell and its copies run in order, and the tests read what "
    "they leave defined.":
        "在标有 `# 在此编写你的代码` 或 *在此写下你的答案* 的单元格中作答，然后运行每一个"
        "单元格。每道编程练习都有一个公开测试（与书中相同的 `dpkit.check` 判定），还可能有在评分时"
        "运行的隐藏测试；书面答案由教师手工评分。评分时按顺序运行你的笔记本：你添加的代码单元格"
        "也会运行，所以你在某个答案上方的单元格中定义的辅助函数，这个答案可以使用；设置单元格和"
        "测试单元格取自教师的副本，无论你的副本中写的是什么。答案单元格的副本（Jupyter 复制单元格时"
        "会连同它的评分标记一起复制）是这个答案的一部分：该单元格和它的副本按顺序运行，测试读取"
        "它们运行后定义的内容。",
    "\n\nIn the code of an answer to a randomized exercise, and in **every** code cell of "
    "yours above it (earlier answers too), a `dpkit.check` verdict may only be shown: "
    "`print(dpkit.check.check_…(f))`, `verdict = …` then `print(verdict)`, `assert "
    "verdict.passed, verdict.message`, or `if not verdict.passed: print(verdict.message)` "
    "whose branches only print. Where your notebook is graded the checks do not run in it, "
    "so using a verdict otherwise (storing it, branching on it to do anything but print) "
    "costs the randomized exercise its points.":
        "\n\n在随机化练习的答案代码中，以及在它上方你的**每一个**代码单元格中（先前的答案也算），"
        "`dpkit.check` 的判定只能用来显示：`print(dpkit.check.check_…(f))`、先 `verdict = …` "
        "再 `print(verdict)`、`assert verdict.passed, verdict.message`，或者各分支只做打印的 "
        "`if not verdict.passed: print(verdict.message)`。评分时这些检查不会在你的笔记本中"
        "运行，所以以其他方式使用判定（保存它、根据它分支去做打印以外的事）会使这道随机化练习"
        "不得分。",
    "\n\nIn the code of an answer to an exercise that asks you to write a function the library ha"
    "s, or to a randomized exercise, and in **every** code cell of yours above it, import only th"
    "ese modules: {modules}, and a module of your own written with `%%writefile helper.py` (one f"
    "ile, in the notebook's folder). Any other import (`os`, `pathlib`, `subprocess`, `multiproce"
    "ssing`, `tqdm` …) costs that exercise its points: the grader could not read what it runs. So"
    " does that code's use of private names (`_…`) of dpkit or any module (your own attributes, `"
    "self._x`, are yours), `numpy.load` and pandas' pickle readers, the IPython shell (`get_ipyth"
    "on`, `In`, `Out`, `_` unless your code sets it, as `for _ in …` does, `exit` other than call"
    "ed, in a randomized exercise the name `IPython`: write `from IPython.display import display`"
    "), `functools.singledispatch` (branch on `isinstance` instead), a data frame's `.eval` and `"
    ".query`, `operator.attrgetter` and `methodcaller` other than called where they are named, a "
    "`match` class pattern with positional captures of a class not your own, a format string whos"
    "e fields name an attribute or item (`'{{0.x}}'`, `'{{d[k]}}'`), or `.format` on a string not"
    " written out in the code with an argument that is not written out either (`fmt.format(x)`, w"
    "hich could look attributes of `x` up): `'{{:.3f}}'.format(x)`, `fmt.format(2.0)`, `df.style."
    "format(\"{{:.1f}}\")`, `df.style.format(precision=1)` and f-strings are fine.":
        "\n\n在要求你写出库中已有函数的练习的答案代码中，或者在随机化练习的答案代码中，以及在它上"
        "方你的**每一个**代码单元格中，只能导入这些模块：{modules}，以及你自己用 `%%writefile hel"
        "per.py` 写出的一个模块（一个文件，放在笔记本所在的文件夹中）。任何其他导入（`os`、`pathl"
        "ib`、`subprocess`、`multiprocessing`、`tqdm` …）都会使这道练习不得分：评分程序将无法检查"
        "它所运行的内容。这些代码如果使用 dpkit 或任何模块的私有名字（`_…`；你自己的属性，如 `sel"
        "f._x`，属于你自己）、`numpy.load` 和 pandas 的 pickle 读取函数、IPython shell（`get_ipyt"
        "hon`、`In`、`Out`、`_`（除非由你的代码赋值，`for _ in …` 就是这样），不以调用形式出现的 "
        "`exit`，以及在随机化练习中的名字 `IPython`（请写 `from IPython.display import display`）"
        "）、`functools.singledispatch`（请改用 `isinstance` 分支）、数据框的 `.eval` 和 `.query`"
        "、不在指名之处直接调用的 `operator.attrgetter` 和 `methodcaller`、对不属于你自己的类使用"
        "位置捕获的 `match` 类模式、字段引用属性或元素的格式字符串（`'{{0.x}}'`、`'{{d[k]}}'`），"
        "或者在代码中没有直接写出的字符串上、以同样没有直接写出的参数调用的 `.format`（`fmt.forma"
        "t(x)`，它可以查找 `x` 的属性），同样如此：`'{{:.3f}}'.format(x)`、`fmt.format(2.0)`、`df"
        ".style.format(\"{{:.1f}}\")`、`df.style.format(precision=1)` 和 f-string 是可以的。",
    "import dpkit  # dpkit.check loads when first used":
        "import dpkit  # dpkit.check 在首次使用时加载",
    "# Public test ({public}): the check you can run yourself. Hidden tests ({hidden}) judge "
    "the same answer on other inputs when it is graded.":
        "# 公开测试（{public}）：你可以自己运行的检查。隐藏测试（{hidden}）在评分时用其他输入"
        "评判同一个答案。",
    "{points} point": "{points} 分",
    "{points} points": "{points} 分",
    "(model solution)": "（参考解答）",
    "# Your working (optional): if the exercise asks you to compute something, do it "
    "here.\n# It is not graded automatically: your teacher reads it beside your "
    "written answer.\n":
        "# 你的计算过程（可选）：如果练习要求计算，请在这里完成。\n"
        "# 它不会被自动评分：教师会把它与你的书面答案放在一起阅读。\n",
    "YOUR ANSWER HERE": "在此写下你的答案",
    "# YOUR CODE HERE\nraise NotImplementedError()":
        "# 在此编写你的代码\nraise NotImplementedError()",
}}
