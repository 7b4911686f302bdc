"""What must be the same in a page of the English edition and its Simplified Chinese
translation (book/zh/<name>.md), read with the book's MyST reader (:mod:`dpkit.course.myst`).

:func:`differences` lists every way a translation departs from its English page: the code
cells (byte for byte, in order), the heading levels, the labels, the directives and their
options, the glue keys, citations and cross-reference targets, the math, the numbers of the
prose, hard-wrapped Chinese paragraphs, and the glossary's terms (book/zh/glossary.md). Each
check is a function of two texts, so ``tests/test_zh_parity.py`` can run it on the real pages
and on a broken copy.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

from dpkit.course import myst
from dpkit.course.myst import (
    EXPLICIT,
    HEADING,
    OPEN_FENCE,
    PLAIN_FENCE,
    ROLE,
    TARGET,
    read_directive,
)

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
ZH = BOOK / "zh"
GLOSSARY = ZH / "glossary.md"
#: Pages of the zh edition with no English page (scripts/zh_book.py adds them to its toc).
ZH_ONLY = frozenset({"glossary"})
#: Options a translation translates (a figure's text alternative).
TRANSLATED_OPTIONS = frozenset({"alt"})
#: Glossary terms not checked, because the English word has other meanings that take
#: another Chinese word: an *error* raised by code (错误), the *solution* of an equation (解),
#: to *grade* (评分), a *mean* squared error (均方), the *sum* of (之和), floating point as an
#: adjective (浮点运算).
UNCHECKED_TERMS = frozenset({"error", "solution", "grade", "mean", "sum", "floating point"})

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
# (a formula may run over a line break of a hard-wrapped English paragraph, not a blank line)
_INLINE_MATH = re.compile(r"\$((?:[^$\n]|\n(?![ \t]*\n))+?)\$")
#: An escaped dollar (\$50K), which is text, not the start of a formula.
_DOLLAR = re.compile(r"\\\$")
_TEXT_IN_MATH = re.compile(r"\\text\{[^{}]*\}")
# (inline code, like a formula, may run over a line break but not over a blank line)
_INLINE_CODE = re.compile(r"`(?:[^`\n]|\n(?![ \t]*\n))*`")
_LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
_HTML_HREF = re.compile(r'href="(?P<target>[^"]+)"')
_URL = re.compile(r"https?://\S+")
#: Lines that are not the continuation of a paragraph: blank, a heading, a list item, a table
#: row, an option or definition, a fence, a target, display math, HTML, a quote marker.
_NOT_PROSE = re.compile(r"^\s*($|#|[-*+] |\d+\. |\||:|`{3,}|~{3,}|:{3,}|\(|\$\$|<|>)")


def code_cells(text: str) -> list[str]:
    """The raw text of every ``{code-cell}`` block, fence to fence, in order."""
    lines = text.splitlines()
    cells, i = [], 0
    while i < len(lines):
        read = read_directive(lines, i)
        if read is not None and read[0].name == "code-cell":
            cells.append("\n".join(lines[i:read[1]]))
            i = read[1]
        else:
            i += 1
    return cells


def prose_lines(text: str) -> list[str]:
    """The lines of ``text`` outside its front matter, code cells, plain code fences and
    math blocks (``{math}`` directives and ``$$`` blocks): the Markdown a translator writes,
    directive fences and options included."""
    lines = text.splitlines()
    if lines and lines[0] == "---":
        end = lines.index("---", 1)
        lines = lines[end + 1:]
    kept, i = [], 0
    open_fences: list[str] = []     # the directives open at this line, innermost last
    while i < len(lines):
        line = lines[i]
        fence = OPEN_FENCE.match(line)
        if fence and fence["name"].strip() in ("code-cell", "math"):
            i = read_directive(lines, i)[1]
            continue
        if fence:
            open_fences.append(fence["fence"])
        elif open_fences and line.strip() == open_fences[-1]:
            open_fences.pop()
            kept.append(line)
            i += 1
            continue
        plain = PLAIN_FENCE.match(line)
        if plain and not fence:
            close = next((j for j in range(i + 1, len(lines))
                          if lines[j].strip() == plain.group(1)), len(lines))
            i = close + 1
            continue
        if line.strip().startswith("$$") and line.strip().count("$$") == 1:
            close = next((j for j in range(i + 1, len(lines)) if "$$" in lines[j]), len(lines))
            kept.append(" ".join(lines[i:close + 1]))   # kept whole, for the math check
            i = close + 1
            continue
        kept.append(line)
        i += 1
    return kept


def headings(text: str) -> list[int]:
    """The level of every heading, in order."""
    return [len(m["hashes"]) for m in map(HEADING.match, prose_lines(text)) if m]


def labels(text: str) -> list[str]:
    """Every target ``(label)=`` and ``:label:`` option, in order."""
    found = []
    for line in prose_lines(text):
        target = TARGET.match(line.strip())
        if target:
            found.append(target["label"])
        elif line.strip().startswith(":label:"):
            found.append(line.split(":label:", 1)[1].strip())
    return found


def directives(text: str) -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """Every directive (nested ones and the code and math blocks included), in order: its
    name, its argument where it is a key and not a title (a glue directive's, a code cell's
    kernel), and its options but the translated ones (:data:`TRANSLATED_OPTIONS`)."""
    return [(name, arg if name.startswith("glue") or name == "code-cell" else "",
             tuple(sorted((k, v) for k, v in options.items() if k not in TRANSLATED_OPTIONS)))
            for name, arg, options in myst.directives(text)]


def _joined(text: str, titles: bool) -> str:
    """:func:`prose_lines` as one text: directive fences replaced by their titles (or by
    nothing), closing fences, options and targets dropped, so that inline code, a formula or
    a role that runs over a line break of a hard-wrapped paragraph is read whole."""
    kept = []
    for line in prose_lines(text):
        stripped = line.strip()
        fence = OPEN_FENCE.match(line)
        if fence:
            kept.append(fence["arg"] if titles else "")
        elif (stripped and set(stripped) <= set("`:~")) or TARGET.match(stripped) or \
                (stripped.startswith(":") and not stripped.startswith(": ")):
            kept.append("")
        else:
            kept.append(line)
    return "\n".join(kept)


def _role_text(role: re.Match) -> str:
    """What a role shows as prose: a reference's explicit text, else nothing."""
    explicit = EXPLICIT.match(role["content"])
    return f" {explicit['text']} " if explicit and role["role"] != "math" else " "


