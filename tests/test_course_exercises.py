"""The exercises' metadata: library functions an answer may not use (report §2: one library
call answered "write it yourself" exercises with full marks), found statically."""

import ast
from pathlib import Path

import pytest

from dpkit.course.exercises import FORBIDDEN, JUDGED, environment_use, forbidden_use
from dpkit.course.worker import _KERNEL_ARGV as KERNEL_ARGV

BOOK = Path(__file__).resolve().parent.parent / "book"


def _setup(chapter: str) -> str:
    """The chapter's set-up cell (its first code cell), as the released notebook has it."""
    return (BOOK / f"{chapter}.md").read_text().split("```{code-cell} ipython3\n")[1] \
        .split("```")[0]

AT = "def my_above_threshold(queries, data, threshold, epsilon, rng):\n"
MODEL_AT = AT + (
    "    g = rng.numpy_generator()\n"
    "    t = threshold + g.laplace(0.0, 2 / epsilon)\n"
    "    for i, q in enumerate(queries):\n"
    "        if q(data) + g.laplace(0.0, 4 / epsilon) >= t:\n"
    "            return i\n"
    "    return None\n")


@pytest.mark.parametrize(("label", "answer", "earlier", "named"), [
    ("ex-laplace-interval", "def half_width(sensitivity, epsilon, confidence):\n"
     "    return laplace_accuracy(sensitivity, epsilon, 1 - confidence)\n", [],
     "dpkit.laplace.laplace_accuracy"),
    ("ex-laplace-grid-scale", "def grid_noise_scale(sensitivity, epsilon, d):\n"
     "    return laplace_grid(sensitivity, epsilon, d).scale\n", [], "laplace_grid"),
    ("ex-exp-precision", "bits = compute_precision(-20, 80.5, 3000, Eta(1243, 11))\n", [],
     "compute_precision"),
    ("ex-svt-above-threshold", AT + "    return dpkit.svt.above_threshold(queries, data, "
     "threshold, epsilon, rng=rng)\n", [], "dpkit.svt.above_threshold"),
    # through a helper two cells up, an alias of the module, an import under another name
    ("ex-svt-above-threshold", AT + "    return helper(queries, data, threshold, epsilon, rng)\n",
     ["import dpkit.svt as s\n", "def helper(*args):\n    return run(*args)\n",
      "run = s.above_threshold\n"], "above_threshold"),
    ("ex-svt-above-threshold", "from dpkit.svt import above_threshold as my_above_threshold\n",
     [], "above_threshold"),
    ("ex-svt-above-threshold", "from dpkit.check.laplace import laplace_accuracy\n" + AT +
     "    return __import__('dpkit.svt').svt.above_threshold(queries, data, threshold, "
     "epsilon, rng=rng)\n", [], "above_threshold"),
])
def test_library_answers_are_refused(label, answer, earlier, named):
    """Each was graded 3/3 (report §2) or is the same call reached another way: refused
    with a message that names the exercise's demand and the function, whether the set-up
    cell is known or not. Deterministic."""
    chapter = {"ex-laplace": "laplace", "ex-exp": "exponential_base2"}.get(
        label[:label.index("-", 3)], "sparse_vector")
    for setup in (None, _setup(chapter)):
        why = forbidden_use(label, answer, earlier, setup)
        assert why is not None and named in why and FORBIDDEN[label][1] in why, why


@pytest.mark.parametrize(("answer", "earlier"), [
    (AT + "    return m.above_threshold(queries, data, threshold, epsilon, rng)\n",
     ["m = dpkit.svt\n"]),
    (AT + "    return q.sparse(queries, data, threshold, epsilon, rng=rng)\n",
     ["from dpkit import svt as q\n"]),
    (AT + "    return module().above_threshold(queries, data, threshold, epsilon, rng)\n",
     ["def module():\n    return dpkit.svt\n"]),
    (AT + "    return run(dpkit.svt, queries, data, threshold, epsilon, rng)\n",
     ["def run(mod, *args):\n    return mod.above_threshold(*args)\n"]),
    (AT + "    return box[0].above_threshold(queries, data, threshold, epsilon, rng)\n",
     ["box = []\n", "box.append(dpkit.svt)\n"]),
    (AT + "    return holder.m.above_threshold(queries, data, threshold, epsilon, rng)\n",
     ["import dpkit.svt as s\nclass Holder:\n    m = s\nholder = Holder()\n"]),
    (AT + "    return o.k.above_threshold(queries, data, threshold, epsilon, rng)\n",
     ["class O:\n    pass\no = O()\n", "setattr(o, 'k', dpkit.svt)\n"]),
    (AT + "    return above_threshold(queries, data, threshold, epsilon, rng)\n",
     ["def unrelated(above_threshold):\n    return above_threshold\n"]),
])
def test_library_objects_reached_through_aliases_are_refused(answer, earlier):
    """A dpkit module held by an alias, a helper's result or argument, a container or an
    attribute: its ``above_threshold`` is the library's, set-up cell known or not."""
    for setup in (None, _setup("sparse_vector")):
        why = forbidden_use("ex-svt-above-threshold", answer, earlier, setup)
        assert why is not None and "dpkit.svt" in why, why


@pytest.mark.parametrize("answer", [
    AT + "    f = getattr(dpkit.svt, 'above_' + 'threshold')\n"
    "    return f(queries, data, threshold, epsilon, rng=rng)\n",
    AT + "    return eval('dpkit.svt.above' + '_threshold')(queries, data, threshold, "
    "epsilon, rng=rng)\n",
    AT + "    return vars(dpkit.svt)['above_threshold'](queries, data, threshold, epsilon, rng)\n",
    AT + "    import sys\n    return sys.modules['dpkit.svt'].__dict__['above_threshold'](\n"
    "        queries, data, threshold, epsilon, rng)\n",
    AT + "    from sys import modules\n    return modules['dpkit.svt']\n",
    AT + "    return getattr(dpkit.svt, 'above_threshold')(queries, data, threshold)\n",
    AT + "    look = getattr\n    return look(dpkit.svt, name)(queries, data, threshold)\n",
    AT + "    return globals()['above_threshold'](queries, data, threshold, epsilon, rng)\n",
    AT + "    return exec(compile('x = 1', 'cell', 'exec'))\n",
    AT + "    import importlib\n    return importlib.import_module(name)\n",
    AT + "    import operator\n    return operator.attrgetter(name)(dpkit.svt)\n",
    AT + "    return dpkit.__getattr__('svt')\n",
    "found = locals()['above_' + 'threshold']\n" + AT + "    return found(queries)\n",
])
def test_dynamic_lookups_are_refused_where_a_function_is_forbidden(answer):
    """A name built at run time, or looked up from a string, cannot be read from the
    source: refused as such (or as the library call it statically is)."""
    for setup in (None, _setup("sparse_vector")):
        why = forbidden_use("ex-svt-above-threshold", answer, [], setup)
        assert why is not None and ("dynamically" in why or "dpkit.svt" in why
                                    or "may not be imported" in why), why


#: Correct answers the honest-student review (F5-F7) saw refused: a helper class whose
#: method is named above_threshold, getattr with a constant harmless name for duck typing,
#: a demo line that fills a format string from locals(), scipy.sparse, re.compile.
HONEST = [
    ("ex-svt-above-threshold",
     "def my_above_threshold(queries, data, threshold, epsilon, rng):\n"
     "    state = NoisyThreshold(threshold, epsilon, rng.numpy_generator())\n"
     "    for index, query in enumerate(queries):\n"
     "        if state.above_threshold(query(data)):\n"
     "            return index\n"
     "    return None\n",
     ["class NoisyThreshold:\n"
      "    def __init__(self, threshold, epsilon, generator):\n"
      "        self.generator = generator\n"
      "        self.epsilon = epsilon\n"
      "        self.noisy = threshold + generator.laplace(0.0, 2 / epsilon)\n\n"
      "    def above_threshold(self, answer):\n"
      "        return answer + self.generator.laplace(0.0, 4 / self.epsilon) >= self.noisy\n"]),
    ("ex-svt-above-threshold",
     "def my_above_threshold(queries, data, threshold, epsilon, rng):\n"
     "    make = getattr(rng, 'numpy_generator', None)\n"
     "    generator = make() if make is not None else rng\n"
     "    noisy_threshold = threshold + generator.laplace(0.0, 2 / epsilon)\n"
     "    for index, query in enumerate(queries):\n"
     "        if query(data) + generator.laplace(0.0, 4 / epsilon) >= noisy_threshold:\n"
     "            return index\n"
     "    return None\n", []),
    ("ex-laplace-interval",
     "def half_width(sensitivity, epsilon, confidence):\n"
     "    b = sensitivity / epsilon\n"
     "    return -b * math.log1p(-confidence)\n\n\n"
     "w = half_width(1, 0.1, 0.95)\n"
     "print('95% half-width at eps = 0.1: +/-{w:.1f} people'.format(**locals()))\n", []),
    ("ex-svt-above-threshold", "import numpy as np, scipy.sparse\n" + MODEL_AT, []),
    ("ex-svt-above-threshold", MODEL_AT.replace("    g = rng", "    assert PATTERN.match('x')\n"
                                                "    g = rng"),
     ["import re\nPATTERN = re.compile('x')\n"]),
    ("ex-svt-above-threshold", MODEL_AT.replace("    g = rng", "    print(vars(rng))\n"
                                                "    g = rng"), []),
]


@pytest.mark.parametrize(("label", "answer", "earlier"), HONEST)
def test_honest_answers_are_graded(label, answer, earlier):
    """Review F5-F7: each was refused (0/3) though it never reaches a forbidden function;
    graded now, with the chapter's set-up cell as the grader passes it. Deterministic."""
    chapter = "laplace" if label.startswith("ex-laplace") else "sparse_vector"
    assert forbidden_use(label, answer, earlier, _setup(chapter)) is None


def test_answers_written_by_hand_are_graded():
    """The model answer; one that shares parameter names with an experiment cell that does
    call the library (its experiment is not the answer's code); a helper of its own named
    like nothing forbidden; any exercise with no forbidden function. Deterministic."""
    experiment = ("epsilon = 0.5\nprint(above_threshold(qs, data, 0.0, epsilon))\n"
                  "x = getattr(dpkit, 'svt')\n")
    assert forbidden_use("ex-svt-above-threshold", MODEL_AT, [experiment]) is None
    helper = "def noise(g, b):\n    return g.laplace(0.0, b)\n"
    answer = MODEL_AT.replace("g.laplace(0.0, 4 / epsilon)", "noise(g, 4 / epsilon)")
    assert forbidden_use("ex-svt-above-threshold", answer, [helper, experiment]) is None
    assert forbidden_use("ex-laplace-textbook", "x = getattr(np, 'abs')", []) is None
    assert forbidden_use("ex-svt-above-threshold", "def broken(:\n", []) is None


#: Round 3 of the adversarial review (N1, N2, N7): the forbidden function reached through a
#: class attribute, a subscript store, ``pickle.loads`` of bytes naming it, and
#: ``inspect.getmembers``; then the same idea through other modules that resolve a name
#: given as data, dunder attributes, and a builtin's result the reading cannot name.
ROUND3 = [
    ("ex-laplace-interval", "def half_width(sensitivity, epsilon, confidence):\n"
     "    return _Box.f(sensitivity, epsilon, 1 - confidence)\n",
     ["class _Box:\n    pass\n\n_Box.f = laplace_accuracy\n"]),
    ("ex-laplace-grid-scale", "def grid_noise_scale(sensitivity, epsilon, d):\n"
     "    return _t['g'](sensitivity, epsilon, d).scale\n", ["_t = {}\n_t['g'] = laplace_grid\n"]),
    ("ex-laplace-grid-scale", "import pickle\n"
     "_g = pickle.loads(b'cdpkit.laplace\\nlaplace_grid\\n.')"
     "\n\ndef grid_noise_scale(sensitivity, epsilon, d):\n"
     "    return _g(sensitivity, epsilon, d).scale\n", []),
    ("ex-laplace-interval", "import inspect\nimport dpkit.laplace as _lap\n"
     "_fns = dict(inspect.getmembers(_lap))\n\n"
     "def half_width(sensitivity, epsilon, confidence):\n"
     "    return _fns['laplace_' + 'accuracy'](sensitivity, epsilon, 1 - confidence)\n", []),
    ("ex-svt-above-threshold", "from pickle import loads as _l\n" + AT +
     "    return _l(b'cdpkit.svt\\nabove_threshold\\n.')(queries, data, threshold, epsilon)\n",
     []),
    ("ex-svt-above-threshold", AT + "    import numpy.compat as c\n"
     "    return c.pickle.loads(blob)(queries, data, threshold, epsilon)\n", []),
    ("ex-svt-above-threshold", AT + "    import pydoc\n"
     "    return pydoc.locate('dpkit.svt.above_' + 'threshold')(queries, data)\n", []),
    ("ex-svt-above-threshold", AT + "    import gc\n"
     "    return [f for f in gc.get_objects() if f is not None][0](queries)\n", []),
    ("ex-svt-above-threshold", AT + "    f = np.load(io.BytesIO(blob), allow_pickle=True)\n"
     "    return f[()](queries, data, threshold, epsilon)\n", []),
    ("ex-svt-above-threshold",
     AT + "    return [].__class__.__base__.__subclasses__()[k](queries)\n", []),
    ("ex-svt-above-threshold",
     AT + "    return next(iter([dpkit.svt])).above_threshold(queries)\n", []),
    ("ex-svt-above-threshold", AT + "    return vars(next(iter([dpkit.svt])))['above_' "
     "'threshold'](queries)\n", []),
    ("ex-svt-above-threshold", AT + "    import code as c\n"
     "    return c.InteractiveInterpreter().runsource(text)\n", []),
]


