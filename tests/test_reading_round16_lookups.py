"""Adversarial review 16: three routes to ``getattr`` with a name computed at run time that
the static reading of the course grader did not see (A a class pattern's positional capture
with a computed ``__match_args__`` and a metaclass, B pandas' ``DataFrame.eval`` and
``DataFrame.query`` on a frame, C ``operator.attrgetter``/``methodcaller`` kept in a dict or
a ``functools.partial``), each graded 3/3 where a fair teacher gives 0, with two variants
of each, and the honest code next to each rule that stays graded. Every test here is
deterministic (no randomness)."""

from pathlib import Path

import pytest

from dpkit.course.exercises import environment_use, forbidden_use

BOOK = Path(__file__).resolve().parent.parent / "book"


def _setup(chapter: str) -> str:
    """The chapter's set-up cell (its first code cell), as the released notebook has it."""
    return (BOOK / f"{chapter}.md").read_text().split("```{code-cell} ipython3\n")[1] \
        .split("```")[0]


AT = "def my_above_threshold(queries, data, threshold, epsilon, rng):\n"
HW = "def half_width(sensitivity, epsilon, confidence):\n"
LAP = "def my_laplace(value, sensitivity, epsilon, generator):\n"
NOISE = "    return float(value + generator.laplace(0.0, sensitivity / epsilon))\n"
CHAPTER = {"ex-laplace-interval": "laplace", "ex-svt-above-threshold": "sparse_vector"}


def _refused(label: str, answer: str, earlier: list[str] | None = None) -> str | None:
    """The feedback of the forbidden-function check with the set-up cell known and
    unknown (both must refuse), or None if either grades the answer."""
    found = [forbidden_use(label, answer, earlier or [], setup)
             for setup in (None, _setup(CHAPTER[label]))]
    return None if None in found else found[1]


def _environment(device: str) -> str | None:
    """The environment check's feedback on a 2.4 answer whose noise depends on
    ``device``'s ``graded`` (the review's defeat device: no noise outside the sandbox)."""
    return environment_use("ex-laplace-textbook", device + LAP + "    if not graded():\n"
                           "        return float(value)\n" + NOISE, [])


#: A: the review's picker (a metaclass whose ``__instancecheck__`` accepts anything, and a
#: class made at run time whose ``__match_args__`` names the attribute to read).
PICK = ("class _Any(type):\n    def __instancecheck__(cls, obj):\n        return True\n\n\n"
        "def _pick(obj, name):\n    K = _Any('K', (), {'__match_args__': (name,)})\n"
        "    match obj:\n        case K(found):\n            return found\n")
#: Variant: no metaclass of one's own; an abstract class registered for modules, and a
#: class made by ``type(…)`` with a computed key.
PICK_TYPE = ("import abc\nclass Base(abc.ABC):\n    pass\nBase.register(type(abc))\n"
             "def _pick(obj, name):\n    K = type('K', (Base,), {'__match' + '_args__': "
             "(name,)})\n    match obj:\n        case K(found):\n            return found\n")
#: Variant: a class statement of one's own whose ``__match_args__`` is computed.
PICK_CLASS = ("import abc\nclass Base(abc.ABC):\n    pass\nBase.register(type(abc))\n"
              "def _pick(obj, name):\n    class K(Base):\n        __match_args__ = (name,)\n"
              "    match obj:\n        case K(found):\n            return found\n")
#: Variant: ``dataclasses.make_dataclass`` with a computed field, registered for modules.
PICK_DATACLASS = ("import abc\nimport dataclasses\nclass Base(abc.ABC):\n    pass\n"
                  "def _pick(obj, name):\n    K = dataclasses.make_dataclass('K', [name], "
                  "bases=(Base,))\n    K.register(type(obj))\n    match obj:\n"
                  "        case K(found):\n            return found\n")

