"""The exercise checkers speak the student's language through one catalogue (issue #23).

Every text a checker of :mod:`dpkit.check` shows is an English template passed through
:func:`dpkit.i18n.tr`; its Chinese lives in :mod:`dpkit.i18n_check`. Two kinds of tests:

* from the source (:mod:`ast`): every template a checker passes to ``tr`` has a zh entry,
  with the same fields and format specifications, and no English sentence in the checkers'
  code reaches a verdict without going through ``tr`` (so a new English message without a
  translation fails here, whichever checker it is added to);
* from the verdicts: every ``check_*`` function, on wrong answers that reach its different
  messages, says in Chinese what it says in English, with the same numbers, and no English
  sentence is left in the Chinese verdict (code, parameter names and formulas aside).

Deterministic: the statistical checkers run on their fixed seeds, and the answers given them
here fail at the first test (their verdicts are asserted failing).
"""

from __future__ import annotations

import ast
import collections
import math
import pathlib
import re
import string
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpkit.check as check
from dpkit import i18n
from dpkit.audit import AuditResult
from dpkit.check._common import WITHHELD, call_checked
from dpkit.check.exponential import BITS_ONLY_REFUSAL, REFUSED_DRAWS, BitsOnly
from dpkit.check.laplace import _audit_text
from dpkit.exponential import Eta
from dpkit.i18n_check import CHECK_CATALOGUE
from dpkit.rng import seeded

CHECKERS = pathlib.Path(check.__file__).parent
ZH = CHECK_CATALOGUE["zh"]
#: Module-level English constants that are no message of their own: the bits-only source's
#: refusal (raised in English, since a grader matches it; the catalogue has each of its
#: formatted texts, tested below) and the names of the draws it refuses.
CONSTANTS = {"BITS_ONLY_REFUSAL", "REFUSED_DRAWS"}
#: Two English words in a row or more: the mark of an English sentence (or a piece of one).
_WORDS = re.compile(r"[A-Za-z]{2,}(?:[ ,;:]+[A-Za-z]{2,})+")
#: An HTML tag (with its attributes): markup, no message.
_TAG = re.compile(r"<[^>]*>")


@pytest.fixture(autouse=True)
def _language_reset(monkeypatch):
    monkeypatch.delenv("DPKIT_LANG", raising=False)
    yield
    i18n.set_language(None)


# ------------------------------------------------------------------------ from the source