@pytest.mark.parametrize(("label", "answer", "earlier"), ROUND3)
def test_round3_indirections_are_refused(label, answer, earlier):
    """Each reaches (or could reach) a forbidden function by an indirection the reading did
    not follow; the pickle ones were graded 3/3 on main. Refused with the exercise's demand
    in the message, set-up cell known or not. Deterministic."""
    chapter = "laplace" if label.startswith("ex-laplace") else "sparse_vector"
    for setup in (None, _setup(chapter)):
        why = forbidden_use(label, answer, earlier, setup)
        assert why is not None and FORBIDDEN[label][1] in why, why


def test_honest_answers_next_to_the_round3_rules_are_graded():
    """What the broader rules leave alone: ``re.compile``, ``sys.float_info``, ``__init__``
    and ``__name__``, an own method named like the forbidden function on an object the
    reading cannot name, ``copy.deepcopy``. Deterministic."""
    answer = MODEL_AT.replace("    g = rng", "    import sys, copy\n"
                              "    tiny = sys.float_info.epsilon + len(type(rng).__name__)\n"
                              "    kept = copy.deepcopy([tiny])\n"
                              "    g = rng")
    assert forbidden_use("ex-svt-above-threshold", answer, [], _setup("sparse_vector")) is None
    helper = ("class Gate:\n    def __init__(self, t):\n        self.t = t\n\n"
              "    def above_threshold(self, x):\n        return x >= self.t\n")
    answer = AT + ("    gates = list([Gate(threshold)])\n"
                   "    return 0 if gates[0].above_threshold(queries[0](data)) else None\n")
    assert forbidden_use("ex-svt-above-threshold", answer, [helper],
                         _setup("sparse_vector")) is None


_LABELS = {"L": "ex-laplace-interval", "G": "ex-laplace-grid-scale",
           "S": "ex-svt-above-threshold"}


#: Round 6 of the adversarial review (findings 1-3): the forbidden function evaluated in a
#: scope the reading took for another (a default, a class body, a comprehension's first
#: iterable), or bound by an earlier cell the check never read (it followed only the
#: statements that bind, by their syntax, a name the answer mentions).
@pytest.mark.parametrize(("label", "answer", "earlier"), [
    # finding 1: defaults are evaluated in the enclosing scope
    ("L", "def half_width(sensitivity, epsilon, confidence, "
     "laplace_accuracy=laplace_accuracy):\n"
     "    return laplace_accuracy(sensitivity, epsilon, 1 - confidence)\n", []),
    ("G", "def grid_noise_scale(s, e, d, *, laplace_grid=laplace_grid):\n"
     "    return laplace_grid(s, e, d).scale\n", []),
    ("L", "half_width = lambda s, e, c, laplace_accuracy=laplace_accuracy: "
     "laplace_accuracy(s, e, 1 - c)\n", []),
    ("S", "def my_above_threshold(q, d, t, e, rng, above_threshold=above_threshold):\n"
     "    return above_threshold(q, d, t, e, rng=rng)\n", []),
    # finding 3: a class's names are not seen by the functions in its body; a
    # comprehension's first iterable is evaluated outside it
    ("S", "class _K:\n    above_threshold = None\n"
     "    def run(queries, data, threshold, epsilon, rng):\n"
     "        return above_threshold(queries, data, threshold, epsilon, rng=rng)\n"
     "my_above_threshold = _K.run\n", []),
    ("G", "grid_noise_scale = [lambda s, e, d: laplace_grid(s, e, d).scale "
     "for laplace_grid in [laplace_grid]][0]\n", []),
    # finding 2: earlier cells that bind a name dynamically
    ("L", "def half_width(s, e, c):\n    return la(s, e, 1 - c)\n",
     ["globals()['la'] = laplace_accuracy\n"]),
    ("G", "def grid_noise_scale(s, e, d):\n    return lg(s, e, d).scale\n",
     ["import builtins\nbuiltins.lg = laplace_grid\n"]),
    ("S", "def my_above_threshold(q, d, t, e, rng):\n    return at(q, d, t, e, rng=rng)\n",
     ["exec('at = above_threshold')\n"]),
    ("S", "def my_above_threshold(q, d, t, e, rng):\n    return np.at(q, d, t, e, rng=rng)\n",
     ["import numpy as N\nN.at = above_threshold\n"]),
    ("S", "def my_above_threshold(q, d, t, e, rng):\n"
     "    return dpkit.svt.mine(q, d, t, e, rng=rng)\n",
     ["from dpkit import svt as S\nS.mine = S.above_threshold\n"]),
])
def test_round6_scopes_and_earlier_cells_are_read(label, answer, earlier):
    """Each was graded (3/3 in the real grader for the first of each kind); refused now,
    with the chapter's set-up cell as the grader passes it and without. Deterministic."""
    label = _LABELS[label]
    chapter = "laplace" if label.startswith("ex-laplace") else "sparse_vector"
    for setup in (None, _setup(chapter)):
        assert forbidden_use(label, answer, earlier, setup) is not None, (answer, earlier)


def test_round6_honest_scopes_and_experiments_are_graded():
    """What the stricter reading must still grade: a default, a class attribute or a
    comprehension variable of the student's own that shadows nothing forbidden in its
    scope; an earlier experiment cell that only calls the library function. Deterministic."""
    setup = _setup("sparse_vector")
    answers = [
        MODEL_AT.replace("rng):", "rng, scale=4):").replace("4 / epsilon", "scale / epsilon"),
        "class _K:\n    above_threshold = None\n\n" + MODEL_AT.replace("def ", "    def ")
        .replace("\n    ", "\n        ") + "my_above_threshold = _K.my_above_threshold\n",
        AT + "    return [i for i in [None]][0]\n",
    ]
    experiment = ["print(above_threshold(qs, data, 0.0, 1.0))\n",
                  "runs = (dpkit.svt.above_threshold(qs, data, 0.0, 1.0) for _ in range(3))\n"]
    for answer in answers:
        assert forbidden_use("ex-svt-above-threshold", answer, experiment[:1], setup) is None
    # a call inside a comprehension may run later, from the answer: read as a use
    assert forbidden_use("ex-svt-above-threshold", MODEL_AT, experiment, setup) is not None


HW = "def half_width(sensitivity, epsilon, confidence):\n"

#: Correct answers the honest-student review 6 saw refused (findings 2, 4, 5): a
#: ``__future__`` import; the student's own names spelled like a refused module or
#: function; dunder names of the student's own classes.
HONEST6 = [
    ("L", "from __future__ import annotations\n"
     "def half_width(sensitivity: float, epsilon: float, confidence: float) -> float:\n"
     "    return sensitivity / epsilon * math.log(1 / (1 - confidence))\n", []),
    ("S", "from __future__ import annotations\nfrom typing import Optional\n" +
     MODEL_AT.replace("rng):", "rng) -> Optional[int]:"), []),
    ("L", HW + "    modules = [sensitivity / epsilon, math.log(1 / (1 - confidence))]\n"
     "    return modules[0] * modules[1]\n", []),
    ("L", HW + "    return sensitivity / epsilon * math.log(1 / (1 - confidence))\n\n"
     "mock = dict(sensitivity=1, epsilon=0.1, confidence=0.95)\nprint(half_width(**mock))\n",
     []),
    ("L", HW + "    return sensitivity / epsilon * math.log(1 / (1 - confidence))\n",
     ["def inspect(w):\n    print(w)\n    return w\n", "inspect(half_width(1, .1, .95))\n"]),
    ("S", MODEL_AT.replace("        if q(data) + g.laplace(0.0, 4 / epsilon) >= t:",
                           "        imp = q(data) + g.laplace(0.0, 4 / epsilon)\n"
                           "        if imp >= t:"), []),
    ("S", AT + "    g = rng.numpy_generator()\n    t = threshold + g.laplace(0.0, 2 / epsilon)\n"
     "    return locate(q(data) + g.laplace(0.0, 4 / epsilon) >= t for q in queries)\n",
     ["def locate(passes):\n"
      "    return next((i for i, ok in enumerate(passes) if ok), None)\n"]),
    ("L", "import dataclasses\n\n@dataclasses.dataclass(frozen=True)\nclass Scale:\n"
     "    sensitivity: float\n    epsilon: float\n    __slots__ = ('sensitivity', 'epsilon', "
     "'b')\n\n    def __post_init__(self):\n"
     "        object.__setattr__(self, 'b', self.sensitivity / self.epsilon)\n\n"
     "    def __repr__(self):\n"
     "        return f'{type(self).__module__}.{type(self).__qualname__}({self.b})'\n\n"
     "    def __rmul__(self, x):\n        return x * self.b\n\n"
     + HW + "    s = Scale(sensitivity, epsilon)\n"
     "    total = 0.0\n    total += s.__rmul__(math.log(1 / (1 - confidence)))\n"
     "    return total\n", []),
    ("L", "import functools\n\ndef traced(f):\n    @functools.wraps(f)\n"
     "    def inner(*a):\n        return f(*a)\n    return inner\n\n@traced\n" + HW +
     "    return sensitivity / epsilon * math.log(1 / (1 - confidence))\n\n"
     "print(half_width.__wrapped__)\n", []),
    ("S", MODEL_AT, ["def f(allow_pickle=False):\n    return allow_pickle\n",
                     "f(allow_pickle=True)\n"]),
]


@pytest.mark.parametrize(("label", "answer", "earlier"), HONEST6)
def test_honest6_answers_are_graded(label, answer, earlier):
    """Each was refused (0/3) though it never reaches a forbidden function nor looks a name
    up; graded now, set-up cell known or not. Deterministic."""
    label = _LABELS[label]
    chapter = "laplace" if label.startswith("ex-laplace") else "sparse_vector"
    for setup in (None, _setup(chapter)):
        assert forbidden_use(label, answer, earlier, setup) is None, answer


#: The same words where they may be the real thing: still refused.
@pytest.mark.parametrize(("answer", "earlier"), [
    (AT + "    import sys\n    return sys.modules['dpkit.svt']\n", []),
    (AT + "    return self.modules['dpkit.svt']\n", ["class A:\n    modules = 1\n"]),
    (AT + "    return pickle.loads(blob)\n", ["import numpy as np, pickle as np2\n"]),
    (AT + "    return mock(queries)\n", ["import numpy as mock\n"]),
    (AT + "    return mock(queries)\n", []),
    (AT + "    f = np.load(io.BytesIO(blob), allow_pickle=True)\n    return f[()](queries)\n",
     ["def load(allow_pickle):\n    return allow_pickle\n"]),
    (AT + "    object.__setattr__(box, name, dpkit.svt)\n    return box.k.above_threshold\n",
     []),
    (AT + "    box.__setattr__('above_threshold', 1)\n    return 0\n", []),
    (AT + "    return dpkit.svt.above_threshold.__wrapped__(queries)\n", []),
    (AT + "    return m.__wrapped__(queries)\n", ["import dpkit.svt as m\n"]),
    (AT + "    return type(rng).__getattribute__(rng, name)\n", []),
    (AT + "    return queries.__reduce__()\n", []),
    (AT + "    return __builtins__\n", []),
    ("from __future__ import annotations\nimport importlib\n" + AT +
     "    return importlib.import_module(name)\n", []),
])
def test_honest6_rules_keep_the_real_modules_refused(answer, earlier):
    """A refused word where it may be the module or function it names (imported, an
    attribute, an import's ``as``, unbound), a computed or forbidden ``__setattr__``, the
    library's ``__wrapped__``, the other dunders. Deterministic."""
    for setup in (None, _setup("sparse_vector")):
        why = forbidden_use("ex-svt-above-threshold", answer, earlier, setup)
        assert why is not None and "AboveThreshold" in why, answer