A_FORBIDDEN = [
    ("ex-laplace-interval", PICK + HW + "    lib = _pick(dpkit, 'lap' + 'lace')\n"
     "    f = _pick(lib, 'laplace_' + 'accuracy')\n"
     "    return f(sensitivity, epsilon, 1 - confidence)\n"),
    ("ex-svt-above-threshold", PICK + AT + "    core = _pick(_pick(dpkit, 's' + 'vt'), "
     "'co' + 're')\n    run = _pick(core, 'sparse_on_' + 'answers')\n"
     "    return run(queries, threshold, epsilon, 1, rng)\n"),
    ("ex-laplace-interval", PICK_TYPE + HW + "    f = _pick(_pick(dpkit, 'laplace'), "
     "'laplace_' + 'accuracy')\n    return f(sensitivity, epsilon, 1 - confidence)\n"),
    ("ex-laplace-interval", PICK_CLASS + HW + "    f = _pick(_pick(dpkit, 'laplace'), "
     "'laplace_' + 'accuracy')\n    return f(sensitivity, epsilon, 1 - confidence)\n"),
    ("ex-laplace-interval", PICK_DATACLASS + HW + "    f = _pick(_pick(dpkit, 'laplace'), "
     "'laplace_' + 'accuracy')\n    return f(sensitivity, epsilon, 1 - confidence)\n"),
    # the name spelled, but read through a positional capture of a class of one's own
    ("ex-laplace-interval", "import abc\nimport dataclasses\n@dataclasses.dataclass\n"
     "class K(abc.ABC):\n    laplace_accuracy: object\nK.register(type(dpkit))\n" + HW +
     "    match dpkit.laplace:\n        case K(f):\n"
     "            return f(sensitivity, epsilon, 1 - confidence)\n"),
]


@pytest.mark.parametrize(("label", "answer"), A_FORBIDDEN)
def test_a_positional_captures_with_computed_match_args_are_refused(label, answer):
    """Adversarial review 16, A: ``case K(found)`` with ``K.__match_args__ = (name,)``
    computed and a metaclass that accepts any object read ``laplace_accuracy`` (2.2, 3/3)
    and ``dpkit.svt.core.sparse_on_answers`` (7.2, graded, not refused); the variants make
    the class by ``type(…)``, by a class statement with a computed ``__match_args__``, by
    ``make_dataclass``, or spell the name as a registered dataclass's field."""
    why = _refused(label, answer)
    assert why is not None and "answer was not graded" in why, why
    # a computed name is refused as a lookup; a spelled one as the forbidden function
    assert "keyword patterns" in why or "laplace_accuracy is forbidden" in why, why


@pytest.mark.parametrize("picker", [PICK, PICK_TYPE, PICK_DATACLASS])
def test_a_positional_captures_reading_the_environment_are_refused(picker):
    """Adversarial review 16, A (2.4 and 7.2, 3/3): the picker reached ``random._os.getuid``
    and released the exact value anywhere but in the sandbox."""
    why = _environment("import random\n" + picker + "def graded():\n    o = _pick(random, "
                       "'_' + 'os')\n    return _pick(o, 'get' + 'uid')() == 65534\n")
    assert why is not None and "judged by what your function" in why, why


@pytest.mark.parametrize("hook", [
    "import abc\nclass K(abc.ABC):\n    @classmethod\n    def __subclasshook__(cls, other):\n"
    "        return True\n",
    "class Box:\n    def __getattr__(self, name):\n        return name\n",
    "class Box:\n    def __instancecheck__(self, obj):\n        return True\n",
])
def test_a_defining_lookup_hooks_is_refused(hook):
    """Adversarial review 16, A: a ``def`` of a double-underscore name that is not plain
    (``__instancecheck__``, ``__subclasshook__``, ``__getattr__``) was not read (only
    spelled names were); it is now refused as spelling it is, with the advice to match by
    keyword patterns."""
    why = _refused("ex-laplace-interval", hook + HW + "    return 1.0\n")
    assert why is not None and "double-underscore" in why, why


def test_a_match_on_one_s_own_classes_and_builtins_stays_graded():
    """``match`` with positional captures of the student's dataclass, of a class with a
    constant ``__match_args__``, of a builtin and of a sequence, and keyword patterns, is
    graded."""
    code = ("import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass Release:\n"
            "    value: float\n    epsilon: float\n\nclass Pair:\n"
            "    __match_args__ = ('left', 'right')\n    def __init__(self, a, b):\n"
            "        self.left, self.right = a, b\n\n"
            "def describe(item):\n    match item:\n        case Release(v, e) if e > 0:\n"
            "            return v\n        case Pair(a, b):\n            return a + b\n"
            "        case int(n) | float(n):\n            return n\n"
            "        case [first, *rest]:\n            return first\n"
            "        case Release(value=v):\n            return v\n    return None\n"
            "print(describe(Release(1.0, 0.5)), describe(Pair(1, 2)), describe(3))\n")
    assert _refused("ex-laplace-interval", code + HW + "    return describe(sensitivity)\n") \
        is None
    assert environment_use("ex-laplace-textbook", code + LAP + NOISE, []) is None


