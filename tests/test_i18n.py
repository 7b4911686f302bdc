"""dpkit.i18n: the language of figures and widgets, its catalogue, and the zh figures drawn
with fonts that have their glyphs."""

from __future__ import annotations

import logging
import re
import string
import warnings

import pytest
from figure_cases import CASES
from matplotlib.text import Text

from dpkit import i18n
from dpkit.plots import _style, alt_text, figure_png, svt
from dpkit.widgets import Param, _control, _width

#: Every figure of every chapter is translated (figure_cases.py lists one case per builder).
ZH_CASES = list(CASES)
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
#: Words a translated label keeps: names of code, data, algorithms, distributions, people and
#: functions (the glossary keeps algorithm names such as AboveThreshold untranslated).
KEPT_WORDS = {"dpkit", "naive", "laplace", "gaussian", "analytic_sigma", "Lap", "exp", "erf",
              "std", "svt", "auto_avg", "AboveThreshold", "Sparse", "zCDP", "Gumbel", "Adult",
              "Balle", "Wang", "Mironov", "Dwork", "Roth", "inf", "SVT", "q_U"}


@pytest.fixture(autouse=True)
def _language_reset(monkeypatch):
    monkeypatch.delenv("DPKIT_LANG", raising=False)
    yield
    monkeypatch.delenv("DPKIT_LANG", raising=False)
    i18n.set_language(None)
    _style.use_language_fonts()


def test_language_comes_from_the_setter_then_the_environment(monkeypatch):
    monkeypatch.delenv("DPKIT_LANG", raising=False)
    assert i18n.language() == "en"
    monkeypatch.setenv("DPKIT_LANG", "zh")
    assert i18n.language() == "zh"
    i18n.set_language("en")
    assert i18n.language() == "en"
    i18n.set_language(None)
    assert i18n.language() == "zh"


def test_unknown_languages_are_refused(monkeypatch):
    with pytest.raises(ValueError, match=r"language must be one of en, zh, got 'fr'"):
        i18n.set_language("fr")
    monkeypatch.setenv("DPKIT_LANG", "zh_CN")
    with pytest.raises(ValueError, match=r"DPKIT_LANG must be one of en, zh, got 'zh_CN'"):
        i18n.language()


def test_a_text_without_an_entry_stays_english():
    i18n.set_language("zh")
    assert i18n.tr("density") == "密度"
    assert i18n.tr("no such label") == "no such label"


def _placeholders(template: str) -> list[str]:
    """The ``{name}`` fields of a template (TeX braces such as ``e^{-t}`` are not fields)."""
    if "$" in template:
        return []
    return sorted(f for _, f, _, _ in string.Formatter().parse(template) if f)


@pytest.mark.parametrize("language", list(i18n.CATALOGUE))
def test_catalogue_entries_keep_their_placeholders_and_avoid_mathtext(language):
    for english, translated in i18n.CATALOGUE[language].items():
        assert _placeholders(english) == _placeholders(translated), english
        # mathtext has no CJK glyphs (and no fallback): never Chinese inside $...$.
        assert not (_CJK.search(translated) and "$" in translated), translated


def _texts(figure) -> list[str]:
    return [t.get_text() for t in figure.findobj(Text) if t.get_visible() and t.get_text()]


def _english_words(text: str) -> set[str]:
    """The words of ``text`` a translation must change: not those inside mathtext ($...$, a
    formula such as ``$-q_U$``), nor :data:`KEPT_WORDS`."""
    prose = re.sub(r"\$[^$]*\$", " ", text)
    return {w for w in re.findall(r"[A-Za-z_]{3,}", prose) if w not in KEPT_WORDS}


@pytest.mark.parametrize("case", ZH_CASES, ids=lambda case: case.id)
def test_zh_figures_have_no_english_words_left(case):
    i18n.set_language("en")
    english = _texts(case.builder(**case.kwargs))
    i18n.set_language("zh")
    chinese = _texts(case.builder(**case.kwargs))
    assert len(english) == len(chinese)
    left = [(en, zh) for en, zh in zip(english, chinese, strict=True)
            if _english_words(en) and _english_words(zh) == _english_words(en)]
    assert not left, f"{case.id}: untranslated labels {left[:3]}"