def test_a_refused_import_is_named_with_its_cell_and_line():
    """Review 6, finding 3: ``import math, pickle`` in an earlier cell refuses the answer
    that uses ``math``; the feedback names ``pickle``, the cell and the line, and says what
    to do. Deterministic."""
    answer = HW + "    return sensitivity / epsilon * math.log(1 / (1 - confidence))\n"
    why = forbidden_use("ex-laplace-interval", answer,
                        [("x = 1\nimport math, pickle\n", "the cell you added above "
                          "Exercise 2.2")], _setup("laplace"))
    assert why is not None
    assert "pickle" in why and "the cell you added above Exercise 2.2, line 2" in why, why
    assert "import each module you use by its own name" in why, why
    why = forbidden_use("ex-laplace-interval", "from pickle import loads\n" + answer, [],
                        _setup("laplace"))
    assert why is not None and "in its answer, line 1" in why, why


#: Adversarial review round 7, finding 3 (3/3 in the real grader for 2.2, 2.6 and 7.2): a
#: ``match`` class pattern's keyword reads the attribute it names, and its capture binds it.
ROUND7_PATTERNS = [
    ("S", "import dpkit.svt\nmatch dpkit.svt:\n    case object(above_threshold=at):\n"
     "        pass\n\n"
     "def my_above_threshold(queries, data, threshold, epsilon, rng):\n"
     "    return at(queries, data, threshold, epsilon, rng=rng)\n", []),
    ("G", "def grid_noise_scale(s, e, d):\n    match dpkit.laplace:\n"
     "        case object(laplace_grid=lg):\n            return lg(s, e, d).scale\n", []),
    ("L", HW + "    match dpkit.laplace:\n        case object(laplace_accuracy=la):\n"
     "            return la(sensitivity, epsilon, 1 - confidence)\n", []),
    # in an earlier cell, nested in another pattern, or under an alias of the module
    ("S", "def my_above_threshold(q, d, t, e, rng):\n    return at(q, d, t, e, rng=rng)\n",
     ["import dpkit\nmatch dpkit:\n    case object(svt=object(above_threshold=at)):\n"
      "        pass\n"]),
    ("G", "import dpkit.laplace as m\ndef grid_noise_scale(s, e, d):\n    match m:\n"
     "        case (object(laplace_grid=lg) | object(laplace_grid=lg)):\n"
     "            return lg(s, e, d).scale\n", []),
    # a capture binds the subject, a mapping pattern's key reads its item
    ("S", "def my_above_threshold(q, d, t, e, rng):\n    match [dpkit.svt]:\n"
     "        case [mod]:\n            return mod.above_threshold(q, d, t, e, rng=rng)\n", []),
    ("S", "def my_above_threshold(q, d, t, e, rng):\n    match dpkit.svt:\n"
     "        case object() as mod:\n            return mod.above_threshold(q, d, t, e, "
     "rng=rng)\n", []),
    ("G", "def grid_noise_scale(s, e, d):\n    match {'laplace_grid': 1} | dict(m=dpkit.laplace):\n"
     "        case {'m': object(laplace_grid=lg)}:\n            return lg(s, e, d).scale\n", []),
]


@pytest.mark.parametrize(("label", "answer", "earlier"), ROUND7_PATTERNS)
def test_round7_match_patterns_are_read(label, answer, earlier):
    """Refused, set-up cell known or not (the first three were graded before).
    Deterministic."""
    label = _LABELS[label]
    chapter = "laplace" if label.startswith("ex-laplace") else "sparse_vector"
    for setup in (None, _setup(chapter)):
        why = forbidden_use(label, answer, earlier, setup)
        assert why is not None and FORBIDDEN[label][0][0].rsplit(".", 1)[1] in why, why


def test_round7_honest_match_patterns_are_graded():
    """``match`` in a correct answer: a class of the student's own with a field named like
    the forbidden function, literal and capture patterns on plain values. Deterministic."""
    own = ("from dataclasses import dataclass\n\n@dataclass\nclass Step:\n"
           "    above_threshold: bool\n    index: int\n\n" + AT +
           "    g = rng.numpy_generator()\n    t = threshold + g.laplace(0.0, 2 / epsilon)\n"
           "    for i, q in enumerate(queries):\n"
           "        match Step(q(data) + g.laplace(0.0, 4 / epsilon) >= t, i):\n"
           "            case Step(above_threshold=True, index=j):\n                return j\n"
           "            case _:\n                pass\n    return None\n")
    plain = (HW + "    match (sensitivity, epsilon):\n        case (s, e) if e > 0:\n"
             "            return s / e * math.log(1 / (1 - confidence))\n"
             "        case {'x': x, **rest}:\n            return x\n")
    assert forbidden_use("ex-svt-above-threshold", own, [], _setup("sparse_vector")) is None
    assert forbidden_use("ex-laplace-interval", plain, [], _setup("laplace")) is None


#: Adversarial review round 7, finding 2 (3/3 in the real grader): a randomized answer that
#: adds noise only where it is graded, keyed on the sandbox.
DEVICE = ("def my_laplace(value, sensitivity, epsilon, generator):\n"
          "    if {test}:\n        return float(value)\n"
          "    return float(value + generator.laplace(0.0, sensitivity / epsilon))\n")


@pytest.mark.parametrize(("imports", "test"), [
    ("import sys\n", "sys.argv != ['notebook']"),
    ("import os\n", "os.environ.get('HOME', '') != ''"),
    ("import os\n", "os.getuid() == 0"),
    ("", "'get_ipython' in dir(__builtins__) or get_ipython"),
    ("from sys import argv as a\n", "a != ['notebook']"),
    ("import socket\n", "socket.gethostname() != 'localhost'"),
    ("import dpkit.timing\n", "getattr(dpkit.timing._state.local, 'depth', 0)"),
    # adversarial review 8, L3 (3/3 in the real grader): the kernel's modules, the folder
    ("import sys\n", "'ipykernel' not in sys.modules"),
    ("import os\n", "os.getcwd() != '/home/me'"),
    ("import sys\n", "not sys.stdout.isatty() and 'python' in sys.executable"),
    ("", "__import__('IPython') is None"),
    ("import builtins\n", "builtins.__import__('IPython') is None"),
    ("", "eval('1') == 1"),
])
def test_round7_environment_reads_are_refused_in_judged_answers(imports, test):
    """Refused in an answer to a randomized exercise (and in an earlier cell it may use);
    the same code in an exercise judged by agreement is not refused. Deterministic."""
    answer = imports + DEVICE.format(test=test)
    for label in ("ex-laplace-textbook", "ex-svt-auto-avg"):
        why = environment_use(label, answer, [])
        assert why is not None and "reads the environment" in why, why
    why = environment_use("ex-analytic-variance", "def noise(s, n, g):\n    return 0\n",
                          [(answer, "the cell you added above Exercise 4.3")])
    assert why is not None and "the cell you added above Exercise 4.3" in why, why
    assert environment_use("ex-laplace-interval", answer, []) is None


def test_round7_honest_judged_answers_read_no_environment():
    """The model answers, and a student's own names that are words of ENVIRONMENT."""
    honest = [MODEL_AT, "def my_laplace(value, sensitivity, epsilon, generator):\n"
              "    platform, timing = 1, sensitivity / epsilon\n"
              "    return value + generator.laplace(0.0, timing * platform)\n",
              "import re\nPATTERN = re.compile('[0-9]+')\n" + MODEL_AT]
    for answer in honest:
        assert environment_use("ex-svt-above-threshold", answer, []) is None, answer
        assert environment_use("ex-laplace-textbook", answer, ["import numpy as np\n"]) is None


def test_the_worker_looks_like_a_kernel():
    """``sys.argv`` in the sandbox is an IPython kernel's, not ``["notebook"]``."""
    assert KERNEL_ARGV[0].endswith("ipykernel_launcher.py") and KERNEL_ARGV[1] == "-f"
    assert KERNEL_ARGV[2].endswith(".json") and "/jupyter/runtime/kernel-" in KERNEL_ARGV[2]


def test_the_judged_exercises_are_those_with_a_judge():
    from dpkit.course.judges import JUDGES

    assert set(JUDGES) == JUDGED


#: The honest-student review 7 (F3, 0/3 in the real grader): an experiment cell that
#: re-imports the forbidden function the set-up cell already binds, then calls it.
MODEL_HW = HW + "    return sensitivity / epsilon * math.log(1 / (1 - confidence))\n"


@pytest.mark.parametrize(("label", "chapter", "experiment"), [
    ("ex-laplace-interval", "laplace",
     "from dpkit.laplace import laplace_accuracy\nprint(laplace_accuracy(1, 0.1, 0.95))\n"),
    ("ex-svt-above-threshold", "sparse_vector",
     "from dpkit.svt import above_threshold\n"
     "print(above_threshold([lambda d: d], 1.0, 0.0, 1.0))\n"),
])
def test_round7_reimporting_the_set_up_binding_in_an_experiment_is_graded(label, chapter,
                                                                         experiment):
    """Re-importing, in a cell of one's own, a function the set-up cell already binds by
    that name binds nothing new: the answer is graded. Deterministic."""
    answer = MODEL_HW if chapter == "laplace" else MODEL_AT
    assert forbidden_use(label, answer, [(experiment, "the cell you added")],
                         _setup(chapter)) is None


@pytest.mark.parametrize(("experiment", "answer"), [
    # an alias binds a new name
    ("from dpkit.laplace import laplace_accuracy as la\n", HW + "    return la(sensitivity, "
     "epsilon, confidence)\n"),
    # the re-import under the answer's own name: the answer cell then binds nothing
    ("from dpkit.laplace import laplace_accuracy as half_width\n", "pass\n"),
    # the re-imported name used, not called where it is named
    ("from dpkit.laplace import laplace_accuracy\nf = laplace_accuracy\n",
     HW + "    return f(sensitivity, epsilon, confidence)\n"),
    # and used by the answer
    ("from dpkit.laplace import laplace_accuracy\n",
     HW + "    return laplace_accuracy(sensitivity, epsilon, confidence)\n"),
    # a re-import inside a function (it could run later)
    ("def get():\n    from dpkit.laplace import laplace_accuracy\n    return laplace_accuracy\n",
     HW + "    return get()(sensitivity, epsilon, confidence)\n"),
    # with another name in the same statement
    ("from dpkit.laplace import laplace_accuracy, laplace_grid as g\n",
     HW + "    return laplace_accuracy(sensitivity, epsilon, confidence)\n"),
])
def test_round7_reimports_that_reach_the_function_are_still_refused(experiment, answer):
    """What the re-import exemption does not cover: an alias, a use of the name other than
    a call where it is named, a re-import inside a function. Deterministic."""
    for setup in (None, _setup("laplace")):
        why = forbidden_use("ex-laplace-interval", answer, [(experiment, "the cell you added")],
                            setup)
        assert why is not None and "laplace_accuracy" in why, (experiment, why)


@pytest.mark.parametrize("answer", [
    '__all__ = ["half_width"]\n\n' + MODEL_HW,
    MODEL_HW + "\nprint(half_width.__annotations__, half_width.__defaults__)\n",
])
def test_round7_plain_dunders_of_ones_own_are_graded(answer):
    """``__all__`` assigned, and the annotations and defaults of the student's own function
    read, look nothing up by name (honest review 7, F4). Deterministic."""
    assert forbidden_use("ex-laplace-interval", answer, [], _setup("laplace")) is None


def test_round7_a_refused_dunder_says_to_remove_it():
    """A refused double-underscore name is named, with what to do. Deterministic."""
    why = forbidden_use("ex-laplace-interval", MODEL_HW + "x = half_width.__globals__\n", [],
                        _setup("laplace"))
    assert why is not None and "remove __globals__" in why, why
    lib = forbidden_use("ex-laplace-interval", MODEL_HW + "import dpkit.laplace as L\n"
                        "x = L.__annotations__\n", [], _setup("laplace"))
    assert lib is not None and "remove __annotations__" in lib, lib


