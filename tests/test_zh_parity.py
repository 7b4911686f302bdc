"""Every page of the Simplified Chinese edition (book/zh/<name>.md) against its English page:
the same code cells (byte for byte, in order), front matter, heading levels, labels,
directives and their options, glue keys, citations and cross-reference targets, math and
numbers of the prose; no hard-wrapped Chinese paragraph; the glossary's terms used
(tests/zh_parity.py says how each is read).

Each check is shown able to fail: a small English page and its translation pass them all,
and a copy of the translation broken in one way fails that check and only that one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import zh_parity  # tests/ is on sys.path under pytest
from myst_text import FRONT_MATTER

PAGES = sorted(p.stem for p in zh_parity.ZH.glob("*.md") if p.stem not in zh_parity.ZH_ONLY)


@pytest.mark.parametrize("name", PAGES)
def test_translation_matches_its_english_page(name):
    english = (zh_parity.BOOK / f"{name}.md").read_text()
    chinese = (zh_parity.ZH / f"{name}.md").read_text()
    assert zh_parity.differences(english, chinese) == {}


def test_every_zh_page_has_an_english_page_or_is_zh_only():
    orphans = [p.name for p in zh_parity.ZH.glob("*.md")
               if p.stem not in zh_parity.ZH_ONLY and not (zh_parity.BOOK / p.name).is_file()]
    assert orphans == []


#: A small English page with every kind of thing the checks compare, and its faithful
#: translation (one paragraph per line, as the translators write).
SAMPLE = Path(__file__).resolve().parent / "zh_sample"
ENGLISH = (SAMPLE / "sample.md").read_text()
CHINESE = (SAMPLE / "sample.zh.md").read_text()


def test_a_faithful_translation_passes_every_check():
    assert zh_parity.differences(ENGLISH, CHINESE) == {}


# One way to break the translation for each check: (old, new) replaced once in CHINESE.
BREAKS = {
    "code cells": ("scale = 1 / 0.5", "scale = 1/0.5"),
    "front matter": ("name: python3", "name: python"),
    "heading levels": ("### 尾部", "## 尾部"),
    "labels": ("(sec-tails)=", "(sec-tail)="),
    "directives": (":class: tip", ":class: note"),
    "references": ("{ref}`尾部 <sec-tails>`", "{ref}`尾部 <ch-sample>`"),
    "math": ("$1 - e^{-t/b}$", "$1 - \\exp(-t/b)$"),
    "numbers": ("在 32,561 人中", "在 32,560 人中"),
    "hard wraps": ("计数至多改变 1", "计数至多\n改变 1"),
    "glossary terms": ("按隐私预算", "按隐私开销"),
}


def test_every_check_is_broken_once():
    assert set(BREAKS) == set(zh_parity.CHECKS)


@pytest.mark.parametrize("check", sorted(BREAKS))
def test_each_check_fails_on_a_broken_translation(check):
    old, new = BREAKS[check]
    assert CHINESE.count(old) == 1
    broken = CHINESE.replace(old, new)
    assert set(zh_parity.differences(ENGLISH, broken)) == {check}


def test_translated_words_inside_math_text_and_alt_text_are_allowed():
    # \text{for every } became \text{对每个 } and the figure's :alt: was translated, and
    # the checks passed above; a changed symbol inside \text's formula does not pass.
    broken = CHINESE.replace("t \\ge 0", "t > 0")
    assert set(zh_parity.differences(ENGLISH, broken)) == {"math"}


def test_glossary_terms_are_read_from_the_glossary_page():
    terms = zh_parity.glossary()
    assert terms["sensitivity"] == "敏感度"
    assert terms["sparse vector technique"] == "稀疏向量技术"
    assert terms["Under the hood"] == "深入底层"
    assert terms["AboveThreshold"] == "AboveThreshold"
    assert len(terms) >= 80


def test_a_capitalised_term_matches_only_its_own_case():
    terms = {"Sparse": "Sparse", "sparse vector technique": "稀疏向量技术"}
    english = FRONT_MATTER + "The sparse vector technique.\n"
    assert zh_parity.missing_terms(english, "稀疏向量技术。", terms) == []
    assert zh_parity.missing_terms(FRONT_MATTER + "Run Sparse.\n", "运行。", terms) == \
        ["Sparse → Sparse"]