@pytest.mark.parametrize("case", ZH_CASES, ids=lambda case: case.id)
def test_zh_figures_have_a_chinese_text_alternative(case):
    """What a screen reader says for the figure (and for a widget's frame, which shows the
    same text) on a zh page: Chinese, with the same numbers, and no English words left."""
    i18n.set_language("en")
    english = alt_text(case.builder(**case.kwargs))
    i18n.set_language("zh")
    chinese = alt_text(case.builder(**case.kwargs))
    assert _CJK.search(chinese), f"{case.id}: {chinese}"
    assert not _english_words(chinese), f"{case.id}: English words left in {chinese!r}"
    numbers = re.compile(r"\d+(?:\.\d+)?(?:e[-+]\d+)?%?")
    assert sorted(numbers.findall(chinese)) == sorted(numbers.findall(english)), case.id


def test_zh_widget_controls_of_the_last_chapters_are_chinese():
    """The controls of the sparse_vector widget (book/sparse_vector.md): its captions, the
    candidate grids and the Adult columns, as the zh page shows them."""
    i18n.set_language("zh")
    controls = [_control(Param("grid", list(svt.CLIP_GRIDS), label="candidates")),
                _control(Param("column", ["age", "capital-gain"], label="column"))]
    shown = [text for c in controls for text in (c.description, *c.options)]
    assert all(_CJK.search(text) for text in shown), shown
    assert [c.description for c in controls] == ["候选界", "列"]


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def missing_glyphs(case) -> list[str]:
    """What matplotlib reports while drawing ``case``'s figure in Chinese: "Glyph … missing"
    warnings (text) and "does not have a glyph" log records (mathtext)."""
    i18n.set_language("zh")
    records = _Records()
    logger = logging.getLogger("matplotlib")
    logger.addHandler(records)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            figure_png(case.builder(**case.kwargs))
    finally:
        logger.removeHandler(records)
    return [str(w.message) for w in caught if "Glyph" in str(w.message)] + \
        [m for m in records.messages if "glyph" in m]


@pytest.mark.parametrize("case", ZH_CASES, ids=lambda case: case.id)
def test_zh_figures_draw_every_glyph(case):
    assert missing_glyphs(case) == []


def test_missing_glyphs_are_caught_without_the_cjk_font(monkeypatch):
    monkeypatch.setitem(_style.LANGUAGE_FONTS, "zh", ())
    found = missing_glyphs(ZH_CASES[0])
    assert found and all("missing from font(s) DejaVu Sans" in m for m in found), found


def test_english_figures_keep_matplotlibs_default_font():
    i18n.set_language("en")
    assert _style.use_language_fonts() == ["sans-serif"]
    i18n.set_language("zh")
    assert _style.use_language_fonts() == ["DejaVu Sans", "Noto Sans CJK SC"]


def test_widget_labels_follow_the_language():
    i18n.set_language("zh")
    param = Param("share", [0.1, 0.2], label="density")
    assert _control(param).description == "密度"
    radios = _control(Param("answer", ["yes", "no"]))
    assert list(radios.options) == ["是", "否"]
    assert _width("密度 ε") == 6


def test_an_undescribed_figure_is_read_out_in_chinese():
    """A figure no builder described (a reader's own, in a notebook) is read from its title
    and axis labels, with the words around them in the reader's language."""
    i18n.set_language("zh")
    figure, (ax,) = _style.new_figure()
    ax.set(title="尾部", xlabel="t", ylabel="P")
    assert alt_text(figure) == "图：尾部（横轴：t；纵轴：P）。"
    assert alt_text(_style.new_figure()[0]) == "图。"


#: Forms the Chinese edition's glossary (book/zh/glossary.md, its "不作" notes) rejects, with
#: the chapters' own form: a translated label or checker message must not use them either.
REJECTED_TERMS = {"灵敏度": "敏感度", "噪音": "噪声", "相邻数据集": "邻近数据集",
                  "门限": "阈值", "钳位": "钳制", "检查器": "检查函数", "检查程序": "检查函数",
                  "局部差分隐私": "本地差分隐私", "隐私曲线": "隐私轮廓", "会计师": "隐私会计",
                  "索引": "下标", "满足隐私": "满足差分隐私"}


def test_the_zh_catalogues_use_the_glossary_terms():
    from dpkit.i18n_check import CHECK_CATALOGUE
    found = [(rejected, text) for catalogue in (i18n.CATALOGUE, CHECK_CATALOGUE)
             for text in catalogue["zh"].values()
             for rejected in REJECTED_TERMS if rejected in text]
    assert not found, [f"{text!r} has {rejected}, not {REJECTED_TERMS[rejected]}"
                       for rejected, text in found]