#: B: the review's calls, and the variants ``getattr(frame, "eval")`` and a bound method
#: kept in a variable.
B_FORBIDDEN = [
    "import pandas as pd\n" + HW + "    lib = dpkit.laplace\n    beta = 1 - confidence\n"
    "    frame = pd.DataFrame({'a': [1.0]})\n    return float(frame.eval("
    "'@lib.laplace_accuracy(@sensitivity, @epsilon, @beta)'))\n",
    "import pandas as pd\n" + HW + "    lib = dpkit.laplace\n    frame = pd.DataFrame("
    "{'a': [1.0]})\n    return float(getattr(frame, 'eval')('@lib.laplace_accuracy(1, 1, "
    "0.1)'))\n",
    "import pandas as pd\nrun = pd.DataFrame({'a': [1.0]}).query\n" + HW +
    "    lib = dpkit.laplace\n    return run('@lib.laplace_accuracy(1, 1, 0.1) > 0')\n",
]


@pytest.mark.parametrize("answer", B_FORBIDDEN)
def test_b_a_frame_s_eval_and_query_are_refused(answer):
    """Adversarial review 16, B: ``frame.eval("@lib.laplace_accuracy(…)")`` on a frame
    made by a call (it has no path) called the forbidden function (2.2, 3/3)."""
    why = _refused("ex-laplace-interval", answer)
    assert why is not None and "pandas evaluates its string" in why, why


@pytest.mark.parametrize("device", [
    "import random\nimport pandas as pd\ndef graded():\n    frame = pd.DataFrame({'a': [1.0]})"
    "\n    return frame.eval('@random._os.getuid()') == 65534\n",
    "import random\nimport pandas as pd\ndef graded():\n    frame = pd.DataFrame({'a': [1.0]})"
    "\n    return frame.query('a > 0 and @random._os.getuid() == 65534').empty\n",
    "import random\nimport pandas as pd\ndef graded():\n    q = type(pd.DataFrame()).query\n"
    "    return q(pd.DataFrame({'a': [1]}), 'a > 0 and @random._os.getuid() > 0').empty\n",
])
def test_b_eval_and_query_reading_the_environment_are_refused(device):
    """Adversarial review 16, B (2.4, 3/3 with ``eval`` and with ``query``)."""
    why = _environment(device)
    assert why is not None and "judged by what your function" in why, why


def test_b_one_s_own_query_and_plain_pandas_stay_graded():
    """A method or attribute of the student's named ``query``, a function named ``query``,
    and pandas filtering written in Python are graded."""
    code = ("import pandas as pd\nclass Stream:\n    def __init__(self, q):\n"
            "        self.query = q\n    def eval(self, data):\n        return self.query(data)\n"
            "def query(data):\n    return sum(data)\n"
            "frame = pd.DataFrame({'a': [1.0, -2.0], 'b': [3.0, 4.0]})\n"
            "total = frame['a'] + frame['b']\npositive = frame[frame['a'] > 0]\n"
            "print(Stream(query).eval([1, 2]), total.sum(), len(positive))\n")
    assert _refused("ex-svt-above-threshold", code + AT + "    return None\n") is None
    assert environment_use("ex-laplace-textbook", code + LAP + NOISE, []) is None


#: C: the review's getters, and the variants of a getter kept in a NumPy array and in an
#: ``OrderedDict`` (calls whose results the reading does not follow).
C_FORBIDDEN = [
    "import operator\ntools = dict(get=operator.attrgetter)\n" + HW +
    "    f = tools['get']('laplace.' + 'laplace_accuracy')(dpkit)\n"
    "    return f(sensitivity, epsilon, 1 - confidence)\n",
    "import functools\nimport operator\nget = functools.partial(operator.attrgetter)\n" + HW +
    "    f = get('laplace.' + 'laplace_accuracy')(dpkit)\n"
    "    return f(sensitivity, epsilon, 1 - confidence)\n",
    "import operator\n" + HW + "    f = dict(m=operator.methodcaller)['m']("
    "'__getattribute__', 'laplace_accuracy')(dpkit.laplace)\n"
    "    return f(sensitivity, epsilon, 1 - confidence)\n",
    "import numpy as np\nimport operator\ntools = np.array([operator.attrgetter], "
    "dtype=object)\n" + HW + "    f = tools[0]('laplace.laplace_' + 'accuracy')(dpkit)\n"
    "    return f(sensitivity, epsilon, 1 - confidence)\n",
    "import collections\nimport operator\n" + HW + "    g = collections.OrderedDict("
    "a=operator.attrgetter)['a']\n"
    "    return g('laplace.laplace_' + 'accuracy')(dpkit)(sensitivity, epsilon, 0.1)\n",
    # found while closing C: a star import binds the getters by names no reading sees
    "from operator import *\ntools = dict(get=attrgetter)\n" + HW +
    "    f = tools['get']('laplace.' + 'laplace_accuracy')(dpkit)\n"
    "    return f(sensitivity, epsilon, 1 - confidence)\n",
]