def test_round8_the_books_own_idioms_are_graded_in_judged_answers():
    """Honest review 8: ``with unpadded():`` (the book's idiom for simulations, imported by
    the set-up cells) in an experiment, and an attribute of the student's own class named
    like an environment word (``self.timing``), were refused (H2, H3); the device reading
    ``dpkit.timing`` or ``sys.argv`` still is. Deterministic."""
    experiment = ("with unpadded():\n"
                  "    errors = [my_auto_avg([1.0] * 50, 1.0, None) for _ in range(50)]\n")
    kept = "class Timer:\n    def __init__(self):\n        self.timing = []\n" \
           "    def add(self, t):\n        self.timing.append(t)\n        return self.timing\n"
    assert environment_use("ex-svt-auto-avg", MODEL_AT, [(experiment, "a cell")]) is None
    assert environment_use("ex-svt-above-threshold", kept + MODEL_AT, []) is None
    assert environment_use("ex-svt-auto-avg", MODEL_AT, [kept]) is None
    for device in ("import dpkit.timing as t\nx = t._state\n",
                   kept + "import sys\nx = sys.argv\n",
                   "import sys\ns = sys\nclass A:\n    def f(self):\n        self.argv = 1\n"
                   "x = s.argv\n"):
        assert environment_use("ex-svt-auto-avg", MODEL_AT, [device]) is not None, device


def test_round9_students_own_names_and_the_books_unpadded_are_graded():
    """Honest review 9 (in-process): a name bound in another cell (F1), ``from re import
    compile`` (F2), a class's or dataclass's or namedtuple's field named like a word (F3),
    and the Laplace chapter's own ``dpkit.timing.unpadded()`` and ``from dpkit.timing import
    unpadded`` (F4) were refused in randomized exercises. Deterministic."""
    textbook = ("def my_laplace(value, sensitivity, epsilon, generator):\n"
                "    return value + generator.laplace(0.0, sensitivity / epsilon)\n")
    honest = [
        (textbook + "timing.append(1)\n", ["timing = []\n"]),
        (textbook + "from re import compile\np = compile('a+')\n", []),
        ("from dataclasses import dataclass\n@dataclass\nclass Run:\n    value: float\n"
         "    timing: float\nr = Run(1.0, 2.0)\nprint(r.timing)\n" + textbook, []),
        ("class Stats:\n    timing = 0.0\n    def f(self):\n        return self.timing\n"
         + textbook, []),
        ("from collections import namedtuple\nRes = namedtuple('Res', 'value platform')\n"
         "r = Res(1, 2)\nprint(r.platform)\n" + textbook, []),
        (textbook, ["import dpkit.timing\nwith dpkit.timing.unpadded():\n"
                    "    xs = [my_laplace(1.0, 1.0, 1.0, None) for _ in range(3)]\n"]),
        (textbook, ["import dpkit\nwith dpkit.timing.unpadded():\n    pass\n"]),
        (textbook, ["from dpkit.timing import unpadded\nwith unpadded():\n    pass\n"]),
        (textbook, ["from IPython.display import display, Markdown\ndisplay(Markdown('x'))\n"]),
    ]
    for answer, earlier in honest:
        assert environment_use("ex-laplace-textbook", answer, earlier) is None, (answer, earlier)
    devices = ["import dpkit.timing as t\nx = t._state\n", "from dpkit.timing import _state\n",
               "from dpkit import timing\n", "import dpkit.timing\nx = dpkit.timing._state\n",
               "import dpkit\nx = dpkit.timing\n", "eval('1')\n"]
    for device in devices:
        assert environment_use("ex-laplace-textbook", textbook, [device]) is not None, device


#: Adversarial review 10, A2 (3/3 each in the real grader): the environment read through
#: a string lookup (``getattr``, ``vars(…)[…]``, ``__dict__[…]``), and through a method
#: call's result with a class field of the same name (the field exemption).
ROUND10_DEVICES = [
    ("ex-laplace-textbook", "import sys\n" + DEVICE.format(
        test="'ipykernel' in getattr(sys, 'modules')")),
    ("ex-analytic-variance", "import sys\n\ndef noise(sigma, size, generator):\n"
     "    if 'ipykernel' in vars(sys)['modules']:\n        return [0.0] * size\n"
     "    return generator.normal(0.0, sigma, size)\n"),
    ("ex-svt-above-threshold", "import os\n" + MODEL_AT.replace(
        "    g = rng", "    if getattr(os, 'environ').get('HOME') != '/tmp':\n"
        "        return 0\n    g = rng")),
    ("ex-svt-auto-avg", "import os\ndef my_auto_avg(values, epsilon, rng):\n"
     "    if getattr(os, 'environ').get('MPLBACKEND') != 'Agg':\n"
     "        return float(np.mean(values))\n    return 0.0\n"),
    ("ex-laplace-textbook", "import sys\n" + DEVICE.format(
        test="'ipykernel' in sys.__dict__['modules']")),
    ("ex-laplace-textbook", "import os\n" + DEVICE.format(test="'HOME' in vars(os)['environ']")),
    ("ex-laplace-textbook", "import os\nclass C:\n    environ = None\n\n" + DEVICE.format(
        test="'HOME' in [os].pop().environ")),
    ("ex-svt-auto-avg", "import sys\nclass C:\n    modules = None\n\ne = [sys].pop()\n"
     "def my_auto_avg(values, epsilon, rng):\n    return len(e.modules)\n"),
    ("ex-exp-sampler", "import os\nkey = 'env' + 'iron'\nx = getattr(os, key)\n"),
    ("ex-laplace-textbook", "import os\nm = {'m': os}.get('m')\nx = vars(m)['environ']\n"),
    ("ex-laplace-textbook", "import pickle\nx = pickle.loads(b'cos\\nenviron\\n.')\n"),
]


@pytest.mark.parametrize(("label", "answer"), ROUND10_DEVICES)
def test_round10_environment_reads_by_string_lookup_are_refused(label, answer):
    """Each read the environment where the check did not look (all allowed before).
    Deterministic."""
    why = environment_use(label, answer, [])
    assert why is not None and "judged by what your function returns" in why, why


def test_round10_honest_lookups_on_ones_own_objects_are_graded():
    """``getattr`` with a constant name on the student's own object (and on a generator),
    ``getattr``/``setattr`` with a computed name on ``self``, a field ``environ`` of the
    student's own class read on its own object, and a key ``"environ"`` of the student's
    own dict stay allowed. Deterministic."""
    textbook = ("def my_laplace(value, sensitivity, epsilon, generator):\n"
                "    return value + generator.laplace(0.0, sensitivity / epsilon)\n")
    honest = [
        "class Run:\n    def __init__(self, **kw):\n        for k, v in kw.items():\n"
        "            setattr(self, k, v)\n    def get(self, name):\n"
        "        return getattr(self, name)\n",
        "class Run:\n    def __init__(self):\n        self.environ = {}\n        self.scale = 1.0\n"
        "r = Run()\nprint(getattr(r, 'scale'), r.environ, hasattr(r, 'scale'))\n",
        "settings = {'environ': 'lab', 'argv': [1]}\nprint(settings['environ'], "
        "settings.get('argv'))\n",
        "import numpy as np\ng = np.random.default_rng(0)\nprint(getattr(g, 'laplace')(0, 1))\n",
    ]
    for cell in honest:
        for label in ("ex-laplace-textbook", "ex-svt-auto-avg"):
            assert environment_use(label, textbook, [cell]) is None, cell


#: Honest review 11, F5: the public check called in one's own cell, as every exercise says.
TEXTBOOK = ("def my_laplace(value, sensitivity, epsilon, generator):\n"
            "    return value + generator.laplace(0.0, sensitivity / epsilon)\n")
CHECK = "dpkit.check.check_laplace_mechanism(my_laplace)"
SHOWN_CHECKS = [
    f"print({CHECK})\n",
    f"{CHECK}\n",
    f"verdict = {CHECK}   # as the exercise says: check it\nprint(verdict)\n",
    f"verdict = {CHECK}\nprint(verdict)\nassert verdict.passed, verdict.message\n",
    f"print(f'{{{CHECK}}}')\nprint({CHECK}.message, end='')\n",
    "from dpkit.check import check_laplace_mechanism\n"
    "print(check_laplace_mechanism(my_laplace))\n",
    "from dpkit import check\nprint(check.check_laplace_mechanism(my_laplace))\n",
    "import dpkit.check as c\ndisplay(c.check_laplace_mechanism(my_laplace))\n",
    f"from IPython.display import display\ndisplay({CHECK})\n",
]
#: What could tell the sandbox's stand-in checks (a placeholder verdict) from the real ones.
CHECK_DEVICES = [
    f"S = str({CHECK})\n",
    "c = dpkit.check\n",
    f"v = {CHECK}\nS = 'not run' in v.message\n",
    f"v = {CHECK}\nprint(v.message.startswith('not run'))\n",
    f"v = {CHECK}\ndef g():\n    return v\n",
    f"v = w = {CHECK}\n",
    f"T = type({CHECK})\n",
    f"print([{CHECK}])\n",
    f"print(S := {CHECK})\n",
    f"print({CHECK}, file=buf)\n",
    f"for f in [my_laplace]:\n    if {CHECK}.passed:\n        break\n",
    f"print = lambda x: None\nprint({CHECK})\n",
    f"def print(x):\n    global S\n    S = x\nprint({CHECK})\n",
    f"import io, sys\nsys.stdout = io.StringIO()\nprint({CHECK})\n",
    "S = hasattr(dpkit.check, 'check_laplace_mechanism')\n",
    "from dpkit.check import *\n",
    "from dpkit import *\n",
    "import operator\nc = operator.attrgetter('check')(dpkit)\n",
    "c = getattr(dpkit, 'check')\n",
    "from dpkit.check import check_laplace_mechanism as c\nf = c\n",
    "match dpkit:\n    case object(check=object(Verdict=x)):\n        S = x\n",
]


@pytest.mark.parametrize("cell", SHOWN_CHECKS)
def test_honest11_a_check_shown_in_ones_own_cell_is_graded(cell):
    """F5: the sandbox's ``dpkit.check`` is a stand-in whose checks return a placeholder
    (the grader runs the real ones); calling a check to show it, in the answer or a cell
    above it, is allowed in a randomized exercise. Deterministic."""
    assert environment_use("ex-laplace-textbook", TEXTBOOK + cell, []) is None
    assert environment_use("ex-laplace-textbook", TEXTBOOK, [cell]) is None


@pytest.mark.parametrize("cell", CHECK_DEVICES)
def test_honest11_any_other_use_of_the_checks_is_refused_in_judged_answers(cell):
    """F5: any other use of ``dpkit.check`` (its result, a check, the module, by any alias)
    could tell the stand-in from the real checks, so is refused in the code of an answer to
    a randomized exercise; a deterministic exercise's answer may use them (the stand-in
    cannot be searched with). Deterministic."""
    why = environment_use("ex-laplace-textbook", TEXTBOOK + cell, [])
    assert why is not None and "judged by what your function returns" in why, why
    why = environment_use("ex-svt-auto-avg", MODEL_AT, [(cell, "the cell you added")])
    assert why is not None and "in the cell you added" in why, why
    assert environment_use("ex-laplace-interval", TEXTBOOK + cell, []) is None


#: Honest review 11, F2: a key or field of the student's own named like an environment
#: word, on a value computed by a numeric, time or random library function.
HONEST11_OWN_WORDS = [
    "import time\nimport numpy as np\nrng = np.random.default_rng(1)\nt0 = time.perf_counter()\n"
    "for _ in range(1000):\n    rng.laplace(0.0, 1.0)\n"
    "elapsed = {'timing': time.perf_counter() - t0, 'calls': 1000}\n"
    "print(f\"{elapsed['timing'] / elapsed['calls'] * 1e6:.2f} us per draw\")\n",
    "import time\ntimes = {}\nt0 = time.perf_counter()\n"
    "times['timing'] = time.perf_counter() - t0\n",
    "from collections import defaultdict\nimport time\nresults = defaultdict(list)\n"
    "results['timing'].append(time.perf_counter())\n",
    "import pandas as pd\nimport numpy as np\ndf = pd.DataFrame({'x': np.arange(3)})\n"
    "df['timing'] = 0.0\n",
    "rng = np.random.default_rng(0)\nx = {'timing': rng.laplace(size=10)}.get('timing')\n",
    "import numpy as np\nx = {'modules': np.mean([1.0, 2.0])}['modules']\n",
    "from dataclasses import dataclass\nimport time\nimport numpy as np\n@dataclass\n"
    "class Run:\n    timing: float\n    release: float\n"
    "def run_once(gen):\n    t0 = time.perf_counter()\n    x = gen.laplace(0.0, 1.0)\n"
    "    return Run(time.perf_counter() - t0, x)\n"
    "r = run_once(np.random.default_rng(0))\nprint(r.timing)\n",
]