def _plain(text: str, titles: bool = False) -> str:
    """:func:`_joined` with each role replaced by the text it shows (:func:`_role_text`),
    without inline code, and with escaped dollars (``\\$50K``) no longer dollars."""
    plain = ROLE.sub(_role_text, _joined(text, titles))
    return _DOLLAR.sub("USD", _INLINE_CODE.sub(" ", plain))


def _prose_text(text: str) -> str:
    """The words a reader reads: :func:`_plain` with directive titles, without math, links'
    addresses and URLs."""
    prose = _INLINE_MATH.sub(" ", _DISPLAY_MATH.sub(" ", _plain(text, titles=True)))
    return _URL.sub(" ", _LINK.sub(" ", _HTML_HREF.sub(" ", prose)))


def references(text: str) -> Counter:
    """The multiset of the roles (cross-references, citations, glue keys, math roles), each
    with its target (the explicit text of a reference dropped), and of the link targets (a
    multiset: a translation may reorder a sentence)."""
    found = []
    for role in ROLE.finditer(_joined(text, titles=True)):
        explicit = EXPLICIT.match(role["content"])
        target = explicit["target"] if explicit and role["role"] != "math" else role["content"]
        found.append((role["role"], " ".join(target.split())))
    plain = _plain(text)
    found += [("link", m["target"]) for m in _LINK.finditer(plain)]
    found += [("link", m["target"]) for m in _HTML_HREF.finditer(plain)]
    return Counter(found)