def _tr_calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == "tr"]


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of ``tree``'s module, classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def untranslated(source: str) -> list[str]:
    """The English texts of ``source`` (a checker module) that can reach a verdict without
    passing through ``tr``: string literals and f-strings, outside docstrings, ``tr(...)``
    arguments, ``raise`` statements (errors about a checker's own parameters, for the
    programmer), HTML tags and the module constants that ``tr`` is applied to by name or that
    :data:`CONSTANTS` lists, that hold two English words in a row."""
    tree = ast.parse(source)
    skipped = _docstrings(tree)
    by_name = {arg.id for call in _tr_calls(tree) for arg in call.args[:1]
               if isinstance(arg, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node in _tr_calls(tree):
            skipped.update(id(inner) for inner in ast.walk(node.args[0]))
        elif isinstance(node, ast.Raise):
            skipped.update(id(inner) for inner in ast.walk(node))
        elif isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id in by_name | CONSTANTS
                for target in node.targets):
            skipped.update(id(inner) for inner in ast.walk(node.value))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(value) for value in node.values)
            text = "".join(value.value if isinstance(value, ast.Constant) else "{}"
                           for value in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if _WORDS.search(_TAG.sub("", text)):
            found.append(f"line {node.lineno}: {text!r}")
    return found


def templates() -> dict[str, list[str]]:
    """``{template: [where it is used]}``: every literal a checker passes to ``tr``."""
    found = collections.defaultdict(list)
    for path in sorted(CHECKERS.glob("*.py")):
        for call in _tr_calls(ast.parse(path.read_text())):
            if isinstance(call.args[0], ast.Constant):
                found[call.args[0].value].append(f"{path.name}:{call.lineno}")
    return found


def test_the_checkers_use_the_catalogue():
    assert len(templates()) > 200


def test_every_template_of_the_checkers_has_a_zh_entry():
    missing = {text: where for text, where in templates().items()
               if text not in ZH and text not in i18n.CATALOGUE["zh"]}
    assert missing == {}


def test_no_english_message_bypasses_the_catalogue():
    found = {path.name: untranslated(path.read_text()) for path in sorted(CHECKERS.glob("*.py"))}
    assert {name: texts for name, texts in found.items() if texts} == {}


def test_a_new_english_message_without_tr_is_caught():
    """The source test above can fail: a message, a hint or a detail written without ``tr``
    is found; the same texts through ``tr``, a docstring and a programmer's error are not."""
    planted = '''
def check_new(fn):
    """Check fn: a docstring is no message."""
    if fn is None:
        raise TypeError("fn must be a function, got None")
    hint = "a new hint in English"
    details = [f"at x={fn(1)} the value is right"]
    return Verdict(False, tr("a translated message {x}").format(x=1), details), hint
'''
    assert untranslated(planted) == ["line 6: 'a new hint in English'",
                                     "line 7: 'at x={} the value is right'"]


def _fields(template: str) -> list[tuple[str, str, str | None]]:
    return sorted((name, spec, conversion)
                  for _, name, spec, conversion in string.Formatter().parse(template)
                  if name is not None)


def test_every_entry_keeps_its_fields_and_formats():
    changed = {english: (_fields(english), _fields(chinese)) for english, chinese in ZH.items()
               if _fields(english) != _fields(chinese)}
    assert changed == {}


def test_the_two_catalogues_share_no_key():
    assert set(ZH) & set(i18n.CATALOGUE["zh"]) == set()


def test_every_zh_entry_is_used():
    """No entry is left behind by a message that changed: each is a template of a checker,
    a constant that a checker passes to ``tr`` or one of the bits-only source's refusals."""
    used = set(templates()) | {WITHHELD, "a probability strictly between 0 and 1 is needed"}
    used |= {BITS_ONLY_REFUSAL.format(what=what) for what in REFUSED_DRAWS}
    assert set(ZH) - used == set()


def test_refusals_of_lent_objects_are_quoted_in_chinese():
    """The bits-only source raises its refusal in English (a grader matches the text); a
    verdict quoting it speaks the student's language. So does a withheld message's reason;
    the student's own error message is quoted as it is, even if it reads like a catalogue
    entry."""
    i18n.set_language("zh")
    source = BitsOnly(seeded(1))
    for what in REFUSED_DRAWS:
        method = what.split(" ")[0]
        draw = getattr(source, method)
        arguments = {"bytes": (1,), "randbelow": (2,), "bernoulli": (0.5,), "uint64": (1,),
                     "uniforms": (1,)}.get(method, ())
        verdict = call_checked(draw, *arguments, where="在小权重上")
        assert f"RuntimeError: 采样器调用了 rng.{method}" in verdict.message, verdict.message
    withheld = ValueError("hidden")
    withheld.withheld = True

    def hidden() -> None:
        raise withheld
    assert i18n.tr(WITHHELD) in call_checked(hidden, where="当 p=0.5 时").message

    def own() -> None:
        raise ValueError("too small")
    assert call_checked(own, where="当 p=0.5 时").message.endswith("ValueError: too small")


# ------------------------------------------------------------------------ from the verdicts

#: Code, parameter names and formulas that a Chinese verdict keeps in their English form.
KEPT = re.compile("|".join([
    # Python's own messages of the errors the wrong answers below raise (first: they hold
    # words that are kept alone too).
    r"division by zero", r"int too large to convert to float", r"\b[A-Z][A-Za-z]*Error\b",
    r"normal\(loc, scale\)", r"enumerate\(queries\)", r"dpkit\.exponential\.Eta",
    r"rng\.[a-z_]+(\([a-z]*\))?", r"\bAboveThreshold\b", r"\bSparse\b", r"\bVerdict\b",
    r"\bNone\b", r"\bnumpy\b", r"\bKS\b",
    r"\b(epsilon|delta|alpha|epsilon_prime|epsilon0|yes_fraction|confidence|value|size|"
    r"lower|upper)\b",
    r"\b(floor|sqrt|ln|exp|erf|bitlen|Lap|int|len|list|optimal)\b",
]))


def english_left(text: str) -> list[str]:
    """Runs of English words left in ``text`` once code and parameter names are removed."""
    return _WORDS.findall(KEPT.sub("", text))


def numbers(text: str) -> collections.Counter[str]:
    return collections.Counter(re.findall(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?", text))


def _sampler_randbelow(weights: list[int], rng: Any) -> int:
    return 0 if rng.randbelow(2) else 1


def _sampler_float(weights: list[int], rng: Any) -> int:
    point = rng.bits(53) / 2**53 * sum(weights)
    for index, weight in enumerate(weights):
        point -= weight
        if point < 0:
            return index
    return len(weights) - 1


def _sampler_modulo(weights: list[int], rng: Any) -> int:
    point = rng.bits(6) % sum(weights)
    for index, weight in enumerate(weights):
        point -= weight
        if point < 0:
            return index
    return len(weights) - 1


def _first_query(queries: Any, data: Any, threshold: float, epsilon: float, rng: Any) -> int:
    return 0


def _listing(queries: Any, data: Any, threshold: float, epsilon: float, rng: Any) -> int:
    return len(list(queries))


def _one_late(queries: Any, data: Any, threshold: float, epsilon: float, rng: Any) -> int | None:
    for i, query in enumerate(queries):
        if query(data) > threshold:
            return i + 1
    return None


def _newton_sign(chi: float, epsilon: float) -> float:
    return -math.exp(-chi * chi) * (chi / math.sqrt(chi * chi + epsilon) - 1.0)


#: ``(checker, answer arguments)``: wrong answers that reach different failing messages of
#: every checker (the first answer of each is its most common mistake).
WRONG: list[tuple[str, tuple[Any, ...]]] = [
    ("check_truth_probability", (lambda e: 0.6,)),
    ("check_truth_probability", (lambda e: 0.3,)),
    ("check_truth_probability", (lambda e: 1.5,)),
    ("check_debias", (lambda y, e: y,)),
    ("check_rr_epsilon", (lambda p: math.log(p / (1 - p)),)),
    ("check_rr_epsilon", (lambda p: 2 * abs(math.log(p / (1 - p))) + 0.1,)),
    ("check_kary_truth_probability", (lambda e, k: math.exp(e) / (1 + math.exp(e)),)),
    ("check_guessing_accuracy", (lambda e, d: math.exp(e) / (1 + math.exp(e)),)),
    ("check_guessing_accuracy", (lambda e, d: 0.4,)),
    ("check_guessing_accuracy", (lambda e, d: 0.99,)),
    ("check_tradeoff", (lambda a, e, d: 0.0,)),
    ("check_tradeoff", (lambda a, e, d: 1.0,)),
    ("check_rr_delta", (lambda e, ep: 0.5,)),
    ("check_rr_delta", (lambda e, ep: 0.0,)),
    ("check_sum_count_sensitivity", (lambda lo, hi: hi - lo + 1,)),
    ("check_sum_count_sensitivity", (lambda lo, hi: max(abs(lo), abs(hi)),)),
    ("check_sum_count_sensitivity", (lambda lo, hi: 1 / 0,)),
    ("check_laplace_interval", (lambda d, e, c: 2 * d / e * math.log(1 / (1 - c)),)),
    ("check_laplace_mechanism", (lambda v, d, e, g: v + g.laplace(0, d * e),)),
    ("check_laplace_mechanism", (lambda v, d, e, g: round(v + g.laplace(0, d / e), 1),)),
    ("check_laplace_mechanism", (lambda v, d, e, g: "0.5",)),
    ("check_grid_scale", (lambda d, e, n: d / e,)),
    ("check_l2_sensitivity", (lambda k, c: c * k,)),
    ("check_classic_sigma", (lambda d, e, de: d / e * math.sqrt(2 * math.log(1 / de)),)),
    ("check_classic_sigma", (lambda d, e, de: d / e * math.sqrt(2 * math.log(1.25 / de)),)),
    ("check_crossover_dimension", (1,)),
    ("check_crossover_dimension", (10**3,)),
    ("check_crossover_dimension", ("12",)),
    ("check_delta_for_sigma", (lambda s, d, e: 0.5,)),
    ("check_analytic_sigma", (lambda d, e, de: 0.5,)),
    ("check_analytic_sigma", (lambda d, e, de: 100.0,)),
    ("check_analytic_sigma", (lambda d, e, de: -1.0,)),
    ("check_gaussian_noise", (lambda s, n, g: g.normal(0, s**2, n),)),
    ("check_gaussian_noise", (lambda s, n, g: [0.0, 1.0],)),
    ("check_newton_derivative", (_newton_sign,)),
    ("check_advanced_composition",
     (lambda e, k, dp: math.sqrt(2 * k * math.log(1 / dp)) * e,)),
    ("check_crossover", (lambda e, dp: 1,)),
    ("check_crossover", (lambda e, dp: None,)),
    ("check_crossover", (lambda e, dp: -2,)),
    ("check_laplace_profile", (lambda e, e0: 0.5,)),
    ("check_per_query_epsilon", (0.5,)),
    ("check_per_query_epsilon", (0.002,)),
    ("check_per_query_epsilon", (-1,)),
    ("check_queries_needed", (1,)),
    ("check_queries_needed", (10**7,)),
    ("check_queries_needed", (5000,)),
    ("check_queries_needed", ("many",)),
    ("check_underflow_threshold", (10,)),
    ("check_underflow_threshold", (10**6,)),
    ("check_underflow_threshold", (np.array([2.5]),)),
    ("check_eta_choice", (Eta(1, 12), 1.0, 3)),
    ("check_eta_choice", (5, 1.0, 3)),
    ("check_eta_choice", (Eta(1, 11), 1.0, 3)),
    ("check_eta_choice", (Eta(4000, 12), 1.0, 3)),
    ("check_precision", (1, -20, 80.5, 3000, Eta(1243, 11))),
    ("check_precision", (10**6, -20, 80.5, 3000, Eta(1243, 11))),
    ("check_precision", (2.5, -20, 80.5, 3000, Eta(1243, 11))),
    ("check_division_free_sampler", (_sampler_randbelow,)),
    ("check_division_free_sampler", (_sampler_float,)),
    ("check_division_free_sampler", (_sampler_modulo,)),
    ("check_division_free_sampler", (lambda w, rng: len(w),)),
    ("check_sparse_scales", (lambda e, c: (4 * c / e, 2 * c / e),)),
    ("check_sparse_scales", (lambda e, c: (2 / e, 4 / e),)),
    ("check_sparse_scales", (lambda e, c: 1.0,)),
    ("check_little_noise_cost", (lambda e, c: 1.75 * e,)),
    ("check_little_noise_cost", (lambda e, c: 0.1 * e,)),
    ("check_above_threshold", (_first_query,)),
    ("check_above_threshold", (_listing,)),
    ("check_above_threshold", (_one_late,)),
    ("check_auto_avg", (lambda v, e, rng: float(np.mean(v)),)),
    ("check_auto_avg", (lambda v, e, rng: 1.0,)),
]

#: Right answers, whose passing verdicts are compared too.
RIGHT: list[tuple[str, tuple[Any, ...]]] = [
    ("check_truth_probability", (lambda e: math.exp(e) / (1 + math.exp(e)),)),
    ("check_laplace_mechanism", (lambda v, d, e, g: v + g.laplace(0, d / e),)),

    ("check_sum_count_sensitivity", (lambda lo, hi: max(abs(lo), abs(hi)) + 1,)),
    ("check_little_noise_cost", (lambda e, c: (1 + 6 * c) / 4 * e,)),
    ("check_per_query_epsilon", (0.024,)),
    ("check_eta_choice", (Eta(3468, 12), 1.0, 3)),
    ("check_queries_needed", (124,)),
]


def _verdicts(name: str, args: tuple[Any, ...]) -> tuple[check.Verdict, check.Verdict, str, str]:
    shown = {}
    for language in ("en", "zh"):
        i18n.set_language(language)
        verdict = getattr(check, name)(*args)
        shown[language] = (verdict, str(verdict))
    return shown["en"][0], shown["zh"][0], shown["en"][1], shown["zh"][1]


def test_every_checker_has_a_wrong_answer_here():
    public = {name for name in dir(check) if name.startswith("check_")}
    assert public - {name for name, _ in WRONG} == set()


@pytest.mark.parametrize("name, args", WRONG, ids=[f"{n}-{i}" for i, (n, _) in enumerate(WRONG)])
def test_a_wrong_answer_gets_the_same_verdict_in_chinese(name: str, args: tuple[Any, ...]):
    english, chinese, english_text, chinese_text = _verdicts(name, args)
    assert not english.passed and not chinese.passed
    assert len(english.details) == len(chinese.details)
    assert english_left(chinese_text) == [], chinese_text
    assert re.search(r"[\u4e00-\u9fff]", chinese.message), chinese.message
    assert numbers(chinese_text) == numbers(english_text), (english_text, chinese_text)


@pytest.mark.parametrize("name, args", RIGHT, ids=[n for n, _ in RIGHT])
def test_a_right_answer_passes_in_both_languages(name: str, args: tuple[Any, ...]):
    english, chinese, english_text, chinese_text = _verdicts(name, args)
    assert english.passed and chinese.passed
    assert english_text.startswith("PASSED: ") and chinese_text.startswith("通过：")
    assert english_left(chinese_text) == [], chinese_text
    assert numbers(chinese_text) == numbers(english_text), (english_text, chinese_text)


def test_the_verdict_headings_follow_the_language():
    verdict = check.Verdict(False, "m", ("d",))
    assert str(verdict) == "NOT YET: m\n  - d"
    assert "<strong>Not yet:</strong> m" in verdict._repr_html_()
    i18n.set_language("zh")
    assert str(verdict) == "尚未通过：m\n  - d"
    assert "<strong>尚未通过：</strong> m" in verdict._repr_html_()
    assert str(check.Verdict(True, "m")) == "通过：m"


def test_the_environment_chooses_the_language_of_a_verdict(monkeypatch):
    """``DPKIT_LANG=zh`` (the zh book's kernels) is enough; no call to set_language."""
    answer: Callable[[float], float] = lambda e: 0.3  # noqa: E731
    monkeypatch.setenv("DPKIT_LANG", "zh")
    assert check.check_truth_probability(answer).message.startswith("当 epsilon=0.1 时")
    monkeypatch.setenv("DPKIT_LANG", "en")
    assert check.check_truth_probability(answer).message.startswith("at epsilon=0.1 ")


def test_the_detector_finds_english_left_in_a_chinese_verdict():
    """The verdict tests above can fail: an English sentence is found, code is not."""
    assert english_left("当 p=0.5 时，your function raised ValueError") == [
        "your function raised"]
    assert english_left("'0.5'（类型为 str）; of type str") == ["of type str"]
    assert english_left("你的函数返回了 None；AboveThreshold 返回 rng.bits(k)") == []
    assert numbers("e^ε × (1 + 0.01)，ℓ1") != numbers("e^ε × (1 + 0.02)，ℓ1")


@pytest.mark.parametrize("complement", [False, True])
def test_the_audit_in_a_laplace_verdict_reads_as_its_own_text(complement: bool):
    """The Laplace checker writes the audit's result itself, to translate it: in English it
    is ``str(audit)`` word for word, and in Chinese it keeps the same numbers."""
    audit = AuditResult(0.125, "output > 0.5", (700, 400), 1000, 1 - 1e-7, complement)
    assert _audit_text(audit) == str(audit)
    i18n.set_language("zh")
    assert english_left(_audit_text(audit)) == []
    assert numbers(_audit_text(audit)) == numbers(str(audit))