@pytest.mark.parametrize("cell", HONEST11_OWN_WORDS)
def test_honest11_own_keys_and_fields_on_numeric_results_are_graded(cell):
    """F2: ``time.perf_counter()``, ``np.random.default_rng(0)`` … were read as holding
    their module, so the student's own key ``"timing"`` or dataclass field ``r.timing`` on
    such a value was refused (0/3 in the real grader). A call of a numeric, time or random
    module's function holds only what its arguments hold. Deterministic."""
    assert environment_use("ex-laplace-textbook", TEXTBOOK, [cell]) is None
    assert environment_use("ex-laplace-textbook", cell + TEXTBOOK, []) is None


@pytest.mark.parametrize("device", [
    "import os\nx = [os].pop().environ\n", "import os\nx = next(iter([os])).environ\n",
    "import os\ndef f(m):\n    return m\nx = f(os).environ\n",
    "import os, copy\nx = copy.copy(os).environ\n",
    "import os, math\nmath.stash = [os]\nx = math.stash.pop().environ\n",
    "import os, time\ntime.stash = [os]\nx = time.stash.pop().environ\n",
    "import os\nimport numpy as np\nx = np.array([os], dtype=object)[0].environ\n",
    "import os\nnp = os\nx = np.getcwd().platform\n",
    "import os\nx = dict(m=os)['m'].environ\n", "import os\nx = vars(os)['environ']\n"])
def test_honest11_module_results_that_may_hold_a_module_stay_refused(device):
    """F2's narrowing keeps the review-10 A2 routes refused: a container's, a copy's or a
    helper's result, and a plain module's attribute the code stored a module in, may hold
    that module. Deterministic."""
    why = environment_use("ex-laplace-textbook", TEXTBOOK, [device])
    assert why is not None and "judged by what your function returns" in why, device


@pytest.mark.parametrize("experiment", [
    "with unpadded():\n    library_stops = [above_threshold(queries, data, -500, 1.0, rng=rng)"
    " for _ in range(100)]\nprint(library_stops)\n",
    "stops = {above_threshold(queries, data, 0, 1.0) for _ in range(3)}\n",
    "stops = {e: above_threshold(queries, data, 0, e) for e in (0.5, 1.0)}\n",
    "stops = [[above_threshold(queries, data, 0, 1.0) for _ in range(2)] for _ in range(3)]\n",
])
def test_honest11_an_experiment_in_a_comprehension_is_graded(experiment):
    """F4: a list, set or dict comprehension runs when its cell runs and keeps only its
    results, as the documented experiment ``print(above_threshold(…))`` does; it was refused
    (0/3 in the real grader). Deterministic."""
    setup = _setup("sparse_vector")
    assert forbidden_use("ex-svt-above-threshold", MODEL_AT, [experiment], setup) is None


@pytest.mark.parametrize("experiment", [
    "runs = (above_threshold(queries, data, 0, 1.0) for _ in range(3))\n",
    "from collections import Counter\nc = Counter(above_threshold(q, d, 0, 1.0) for _ in "
    "range(3))\n",
    "fs = [lambda: above_threshold(queries, data, 0, 1.0) for _ in range(3)]\n",
    "fs = [[lambda: above_threshold(queries, data, 0, 1.0)] for _ in range(3)]\n",
    "fs = [(above_threshold(queries, data, 0, 1.0) for _ in range(2)) for _ in range(3)]\n",
    "fs = [above_threshold for _ in range(3)]\n",
    "def g():\n    return [above_threshold(queries, data, 0, 1.0) for _ in range(3)]\n",
])
def test_honest11_a_forbidden_function_that_can_run_later_stays_refused(experiment):
    """F4's comprehensions do not reach into what runs later: a generator expression, a
    lambda or a function (documented). Deterministic."""
    setup = _setup("sparse_vector")
    why = forbidden_use("ex-svt-above-threshold", MODEL_AT, [experiment], setup)
    assert why is not None and "write AboveThreshold yourself" in why, experiment


SVT_CLASS = ("class Svt:\n    def __init__(self, epsilon, gen):\n"
             "        self.threshold_scale = 2 / epsilon\n        self.query_scale = 4 / epsilon\n"
             "        self.gen = gen\n    def draw(self, which):\n"
             "        return self.gen.laplace(0.0, getattr(self, which + '_scale'))\n")
SVT_ANSWER = AT + ("    svt = Svt(epsilon, rng.numpy_generator())\n"
                   "    t = threshold + svt.draw('threshold')\n"
                   "    for i, q in enumerate(queries):\n"
                   "        if q(data) + svt.draw('query') >= t:\n            return i\n"
                   "    return None\n")


def test_honest11_getattr_on_ones_own_self_is_graded_where_a_function_is_forbidden():
    """F6: ``getattr(self, which + "_scale")`` in a method of the student's own class was
    refused in 7.2 (0/3) though the environment check allows it: ``self`` of a class with no
    library base finds only what the student's code defines, and a forbidden function put
    there is named where it is put. Computed lookups elsewhere, on a subclass of a library
    class, or a forbidden function stored on ``self`` stay refused. Deterministic."""
    setup = _setup("sparse_vector")
    label = "ex-svt-above-threshold"
    assert forbidden_use(label, SVT_CLASS + SVT_ANSWER, [], setup) is None
    assert forbidden_use(label, SVT_ANSWER, [SVT_CLASS], setup) is None
    assert environment_use(label, SVT_CLASS + SVT_ANSWER, []) is None
    for device in [SVT_CLASS.replace("class Svt:", "class Svt(dpkit.svt.AboveThreshold):"),
                   SVT_CLASS.replace("getattr(self,", "getattr(self.gen,"),
                   SVT_CLASS + "    def f(self):\n        return above_threshold\n",
                   SVT_CLASS.replace("self.gen = gen", "self.gen = gen\n"
                                     "        self.above = dpkit.svt.above_threshold")]:
        assert forbidden_use(label, device + SVT_ANSWER, [], setup) is not None, device


def test_honest12_a_lambda_beside_a_sealed_class_does_not_break_the_reading():
    """Honest review 12, finding 1: ``reading.sealed`` read ``.name`` on every function node,
    and a ``lambda`` has none, so one top-level lambda beside ``getattr(self, computed)``
    in the student's own class raised AttributeError in the grader and the whole notebook
    was "could not be graded" (0 on every exercise). Deterministic."""
    answer = ("class Mechanism:\n    def __init__(self, kind):\n        self.kind = kind\n\n"
              "    def laplace_noise(self, scale, generator):\n"
              "        return generator.laplace(0.0, scale)\n\n"
              "    def noise(self, scale, generator):\n"
              "        return getattr(self, self.kind + '_noise')(scale, generator)\n\n\n"
              "mech = Mechanism('laplace')\n"
              "scale_of = lambda sensitivity, epsilon: sensitivity / epsilon\n\n\n"
              "def my_laplace(value, sensitivity, epsilon, generator):\n"
              "    return value + mech.noise(scale_of(sensitivity, epsilon), generator)\n")
    label = "ex-laplace-textbook"
    assert environment_use(label, answer, []) is None
    assert forbidden_use(label, answer, [], _setup("laplace")) is None


@pytest.mark.parametrize("rebinding", [
    "self += 0", "self = self + 0", "(self := self + 0)", "del self\n        self = os",
    "for self in [os]:\n            pass", "import os as self",
    "try:\n            1 / 0\n        except Exception as self:\n            pass"])
def test_adv12_self_rebound_in_the_method_loses_the_getattr_exemption(rebinding):
    """Adversarial review 12, F2: ``self += 0`` with an ``__add__`` that returns a module
    made ``self`` the module past the sealed-class rule, and ``getattr(self, computed)``
    then read any of its attributes (both checks allowed it; a device reading ``getuid``
    got full marks in-process). A method that binds its ``self`` again in any way loses
    the exemption. Deterministic."""
    answer = ("import os\n\nclass Probe:\n    def __add__(self, other):\n        return os\n\n"
              f"    def read(self, name):\n        {rebinding}\n"
              "        return getattr(self, name)()\n\n_p = Probe()\n\n"
              "def my_laplace(value, sensitivity, epsilon, generator):\n"
              "    noise = generator.laplace(0.0, sensitivity / epsilon)\n"
              "    return value + noise if _p.read('get' + 'uid') == 65534 else value\n")
    assert environment_use("ex-laplace-textbook", answer, []) is not None
    setup = _setup("sparse_vector")
    svt = ("import dpkit.svt as _m\n\nclass Helper:\n    def __add__(self, other):\n"
           "        return _m\n\n    def pick(self, name):\n        self += 0\n"
           "        return getattr(self, name)\n\n_h = Helper()\n\n"
           "def my_above_threshold(queries, data, threshold, epsilon, rng):\n"
           "    return _h.pick('above_' + 'threshold')(queries, data, threshold, epsilon, "
           "rng=rng)\n")
    assert forbidden_use("ex-svt-above-threshold", svt, [], setup) is not None


PROBE = ("import sys, os\nclass Probe:\n    def read(self, name):\n"
         "        return getattr(self, name)\n")
LAPLACE_TAIL = "\ndef my_laplace(value, sensitivity, epsilon, generator):\n    return value\n"


@pytest.mark.parametrize("route", [
    "_read = Probe.read\ng = _read(sys, 'orig_' + 'argv')\n",
    "g = Probe.read.__call__(os, 'get' + 'uid')\n",
    "g = [Probe.read][0]([sys][0], 'orig_' + 'argv')\n",
    "g = list(map(Probe.read, [sys], ['orig_' + 'argv']))\n",
    "import functools\ng = functools.partial(Probe.read, sys)('orig_' + 'argv')\n",
    "g = getattr(Probe, 'read')(sys, 'orig_' + 'argv')\n",
    "g = vars(Probe)['re' + 'ad'](sys, 'orig_' + 'argv')\n",
])
def test_adv11_the_getattr_on_self_exemption_is_not_reached_with_a_module_as_self(route):
    """Adversarial review 11, F3: ``f = Probe.read; f(sys, "orig_" + "argv")`` called the
    exempt method with a module as ``self`` (a defeat device on the command line, 3/3).
    The exemption now holds only while the class's methods are reached bound to an
    instance (``self.m(…)``, ``obj.m(…)`` with ``obj = Probe(…)``). Deterministic."""
    assert environment_use("ex-laplace-textbook", PROBE + route + LAPLACE_TAIL, []) is not None
    assert forbidden_use("ex-svt-above-threshold", PROBE + route + "def my(q): return q\n",
                         [], _setup("sparse_vector")) is not None
    # the honest use of the same class stays graded
    honest = PROBE.replace("import sys, os", "import sys") + "p = Probe()\ng = p.read('x')\n"
    assert environment_use("ex-laplace-textbook", honest + LAPLACE_TAIL, []) is None


@pytest.mark.parametrize("use", [
    "import dpkit.course.grading as g\nx = hasattr(g, 'grade')\n",
    "from dpkit.course import grading\n", "from dpkit import course\n",
    "import dpkit\nx = dpkit.course\n", "import dpkit\nx = getattr(dpkit, 'course')\n",
    "from dpkit.course.grading import grade\n", "import dpkit.course\n",
])
def test_adv11_the_course_kit_is_refused_in_the_code_of_an_answer(use):
    """In the sandbox the course kit's modules but the worker's are empty files, so that
    ``hasattr(dpkit.course.grading, "grade")`` told the sandbox from a notebook (adversarial
    review 11); no exercise needs the kit: both checks refuse it. Deterministic."""
    assert environment_use("ex-laplace-textbook", use + LAPLACE_TAIL, []) is not None
    assert forbidden_use("ex-svt-above-threshold", use + "def my(q): return q\n", [],
                         _setup("sparse_vector")) is not None
    assert environment_use("ex-laplace-textbook", "course = 3" + LAPLACE_TAIL, []) is None


#: Honest review 12, finding 2: ordinary class designs around ``getattr(self, computed)``.
MECH = ("class Mech:\n    def __init__(self, kind):\n        self.kind = kind\n\n"
        "    def laplace_noise(self, b, g):\n        return g.laplace(0.0, b)\n\n"
        "    def noise(self, b, g):\n        return getattr(self, self.kind + '_noise')(b, g)\n")
MECH_USE = ("\ndef my_laplace(value, sensitivity, epsilon, generator):\n"
            "    return value + {noise}(sensitivity / epsilon, generator)\n")