def math(text: str) -> Counter:
    """The multiset of the formulas of the prose (``$$...$$`` and ``$...$``, and ``{math}``
    blocks; a multiset: a translation may reorder a sentence), each ``\\text{...}`` emptied
    (its words are prose, translated)."""
    lines = text.splitlines()
    blocks = [read_directive(lines, i) for i in range(len(lines))]
    found = [b[0].body for b in blocks if b is not None and b[0].name == "math"]
    prose = _plain(text)
    found += _DISPLAY_MATH.findall(prose)
    found += _INLINE_MATH.findall(_DISPLAY_MATH.sub(" ", prose))
    return Counter(" ".join(_TEXT_IN_MATH.sub(r"\\text{}", f).split()) for f in found)


def numbers(text: str) -> Counter:
    """The multiset of the numbers written in the prose (:func:`_prose_text`), thousands
    separators dropped."""
    return Counter(n.replace(",", "") for n in _NUMBER.findall(_prose_text(text)))


def hard_wraps(text: str) -> list[str]:
    """Lines of Chinese prose continued on the next line (a paragraph hard-wrapped: MyST joins
    the lines with a space, shown between two Chinese characters)."""
    lines = prose_lines(text)
    return [f"{here!r} / {there!r}" for here, there in itertools.pairwise(lines)
            if _CJK.search(here) and not _NOT_PROSE.match(here) and not _NOT_PROSE.match(there)]


def glossary(path: Path = GLOSSARY) -> dict[str, str]:
    """``{English term: Chinese term}`` from the glossary's table (the Chinese term without
    the parenthesised addition, as in 稀疏向量技术（SVT）)."""
    terms = {}
    for line in path.read_text().splitlines():
        # (an HTML tag in a cell, <wbr>, is a line-break hint for a phone's narrow table)
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] not in ("English", "---") and line.startswith("|"):
            terms[cells[0]] = cells[1].split("（", 1)[0].strip()
    return terms


def _term_pattern(term: str) -> re.Pattern:
    flags = 0 if any(c.isupper() for c in term) else re.IGNORECASE
    return re.compile(r"(?<![\w-])" + re.escape(term) + r"s?(?![\w-])", flags)


def missing_terms(english: str, chinese: str, terms: dict[str, str]) -> list[str]:
    """Glossary terms of the English prose whose Chinese term the translation never uses
    (terms with other symbols than letters, spaces and hyphens, and
    :data:`UNCHECKED_TERMS`, are not checked)."""
    prose = _prose_text(english)
    return [f"{en} → {zh}" for en, zh in sorted(terms.items())
            if en not in UNCHECKED_TERMS and re.fullmatch(r"[A-Za-zé' -]+", en)
            and _term_pattern(en).search(prose) and zh not in chinese]


#: Each check: (what it compares, a function of the English and the Chinese text returning
#: the English value and the Chinese value that must be equal).
CHECKS = {
    "code cells": lambda en, zh: (code_cells(en), code_cells(zh)),
    "front matter": lambda en, zh: (en.split("\n---\n", 1)[0] if en.startswith("---") else "",
                                    zh.split("\n---\n", 1)[0] if zh.startswith("---") else ""),
    "heading levels": lambda en, zh: (headings(en), headings(zh)),
    "labels": lambda en, zh: (labels(en), labels(zh)),
    "directives": lambda en, zh: (directives(en), directives(zh)),
    "references": lambda en, zh: (references(en), references(zh)),
    "math": lambda en, zh: (math(en), math(zh)),
    "numbers": lambda en, zh: (numbers(en), numbers(zh)),
    "hard wraps": lambda en, zh: ([], hard_wraps(zh)),
    "glossary terms": lambda en, zh: ([], missing_terms(en, zh, glossary())),
}


def differences(english: str, chinese: str) -> dict[str, tuple]:
    """``{check: (English value, Chinese value)}`` for every check of :data:`CHECKS` the
    translation ``chinese`` of ``english`` fails (empty when it passes them all)."""
    found = {}
    for name, check in CHECKS.items():
        en, zh = check(english, chinese)
        if en != zh:
            found[name] = (en, zh)
    return found
