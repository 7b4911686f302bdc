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
    "**Note.**": "**注解：**",
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
    "yours hold.":
        "在标有 `# 在此编写你的代码` 或 *在此写下你的答案* 的单元格中写下你的答案，然后运行每一个"
        "单元格。每道编程练习都有一个公开测试（与书中相同的 `dpkit.check` 判定），还可能有在评分时"
        "运行的隐藏测试；书面答案由教师手工评分。评分时按顺序运行你的笔记本：你添加的代码单元格"
        "也会运行，所以你在某个答案上方的单元格中定义的辅助函数，这个答案可以使用；设置单元格和"
        "测试单元格取自教师的副本，无论你的副本中写的是什么。",
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
        "运行，所以以其他方式使用判定（保存它、根据它分支去做打印以外的事）会让这道随机化练习"
        "失去它的分数。",
    "\n\nIn the code of an answer to an exercise that asks you to write a function the "
    "library has, or to a randomized exercise, and in **every** code cell of yours above "
    "it, import only these modules: {modules}, and a module of your own written with "
    "`%%writefile helper.py` (one file, in the notebook's folder). Any other import "
    "(`os`, `pathlib`, `subprocess`, `multiprocessing`, `tqdm` …) costs that exercise its "
    "points: the grader could not read what it runs. So does that code's use of private names "
    "(`_…`) of dpkit or any module, `numpy.load` and pandas' pickle readers, the IPython shell "
    "(`get_ipython`, `In`, `Out`, `_` unless your code sets it, as `for _ in …` does, "
    "`exit` other than called, in a randomized exercise the name `IPython`: write "
    "`from IPython.display import display`), "
    "or a format string "
    "whose fields name an attribute or item (`'{{0.x}}'`, `'{{d[k]}}'`) or is computed: "
    "`'{{:.3f}}'.format(x)` and f-strings are fine.":
        "\n\n在要求你写出库中已有函数的练习的答案代码中，或者在随机化练习的答案代码中，以及在它"
        "上方你的**每一个**代码单元格中，只能导入这些模块：{modules}，以及你自己用 "
        "`%%writefile helper.py` 写出的一个模块（一个文件，放在笔记本所在的文件夹中）。任何其他"
        "导入（`os`、`pathlib`、`subprocess`、`multiprocessing`、`tqdm` …）都会让这道练习失去"
        "它的分数：评分程序无法读懂它运行的东西。这些代码如果使用 dpkit 或任何模块的私有名字"
        "（`_…`）、`numpy.load` 和 pandas 的 pickle 读取函数、IPython shell（`get_ipython`、"
        "`In`、`Out`、`_`（除非由你的代码赋值，`for _ in …` 就是这样），"
        "不以调用形式出现的 `exit`，以及在随机化练习中的名字 `IPython`（请写 "
        "`from IPython.display import display`）），或者字段查找属性或项（`'{{0.x}}'`、"
        "`'{{d[k]}}'`）或由计算得到的格式字符串，同样如此：`'{{:.3f}}'.format(x)` 和 f-string "
        "是可以的。",
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