HONEST_CLASSES = [
    # a dataclass field read as self.kind
    "from dataclasses import dataclass\n\n@dataclass\nclass Mech:\n    kind: str = 'laplace'\n\n"
    "    def laplace_noise(self, b, g):\n        return g.laplace(0.0, b)\n\n"
    "    def noise(self, b, g):\n        return getattr(self, f'{self.kind}_noise')(b, g)\n\n"
    "mech = Mech()\n" + MECH_USE.format(noise="mech.noise"),
    # a class constant and an annotation read as self.X
    MECH.replace("class Mech:\n", "class Mech:\n    SUFFIX = '_noise'\n    kind: str\n")
    .replace("self.kind + '_noise'", "self.kind + self.SUFFIX")
    + "mech = Mech('laplace')\n" + MECH_USE.format(noise="mech.noise"),
    # a call on a fresh instance
    MECH + MECH_USE.format(noise="Mech(kind='laplace').noise"),
    # super().__init__(…) in a subclass of one's own
    MECH + "class Laplace(Mech):\n    def __init__(self):\n        super().__init__('laplace')\n\n"
    "mech = Laplace()\n" + MECH_USE.format(noise="mech.noise"),
    # functools.partial of a bound method
    "import functools\n" + MECH + "    def sampler(self, b):\n"
    "        return functools.partial(self.noise, b)\n\nmech = Mech('laplace')\n"
    "\ndef my_laplace(value, sensitivity, epsilon, generator):\n"
    "    return value + mech.sampler(sensitivity / epsilon)(generator)\n",
    # a property returning getattr(self, …), read on an instance
    MECH + "    @property\n    def draw(self):\n"
    "        return getattr(self, self.kind + '_noise')\n\nmech = Mech('laplace')\n"
    + MECH_USE.format(noise="mech.draw"),
    # a staticmethod and a classmethod read on the class
    MECH + "    @staticmethod\n    def scale(sensitivity, epsilon):\n"
    "        return sensitivity / epsilon\n\n    @classmethod\n    def kinds(cls):\n"
    "        return ('laplace',)\n\nmech = Mech(Mech.kinds()[0])\n"
    "\ndef my_laplace(value, sensitivity, epsilon, generator):\n"
    "    return value + mech.noise(Mech.scale(sensitivity, epsilon), generator)\n",
]


@pytest.mark.parametrize("answer", HONEST_CLASSES)
def test_honest12_ordinary_class_designs_keep_the_getattr_on_self_exemption(answer):
    """Finding 2: a dataclass field, a class constant or an annotation read as ``self.x``,
    ``C(…).m(…)``, ``super().__init__(…)``, ``functools.partial(self.m, …)``, a property
    returning ``getattr(self, …)`` and a staticmethod or classmethod read on the class
    lost the exemption (0/3 on 2.4, and 0/3 on 2.6 for the same lines of 2.4, in the real
    grader). Only methods count, and these reads keep ``self`` an instance. Deterministic."""
    assert environment_use("ex-laplace-textbook", answer, []) is None
    scale = "def my_grid_scale(sensitivity, epsilon):\n    return sensitivity / epsilon\n"
    assert forbidden_use("ex-laplace-grid-scale", scale,
                         [(answer, "your answer to Exercise 2.4")], _setup("laplace")) is None


@pytest.mark.parametrize("route", [
    "class Q(Probe):\n    alias = Probe.read\ng = Q.alias(sys, 'orig_' + 'argv')\n",
    "g = type(Probe()).read(sys, 'orig_' + 'argv')\n",
    "g = super(Probe, Probe()).read.__func__(sys, 'orig_' + 'argv')\n",
    "g = Probe().read\n",
    "g = Probe.read\n",
])
def test_honest12_other_reads_of_a_method_still_unseal_its_class(route):
    """The review-11 routes stay refused (the test above this one's); so do a method read
    on anything but ``self``, a name bound only to an instance, a fresh instance or
    ``super()``, and a method read as a value. Deterministic."""
    assert environment_use("ex-laplace-textbook", PROBE + route + LAPLACE_TAIL, []) is not None


@pytest.mark.parametrize("probe", [
    # the class body hands the method out under a field's name
    PROBE + "    alias = read\n\ng = Probe.alias(sys, 'orig_' + 'argv')\n",
    PROBE + "    table = {'r': read}\n\ng = Probe.table['r'](sys, 'orig_' + 'argv')\n",
    PROBE + "    def other(self, f=read):\n        return f\n\n"
    "g = Probe().other()(sys, 'orig_' + 'argv')\n",
    # a property's getter reached on the class
    "import sys\nclass Probe:\n    @property\n    def read(self):\n"
    "        return getattr(self, 'orig_' + 'argv')\n\ng = Probe.read.fget(sys)\n",
    # a staticmethod or a decorator of the student's is no method: no exemption
    "import sys\nclass Probe:\n    @staticmethod\n    def read(self, name):\n"
    "        return getattr(self, name)\n\ng = Probe.read(sys, 'orig_' + 'argv')\n",
    "import sys\nproperty = staticmethod\nclass Probe:\n    @property\n    def read(self, name):\n"
    "        return getattr(self, name)\n\ng = Probe.read(sys, 'orig_' + 'argv')\n",
    "import sys\nclass Probe:\n    def read(self, name):\n        return getattr(self, name)\n\n"
    "    @staticmethod\n    def read(self, name):\n        return getattr(self, name)\n\n"
    "g = Probe.read(sys, 'orig_' + 'argv')\n",
])
def test_honest12_a_method_handed_out_by_the_class_body_loses_the_exemption(probe):
    """Now that fields do not count as members, a field that holds a method (the class
    body reading the method's name) unseals the class, and a property's getter, a
    staticmethod or a method under a decorator of the student's is not exempt. Each would
    call ``getattr(sys, "orig_argv")``. Deterministic."""
    assert environment_use("ex-laplace-textbook", probe + LAPLACE_TAIL, []) is not None
    assert forbidden_use("ex-svt-above-threshold", probe + "def my(q): return q\n", [],
                         _setup("sparse_vector")) is not None


def test_honest12_the_feedback_names_the_line_that_unsealed_the_class():
    """Finding 2: the refusal said only "getattr with the name computed at run time"; it
    now names the line that reaches a method otherwise than on an instance, and suggests
    a dict of functions. Deterministic."""
    answer = MECH + "mech = Mech('laplace')\nmy_noise = Mech.noise\n" + \
        MECH_USE.format(noise="mech.noise")
    why = environment_use("ex-laplace-textbook", answer, [])
    assert why is not None and "line 11, Mech.noise reaches one otherwise" in why, why
    assert "dict of functions" in why and "NOISES = {" in why, why
    why = forbidden_use("ex-laplace-grid-scale", "def s(d, e):\n    return d / e\n",
                        [(answer, "your answer to Exercise 2.4")], _setup("laplace"))
    assert why is not None and "in your answer to Exercise 2.4, line 11, Mech.noise" in why


@pytest.mark.parametrize("help_line", ["my_laplace?", "my_laplace??", "?my_laplace",
                                       "??np.random.laplace", "np.*lap*?"])
def test_honest12_an_ipython_help_line_is_dropped_like_a_magic(help_line):
    """Honest review 12, finding 6: ``my_laplace?`` in an answer cell is IPython syntax, not
    Python; the worker compiled it as it was, so the whole cell failed and the function was
    never defined, and the static reading skipped the cell as unparsable (a device beside
    it went unread). Both drop it like a magic. Deterministic."""
    from dpkit.course.magics import drop_magics

    cell = TEXTBOOK + help_line + "\n"
    namespace: dict = {}
    exec(compile(drop_magics(cell), "<cell>", "exec"), namespace)
    assert callable(namespace["my_laplace"])
    assert drop_magics("x = '''why?\n'''\ny = a ? b\n") == "x = '''why?\n'''\ny = a ? b"
    assert environment_use("ex-laplace-textbook", cell, []) is None
    device = cell + "import sys\nS = sys.argv\n"
    assert environment_use("ex-laplace-textbook", device, []) is not None
    assert environment_use("ex-laplace-textbook", TEXTBOOK, [device]) is not None


@pytest.mark.parametrize("device", [
    "import numpy as np\nlib = np.ctypeslib\n",
    "from numpy.ctypeslib import as_array\n",
    "import numpy.ctypeslib as c\n",
    "import _ctypes\n",
    "import sys\nS = hasattr(sys, 'ps1')\n", "import sys\nS = sys.ps2\n",
    "import asyncio\ntry:\n    asyncio.get_running_loop()\n    S = 1\nexcept RuntimeError:\n"
    "    S = 0\n",
    "import threading\nS = threading.get_native_id()\n",
    "import threading\nS = threading.main_thread().native_id\n",
    "import sys\nS = sys.excepthook\n",
    "import sys\nS = sys.breakpointhook\n",
    "import threading\nS = threading.excepthook\n",
])
def test_adv12_more_signals_of_the_sandbox_are_refused(device):
    """Adversarial review 12, F3: NumPy's ``ctypeslib`` (a foreign-function interface,
    like the refused ``ctypes``) and ``_ctypes``; the interactive prompts ``sys.ps1`` and
    ``sys.ps2``, a running event loop, the threads' native ids and the exception and
    breakpoint hooks a kernel sets, each of which can tell the sandbox from a kernel; no
    honest answer to these exercises needs them (the model answers stay graded: the tests
    of the model answers). Deterministic."""
    why = environment_use("ex-laplace-textbook", TEXTBOOK + device, [])
    assert why is not None and "judged by what your function returns" in why, device
    assert environment_use("ex-laplace-textbook", TEXTBOOK, [device]) is not None


@pytest.mark.parametrize("device", [
    "import os\nS = 'etc' not in os.listdir('/')\n",
    "import os\nS = [e.name for e in os.scandir('/')]\n",
    "from pathlib import Path\nS = [p.name for p in Path('/').iterdir()]\n",
    "import os\nS = next(os.walk('/'))[1]\n",
    "import glob\nS = glob.glob('/*')\n",
    "import os\nv = os.statvfs('/tmp')\nS = v.f_blocks * v.f_frsize == 2 ** 26\n",
    "import os\nS = os.fstatvfs(0)\n",
    "import numpy as np\nS = np.random.default_rng().bit_generator.seed_seq\n",
    "import os\nfd = os.open('/usr/lib/x', os.O_RDONLY)\nS = os.pread(fd, 1, 4096)\n",
    "import os\nos.posix_fadvise(0, 0, 0, os.POSIX_FADV_RANDOM)\n",
    "import mmap\nS = mmap.PAGESIZE\n",
])
def test_adv13_the_sandbox_s_file_system_and_seeding_are_refused(device):
    """Adversarial review 13, F3: the sandbox's root has no ``/etc`` and its ``/tmp`` is a
    64 MiB file system, which listing a folder or a file system's size shows; a lent
    generator's seed sequence differs from a notebook's; F2: the page cache one sandbox
    leaves, timed by the next through low-level reads. No honest answer to these exercises
    lists folders, reads a seed sequence or a file's pages. Deterministic."""
    why = environment_use("ex-laplace-textbook", TEXTBOOK + device, [])
    assert why is not None and "judged by what your function returns" in why, device
    assert environment_use("ex-laplace-textbook", TEXTBOOK, [device]) is not None


#: Honest review 12, finding 3: natural ways to show a check, in the answer or a cell above.
VERDICT = f"verdict = {CHECK}\n"
HONEST12_SHOWN_CHECKS = [
    VERDICT + "if not verdict.passed:\n    print(verdict.message)\nelse:\n"
    "    print('check passed')\n",
    VERDICT + "if verdict.passed:\n    print('ok')\nelif verdict.details:\n"
    "    print(verdict.details)\nelse:\n    pass\n",
    f"if not {CHECK}.passed:\n    print('the check failed')\n",
    VERDICT + "print('OK' if verdict.passed else verdict.message)\n",
    f"print('OK' if {CHECK}.passed else 'failed')\n",
    f"if __name__ == '__main__':\n    print({CHECK})\n",
    f"if __name__ == '__main__':\n    {VERDICT}    print(verdict)\n",
    f"try:\n    print({CHECK})\nexcept Exception as error:\n    print('check failed:', error)\n",
    f"from dpkit.timing import unpadded\nwith unpadded():\n    print({CHECK})\n",
    "for f in [my_laplace, my_laplace]:\n"
    "    print(dpkit.check.check_laplace_mechanism(f))\n",
    f"import sys\nprint({CHECK})\nsys.stdout.flush()\n",
]
#: Forms in which the verdict would steer code that runs afterwards, or catch the output.
HONEST12_STEERING = [
    VERDICT + "if not verdict.passed:\n    NOISE = False\n",
    VERDICT + "if verdict.passed:\n    print('ok')\nelse:\n    NOISE = False\n",
    VERDICT + "if verdict.passed:\n    print(setup())\n",
    VERDICT + "if verdict.passed:\n    print(my_laplace)\n",
    f"if {CHECK}.passed:\n    pass\nelse:\n    raise SystemExit\n",
    VERDICT + "x = 1 if verdict.passed else 0\n",
    VERDICT + "print(f() if verdict.passed else 0)\n",
    f"if __name__ == '__main__':\n    S = {CHECK}.passed\n",
    f"try:\n    print({CHECK})\nexcept BaseException:\n    NOISE = False\n",
    f"try:\n    print({CHECK})\nexcept Exception:\n    pass\nelse:\n    NOISE = True\n",
    f"with open('x') as h:\n    print({CHECK})\n",
    f"from dpkit.timing import unpadded\nwith unpadded() as u:\n    S = {CHECK}\n",
    f"for f in [my_laplace]:\n    print({CHECK})\nelse:\n    pass\n",
    f"while True:\n    print({CHECK})\n    break\n",
    f"import sys\nprint({CHECK})\nsys.stdout.write('')\n",
    f"import sys\nprint({CHECK})\nsys.stdout.flush\n",
    f"import sys\nprint({CHECK})\nsys.stdout = None\n",
]