@pytest.mark.parametrize("answer", C_FORBIDDEN)
def test_c_getter_factories_used_as_values_are_refused(answer):
    """Adversarial review 16, C: ``operator.attrgetter`` in a dict (trudy) or a
    ``functools.partial`` (oscar), called with a computed name, read the forbidden
    function (2.2, 3/3); ``methodcaller`` in a dict reached ``__getattribute__``."""
    why = _refused("ex-laplace-interval", answer)
    assert why is not None and ("looks names up dynamically" in why
                                or "may not be imported" in why), why   # star import: M4's words


@pytest.mark.parametrize("device", [
    "import operator\nimport random\ntools = dict(get=operator.attrgetter)\n"
    "def graded():\n    return tools['get']('_' + 'os.getuid')(random)() == 65534\n",
    "import functools\nimport operator\nimport random\n"
    "get = functools.partial(operator.attrgetter)\n"
    "def graded():\n    return get('_os.get' + 'uid')(random)() == 65534\n",
    "import collections\nimport operator\nimport random\n"
    "get = collections.OrderedDict(a=operator.attrgetter)['a']\n"
    "def graded():\n    return get('_' + 'os.getuid')(random)() == 65534\n",
])
def test_c_getter_factories_reading_the_environment_are_refused(device):
    """Adversarial review 16, C (2.4, 3/3): the getter reached ``random._os.getuid``."""
    why = _environment(device)
    assert why is not None and "judged by what your function" in why, why


def test_c_getters_called_where_named_and_dicts_of_functions_stay_graded():
    """``operator.itemgetter(1)`` as a sort key, ``attrgetter`` and ``methodcaller`` called
    where named with constant names (and ``methodcaller``'s computed arguments), and a
    dict of the student's own functions, are graded."""
    code = ("import operator\nimport dataclasses\n@dataclasses.dataclass\nclass Item:\n"
            "    score: float\n\ndef laplace_noise(scale, g):\n    return g.laplace(0.0, scale)\n"
            "NOISES = {'laplace': laplace_noise}\nMORE = dict(laplace=laplace_noise)\n"
            "pairs = sorted([(1, 3.0), (2, 1.0)], key=operator.itemgetter(1))\n"
            "items = sorted([Item(2.0), Item(1.0)], key=operator.attrgetter('score'))\n"
            "scale = 2.0\ndraw = operator.methodcaller('laplace', 0.0, scale)\n"
            "print(pairs, items, NOISES['laplace'], MORE['laplace'])\n")
    assert _refused("ex-laplace-interval", code + HW + "    return 1.0\n") is None
    assert environment_use("ex-laplace-textbook", code + LAP + NOISE, []) is None


def test_d_the_long_streams_cross_the_wire_as_two_integers():
    """Adversarial review 16, D: 7.2's long streams (up to 3,000 queries in each of 4,000
    calls) crossed to the sandbox one query at a time; the model answer's hidden test took
    164 s of its 300 s at load 5, and a correct answer timed out at load 8 to 12. They now
    cross as a :class:`~dpkit.course.wire.CountStream`, which reads as the list
    ``[CountQuery(0)] * L`` does (the judge's detection is unchanged) and encodes as two
    integers. Deterministic."""
    import json

    import numpy as np

    from dpkit.course.judges import svt
    from dpkit.course.judges._base import Raised
    from dpkit.course.wire import CountQuery, CountStream, decode, encode

    stream = decode(encode(CountStream(0, 3000)))
    assert len(stream) == 3000 and [q([7]) for q in stream] == [7] * 3000
    assert stream[-1]([7]) == 7 and len(stream[10:20]) == 10 and list(stream[2998:]) == \
        [stream[0]] * 2
    with pytest.raises(IndexError):
        stream[3000]
    size = len(json.dumps(encode(stream)))
    assert size < 100 and 100 * size < len(json.dumps(encode([CountQuery(0)] * 3000)))
    seen = []

    def stop(queries, *_args):
        seen.append(queries)
        raise RuntimeError("stop")

    cases = svt._long_cases(np.random.default_rng(0))
    with pytest.raises(Raised):
        svt._check_long(stop, cases)
    assert len(seen[0]) == cases[0]["length"] and len(json.dumps(encode(seen[0]))) < 100