@pytest.mark.parametrize("cell", HONEST12_SHOWN_CHECKS)
def test_honest12_a_check_shown_by_a_test_or_in_a_block_is_graded(cell):
    """Finding 3: ``if not v.passed: print(v.message)``, ``print("OK" if v.passed else
    …)``, a check inside ``if __name__ == "__main__":``, a ``try:`` body, ``with
    unpadded():`` or a ``for`` loop over functions, and ``sys.stdout.flush()`` beside a
    shown check were refused, in an earlier deterministic answer too (0/3 on 2.4 in the
    real grader). Nothing there lets the verdict steer code that runs afterwards: the
    branches only show. Deterministic."""
    assert environment_use("ex-laplace-textbook", TEXTBOOK + cell, []) is None
    assert environment_use("ex-laplace-textbook", TEXTBOOK,
                           [(TEXTBOOK + cell, "your answer to Exercise 2.1")]) is None


@pytest.mark.parametrize("cell", HONEST12_STEERING)
def test_honest12_a_verdict_that_steers_later_code_stays_refused(cell):
    """The forms accepted above do not open a device: a branch that binds, raises or calls
    anything (a print of the student's object runs its ``__str__``), a conditional value
    bound to a name, a ``try`` whose handler or ``else`` does more than show, another
    block (``with open(…)``, ``with unpadded() as u``, a loop with ``else``, ``while``),
    and ``stdout`` used otherwise than flushed. Deterministic."""
    why = environment_use("ex-laplace-textbook", TEXTBOOK + cell, [])
    assert why is not None and "judged by what your function returns" in why, cell


#: Honest review 13, F1 and F2: cells Jupyter runs, which the grader's magic stripping
#: broke (a continuation line starting with ``%`` or ``!=`` blanked; an indented or assigned
#: magic), and what each must leave defined.
HONEST13_CELLS = [
    ('s = ("p: %.4f"\n     % 0.5)\nok = (s\n      != "")\n', {"s": "p: 0.5000", "ok": True}),
    ("total = 0\nfor e in [0.5, 1.0]:\n    %time total += e\n", {"total": 1.5}),
    ("t = %timeit -o -n 10 abs(-2)\n", {}),
    ("%time x = abs(-3)\ny = %time abs(-4)\n", {"x": 3, "y": 4}),
    ("files = !ls\nif True:\n    !echo hi\nelse:\n    %matplotlib inline\n",
     {"files": []}),
    ("%%timeit -n 3 a = 1\nb = a + 1\n%time c = b * 2\n", {"b": 2, "c": 4}),
    ("%%capture cap --no-stderr\nd = 5\n", {"d": 5}),
    ("z = (1 +\n     2)  # a comment with ! and %\n", {"z": 3}),
]


@pytest.mark.parametrize(("cell", "expected"), HONEST13_CELLS)
def test_honest13_cells_jupyter_runs_run_the_same_way_in_the_grader(cell, expected):
    """Honest review 13, F1 and F2: ``drop_magics`` blanked every line starting with ``%``
    or ``!``, continuation lines too (``% x`` inside brackets, black's ``!= y``), left an
    indented ``%time`` loop body empty, kept ``t = %timeit -o …`` as it was, and dropped
    ``%time x = f()``'s statement. Magics are now found on IPython's logical lines: the
    cell's Python runs, keeps its line count, and binds what Jupyter binds (``%time``'s
    statement runs once; ``x = !ls`` binds an empty list; what ``t = %timeit -o`` and
    ``%%capture cap`` bind: the next test). Deterministic."""
    from dpkit.course.magics import drop_magics

    python = drop_magics(cell)
    assert len(python.split("\n")) == len(cell.splitlines()), python
    namespace: dict = {}
    exec(compile(python, "<cell>", "exec"), namespace)
    assert {name: namespace[name] for name in expected} == expected


@pytest.mark.parametrize("cell", [
    "t = %timeit -o my_release(1.0)\nprint(t.average, t.best, t.worst, t.stdev, t.loops)\n",
    "t = %timeit -o -n 100 -r 7 out = my_release(1.0)\nassert t.all_runs and t.timings\n",
    "%%capture cap\nx = my_release(2.0)\nprint(x)\n",
])
def test_honest15_timeit_and_capture_results_have_ipythons_attributes(cell):
    """Honest review 15, F1: ``t = %timeit -o f()`` bound None, so a correct answer that
    printed ``t.average`` failed in the grader and ran in Jupyter. It now binds an object
    with the attributes of IPython's ``TimeitResult`` (from the one run), and ``%%capture
    cap`` one with those of ``CapturedIO``; the statement runs once, the line count is kept,
    and the static reading accepts the line in a randomized answer. Deterministic."""
    from dpkit.course.magics import drop_magics

    calls = []
    answer = "def my_release(value):\n    return value + 1.0\n"
    python = drop_magics(cell)
    assert len(python.split("\n")) == len(cell.splitlines()), python
    namespace = {"my_release": lambda value: calls.append(value) or value + 1.0}
    exec(compile(python, "<cell>", "exec"), namespace)
    assert len(calls) == 1
    if "cap" in namespace:
        assert namespace["cap"].stdout == "" and namespace["cap"].outputs == []
        namespace["cap"].show()
    else:
        assert namespace["t"].average >= 0 and namespace["t"].loops == 1
    assert environment_use("ex-laplace-textbook", answer + cell, []) is None
    assert forbidden_use("ex-laplace-interval", answer + cell, []) is None
    # ... and in a cell of the student's above the answer (round 16: `%%capture out` there
    # cost 7.2 and 7.3 their points once classes made at run time were refused)
    assert environment_use("ex-svt-above-threshold", answer, [cell]) is None
    assert forbidden_use("ex-svt-above-threshold", answer, [cell]) is None


@pytest.mark.parametrize("cell", [
    "%run other.py\n", "!rm -rf ~\n", "x = !cat /etc/passwd\n", "%%bash\nrm -rf ~\n",
    "%%script python3\nimport os\nos.remove('x')\n", "%%html\n<script>x()</script>\n",
    "%%writefile helper.py\nimport os\nos.remove('x')\n", "%load_ext autoreload\n",
    "for i in [0, 1]:\n    %run other.py\n    !rm -rf ~\n",
])
def test_honest13_a_magic_runs_nothing_but_its_allowed_statement(cell):
    """Honest review 13: magics are never run, only ``%time``/``%timeit`` statements and
    the Python bodies of ``%%time``, ``%%timeit`` and ``%%capture`` are: a line magic, a
    shell escape and a non-Python cell magic's body leave only ``pass``, ``None``, ``[]``
    or empty lines (``%%writefile``'s body is written by the worker, never run in the
    cell). Deterministic."""
    from dpkit.course.magics import drop_magics

    tree = ast.parse(drop_magics(cell))
    calls = [node for node in ast.walk(tree) if isinstance(node, (ast.Call, ast.Import))]
    assert calls == [], ast.unparse(tree)


def test_honest13_writefile_cells_are_parsed():
    """Honest review 13, F6: ``%%writefile [-a] name`` gives its file's name, whether it
    appends and its body (``~`` expanded, quotes removed); other cells give None.
    Deterministic."""
    from dpkit.course.magics import written_file

    assert written_file("\n%%writefile helper.py\nX = 1\n") == ("helper.py", False, "X = 1\n")
    assert written_file("%%writefile -a 'my file.txt'\nrow\n") == ("my file.txt", True, "row\n")
    assert written_file("%%bash\necho\n") is None
    assert written_file("x = 1\n%%writefile a.py\n") is None


def test_honest13_a_module_written_by_writefile_is_read_as_the_student_s_code():
    """Honest review 13, F6: a module the student writes with ``%%writefile helper.py`` is
    importable in the sandbox, so the static reading reads its code as the student's, in
    that cell, with the cell's line numbers: a forbidden function imported there, also by
    the name the set-up cell binds (``helper.laplace_accuracy`` reaches it), and an
    environment read there are refused; an honest helper module passes. Deterministic."""
    place = "the cell you added above Exercise 2.1"
    writes = ("%%writefile helper.py\nimport math\n"
              "from dpkit.laplace import laplace_accuracy\n")
    why = forbidden_use("ex-laplace-interval",
                        "import helper\ndef half(e, b):\n"
                        "    return helper.laplace_accuracy(e, b)\n",
                        [(writes, place)], _setup("laplace"))
    assert why is not None and f"{place} (the file helper.py it writes), line 3" in why, why
    honest = "%%writefile helper.py\nimport math\ndef half(e, b):\n    return math.log(1 / b) / e\n"
    assert forbidden_use("ex-laplace-interval", "import helper\nhalf = helper.half\n",
                         [(honest, place)], _setup("laplace")) is None
    device = "%%writefile -a helper.py\nimport os\nGRADED = 'HOME' in os.environ\n"
    why = environment_use("ex-laplace-textbook", "import helper\n" + TEXTBOOK, [(device, place)])
    assert why is not None and "line 3, environ" in why, why
    assert environment_use("ex-laplace-textbook", TEXTBOOK,
                           [("%%bash\nimport os\nos.environ\n", place)]) is None


@pytest.mark.parametrize("test", ["RUN_CHECKS", "True", '__name__ == "__main__"',
                                  "RUN_CHECKS and 1 < 2"])
def test_honest13_a_check_shown_under_a_plain_if_is_accepted(test):
    """Honest review 13, F5: ``if RUN_CHECKS: print(dpkit.check.check_…(f))`` was refused
    while ``if __name__ == "__main__":`` was accepted; an ``if`` whose test involves no
    check and no verdict cannot steer later code through the verdict, so a check shown in
    its branches is accepted; a branch on a verdict (or on a check) that does more than
    show stays refused. Deterministic."""
    cell = (f"RUN_CHECKS = True\nif {test}:\n"
            "    verdict = dpkit.check.check_laplace_mechanism(my_laplace)\n"
            "    print(verdict)\nelse:\n"
            "    print(dpkit.check.check_laplace_mechanism(my_laplace))\n")
    assert environment_use("ex-laplace-textbook", TEXTBOOK + cell, []) is None
    for steered in ["if verdict.passed:\n    X = 1\n", "if not verdict:\n    exit()\n",
                    "if dpkit.check.check_laplace_mechanism(my_laplace).passed:\n"
                    "    print(1)\n    X = 2\n"]:
        why = environment_use("ex-laplace-textbook", TEXTBOOK + cell + steered, [])
        assert why is not None and "other than to be shown" in why, steered


WRITTEN_AT_RUN_TIME = [
    "open('helper_m.py', 'w').write('from dpkit.svt import above' + '_threshold as f')\n",
    "from pathlib import Path\nPath('helper_m.py').write_text('import os')\n",
]


@pytest.mark.parametrize("label", ["ex-svt-above-threshold", "ex-laplace-textbook"])
@pytest.mark.parametrize("writer", WRITTEN_AT_RUN_TIME)
def test_a_module_the_notebook_writes_at_run_time_is_refused(label, writer):
    """A module written with ``open`` (or any way but ``%%writefile``) and imported hid its
    code from the reading: a forbidden function reached through it was graded
    (``forbidden_use`` and ``environment_use`` returned None on main). An import of a
    module that is neither installed nor written by ``%%writefile`` is now refused, in the
    answer and in the cells above it; installed packages and ``%%writefile`` files are
    not. Deterministic."""
    answer = ("import helper_m\ndef my(queries, data, threshold, epsilon, rng):\n"
              "    return helper_m.f(queries, data, threshold, epsilon, rng=rng)\n")
    check = forbidden_use if label == "ex-svt-above-threshold" else environment_use
    for code, earlier in [(answer, [writer]), ("def my(q):\n    return q\n",
                                               [writer + "import helper_m\n"])]:
        why = check(label, code, earlier)
        assert why is not None and ("helper_m is neither installed" in why or
                                    "pathlib may not be imported" in why), (code, why)
    fine = ("import numpy as np\nimport math, scipy.stats, mpmath\nimport pandas as pd\n"
            "from fractions import Fraction\nimport matplotlib.pyplot as plt\n"
            "from dpkit.laplace import laplace_mechanism\nimport helper2\n"
            "def my(q):\n    return helper2.g(q)\n")
    assert check(label, fine, ["%%writefile helper2.py\ndef g(x):\n    return x\n"]) is None
    assert check(label, "from . import x\n", []) is not None


_CHECK14 = "dpkit.check.check_laplace_mechanism(my_laplace)"


@pytest.mark.parametrize("cell, shown", [
    (f"import dpkit.check\nverdict = {_CHECK14}\nverdict\n", True),
    (f"import dpkit.check\nfrom pprint import pprint\npprint({_CHECK14})\n", True),
    (f"import dpkit.check, pprint\nv = {_CHECK14}\npprint.pprint(v)\n", True),
    (f"import dpkit.check\nimport pprint\nS = []\npprint.pprint = S.append\n"
     f"pprint.pprint({_CHECK14})\n", False),
    (f"import dpkit.check\ndef pprint(x):\n    return x\npprint({_CHECK14})\n", False),
    (f"import dpkit.check\nverdict = {_CHECK14}\nkept = verdict\n", False),
])
def test_honest14_a_bare_verdict_line_and_pprint_show_a_check(cell, shown):
    """Honest review 14, finding 2: a bare ``verdict`` line (IPython shows it) and
    ``pprint`` of a check, in an earlier deterministic answer, voided the randomized one;
    both only show. ``pprint.pprint`` rebound by the student, or a ``pprint`` of their own,
    could keep the verdict, and stays refused. Deterministic."""
    why = environment_use("ex-laplace-textbook", TEXTBOOK, [cell])
    assert (why is None) == shown, why


#: Adversarial review 14, F2: code given as a string to an API the deny-list allowed.
ADV14_STRING_CODE = [
    "import math\nimport timeit\ntimeit.timeit('import dpkit.laplace, math; "
    "math.hw = dpkit.laplace.laplace_accuracy', number=1)\n",
    "import cProfile\ncProfile.run('import math')\n",
    "import string\nimport dpkit\nf = string.Formatter().get_field('0.laplace.x', [dpkit], {})\n",
    "import yaml\nf = yaml.unsafe_load('!!python/name:dpkit.laplace.x')\n",
    "import importlib_metadata\nf = importlib_metadata.EntryPoint('x', 'dpkit.laplace:x', 'g')\n",
    "import subprocess\nsubprocess.run(['python', '-c', 'print(1)'])\n",
    "import os\nos.system('python -c 1')\n",
    "import random\nf = random._os.system\n",
    "from concurrent.futures import process\nf = process.mp\n",
    "import pandas as pd\nf = pd.eval('1 + 1')\n",
    "import mpmath\nf = mpmath.identify(1.0, ['pi'])\n",
]
#: F1: a file written at run time under an installed name, a %%writefile file overwritten,
#: and %%writefile -a pieces that do not parse alone.
ADV14_FILES = [
    (["open('tabulate.py', 'w').write('from dpkit.laplace import laplace_accuracy as f')\n"],
     "import tabulate\n"),
    (["%%writefile tabulate.py\nX = 1\n"], "import tabulate\n"),
    (["%%writefile helper.py\nX = 1\n", "%%writefile -a helper.py\nf = (\n",
      "%%writefile -a helper.py\nlambda: 0)\nfrom dpkit.laplace import laplace_accuracy as g\n"],
     "import helper\n"),
    (["%%writefile helper.py\nX = 1\n", "%%writefile -a helper.py\nf = (\n"],
     "import helper\n"),
]
ADV14_TAIL = ("def half_width(sensitivity, epsilon, confidence):\n"
              "    return sensitivity / epsilon\n")
JUDGED_TAIL = "\ndef my_laplace(value, sensitivity, epsilon, generator):\n    return value\n"


@pytest.mark.parametrize("code", ADV14_STRING_CODE)
def test_adv14_modules_that_run_code_given_as_data_are_refused(code):
    """Adversarial review 14, F2: ``timeit.timeit("…")``, ``cProfile.run``,
    ``string.Formatter().get_field``, ``yaml.unsafe_load``, an entry point's ``load()``,
    a subprocess, a module reached as an attribute (``random._os``) and the packages'
    string evaluators ran code the reading never read (3/3 for a forbidden function):
    only the modules of ``ALLOWED_MODULES`` may now be used, in the answer and in the
    cells above it, for FORBIDDEN and JUDGED exercises. Deterministic."""
    for earlier, answer in [([], code + ADV14_TAIL), ([code], ADV14_TAIL)]:
        why = forbidden_use("ex-laplace-interval", answer, earlier, _setup("laplace"))
        assert why is not None and "asks you to derive" in why, (answer, why)
    why = environment_use("ex-laplace-textbook", code + JUDGED_TAIL, [])
    assert why is not None and "judged by what your function" in why, why


@pytest.mark.parametrize(("earlier", "answer"), ADV14_FILES)
def test_adv14_modules_the_reading_cannot_read_as_imported_are_refused(earlier, answer):
    """Adversarial review 14, F1: a module written at run time under an installed name, and
    ``%%writefile -a`` pieces that do not parse alone (each was skipped, the file they make
    imports a forbidden function) passed the reading: an installed name that is not allowed
    is refused, and a written file is read by its final text, refused if that does not
    parse. Deterministic."""
    why = forbidden_use("ex-laplace-interval", answer + ADV14_TAIL, earlier, _setup("laplace"))
    assert why is not None and "asks you to derive" in why, why
    if "lambda: 0)" not in "".join(earlier):      # a judged answer may import the function
        why = environment_use("ex-laplace-textbook", answer + JUDGED_TAIL, earlier)
        assert why is not None, why


@pytest.mark.parametrize("code", [
    "import math, cmath, random, statistics, fractions, decimal, numbers, functools\n",
    "import itertools, collections, dataclasses, typing, enum, abc, bisect, heapq, copy\n",
    "import operator, warnings, time, datetime, re, json, threading, queue, sys\n",
    "from concurrent.futures import ThreadPoolExecutor\nfrom __future__ import annotations\n",
    "import numpy as np\nimport scipy.stats, scipy.special, scipy.optimize\nimport pandas as pd\n",
    "import matplotlib.pyplot as plt\nimport mpmath, gmpy2\n",
    "from IPython.display import display, Markdown\nfrom dpkit.timing import unpadded\n",
    "%%writefile helper.py\nimport math\n",
    "%%writefile helper.py\nX = (\n",
])
def test_adv14_honest_imports_are_graded(code):
    """The allow-list keeps what honest students (reviews 12, 13) and the model answers
    import; a %%writefile file written in pieces that parse once joined is read.
    Deterministic."""
    earlier = [code] if code.startswith("%%") else []
    if code.endswith("X = (\n"):
        earlier.append("%%writefile -a helper.py\n1)\n")
    answer = ("import helper\n" if earlier else code.replace("from __future__ import "
              "annotations\n", "")) + ADV14_TAIL
    assert forbidden_use("ex-laplace-interval", answer, earlier, _setup("laplace")) is None
    answer = ("import helper\n" if earlier else code) + JUDGED_TAIL
    assert environment_use("ex-laplace-textbook", answer, earlier) is None


@pytest.mark.parametrize("name, graded", [("helper.py", True), ("./helper.py", True),
                                          ("sub/helper.py", False)])
def test_honest14_a_writefile_module_of_the_working_folder_is_read(name, graded):
    """Honest review 14, finding 4: ``%%writefile ./helper.py`` then ``import helper`` was
    refused as "not installed" (the name was compared as written). A module of the
    working folder, however spelled, is read and imported; a file in another folder is not
    a module ``import helper`` finds (the worker imports neither), so it stays refused.
    Deterministic."""
    answer = ("import helper\ndef my_laplace(value, sensitivity, epsilon, generator):\n"
              "    return value + generator.laplace(0.0, helper.scale(sensitivity, epsilon))\n")
    cell = f"%%writefile {name}\ndef scale(d, e):\n    return d / e\n"
    assert (environment_use("ex-laplace-textbook", answer, [cell]) is None) == graded


SAM_HW = MODEL_HW + ("\nassert math.isclose(half_width(1, 0.5, 0.9), "
                     "laplace_accuracy(1, 0.5, 0.1))\n")
SAM_BITS = ("eta = Eta(1243, 11)\nX, Y = eta.reduced()\nbits = Y * 101 + (3000).bit_length()\n"
            "assert bits == compute_precision(-20, 80.5, 3000, eta)\n")
SAM_AT = MODEL_AT + ("mine = [my_above_threshold(queries, ages, -500, 1.0, rng) "
                     "for _ in range(9)]\n"
                     "ref = [above_threshold(queries, ages, -500, 1.0, rng=rng) "
                     "for _ in range(9)]\n")


@pytest.mark.parametrize(("label", "chapter", "answer", "graded"), [
    ("ex-laplace-interval", "laplace", SAM_HW, "half_width"),
    ("ex-exp-precision", "exponential_base2", SAM_BITS, "bits"),
    ("ex-svt-above-threshold", "sparse_vector", SAM_AT, "my_above_threshold"),
])
def test_honest15_a_self_check_in_the_answer_cell_is_graded(label, chapter, answer, graded):
    """Honest review 15, F2: a correct answer followed, in the answer cell, by a top-level
    comparison with the forbidden function got 0/3; the same line in the next cell passed.
    The statement cannot change the graded name, so it is exempt like an earlier cell's.
    Deterministic."""
    assert forbidden_use(label, answer, [], _setup(chapter), graded) is None


@pytest.mark.parametrize(("label", "chapter", "answer", "graded", "line", "hint"), [
    # the value computed with it, or set after the comparison
    ("ex-exp-precision", "exponential_base2", "x = compute_precision(-20, 80.5, 3000, eta)\n"
     "bits = x\n", "bits", 1, True),
    ("ex-exp-precision", "exponential_base2", "bits = compute_precision(-20, 80.5, 3000, eta)\n",
     "bits", 1, True),
    # in the function: its body, a default, a lambda bound to the graded name
    ("ex-laplace-interval", "laplace", HW + "    return laplace_accuracy(sensitivity, epsilon, "
     "1 - confidence)\n", "half_width", 2, False),
    ("ex-laplace-interval", "laplace", "def half_width(s, e, c, f=laplace_accuracy(1, 1, .1)):"
     "\n    return f\n", "half_width", 1, True),
    ("ex-laplace-interval", "laplace", "half_width = lambda s, e, c: laplace_accuracy(s, e, c)"
     "\n", "half_width", 1, False),
    ("ex-laplace-interval", "laplace", MODEL_HW + "half_width.cache = laplace_accuracy(1, 1, .1)"
     "\n", "half_width", 3, True),
])
def test_honest15_a_use_the_answer_can_reach_is_refused_with_its_line(label, chapter, answer,
                                                                       graded, line, hint):
    """What the exemption leaves refused, with feedback that says the function is
    forbidden here and where it is used (not "not available"), and, for a top-level call,
    where a comparison belongs. Deterministic."""
    why = forbidden_use(label, answer, [], _setup(chapter), graded)
    assert why is not None and "is forbidden in its answer" in why, why
    assert f"in its answer, line {line}," in why, why
    assert ("a comparison with it belongs below the line that sets" in why) == hint, why


def test_honest15_a_package_in_a_subfolder_is_told_what_the_grader_reads():
    """Honest review 15, F6: after ``%%writefile pkg/__init__.py`` the refusal advised
    "write the file with %%writefile, which is read". It now says what is read: one file
    in the notebook's folder, imported by its name. Deterministic."""
    earlier = [("!mkdir -p pkg\n", "cell 1 of the 2 you added above Exercise 2.4"),
               ("%%writefile pkg/__init__.py\ndef laplace_noise(b, generator):\n"
                "    return generator.laplace(0.0, b)\n",
                "cell 2 of the 2 you added above Exercise 2.4")]
    answer = ("from pkg import laplace_noise\n"
              "def my_laplace(value, sensitivity, epsilon, generator):\n"
              "    return value + laplace_noise(sensitivity / epsilon, generator)\n")
    why = environment_use("ex-laplace-textbook", answer, earlier)
    assert why is not None and "which is read" not in why, why
    assert "one file in the notebook's folder written by %%writefile" in why, why
    assert "(%%writefile helper.py, then import helper)" in why, why
    assert "a package, or a file in a subfolder, is not read" in why, why
