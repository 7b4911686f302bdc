"""Adversarial review 15: ways around the static reading of the course grader (C1 unpickling
through NumPy and pandas, C2 the IPython shell, C3 the library's AboveThreshold under other
names and dpkit's private names, H1 attribute lookups in format strings), each graded 3/3
where a fair teacher gives 0, and the honest code next to each rule that stays graded.
Every test here is deterministic (no randomness)."""

import asyncio
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
GRID = "def grid_noise_scale(sensitivity, epsilon, d):\n"
LAP = "def my_laplace(value, sensitivity, epsilon, generator):\n"
HONEST_LAP = LAP + "    return value + generator.laplace(0.0, sensitivity / epsilon)\n"
PICKLE = ("open('q.bin', 'w').write('c' + 'dpkit.svt' + chr(10) + 'above_' + 'threshold' + "
          "chr(10) + '.')\n")
CHAPTER = {"ex-laplace-interval": "laplace", "ex-laplace-grid-scale": "laplace",
           "ex-svt-above-threshold": "sparse_vector", "ex-exp-precision": "exponential_base2"}


def _refused(label: str, answer: str, earlier: list[str] | None = None) -> str | None:
    """The feedback of the forbidden-function check with the set-up cell known and
    unknown (both must refuse), or None if either grades the answer."""
    found = [forbidden_use(label, answer, earlier or [], setup)
             for setup in (None, _setup(CHAPTER[label]))]
    return None if None in found else found[1]


#: C1: the payload is a pickle naming the library's function; each answer scored 3/3.
C1_UNPICKLING = [
    ("ex-svt-above-threshold", "import numpy as np\n" + PICKLE +
     "_at = np.load('q.bin', None, True)\n" + AT +
     "    return _at(queries, data, threshold, epsilon, rng=rng)\n"),
    ("ex-svt-above-threshold", "import numpy as np\n" + AT +
     "    return np.lib.format.read_array(open('q.bin', 'rb'), True)\n"),
    ("ex-svt-above-threshold", "from pandas.compat.pickle_compat import loads\n"
     "_at = loads(bytes.fromhex('63'))\n" + AT + "    return _at(queries)\n"),
    ("ex-svt-above-threshold", "from numpy.lib.format import read_array\n" + AT +
     "    return read_array(open('q.bin', 'rb'), True)(queries)\n"),
    ("ex-laplace-grid-scale", "from numpy import load as ld\n_g = ld('p.bin', None, True)\n"
     + GRID + "    return _g(sensitivity, epsilon, d).scale\n"),
    ("ex-laplace-grid-scale", "import numpy.lib.npyio as io\n_g = io.load('p.bin', None, "
     "True)\n" + GRID + "    return _g(sensitivity, epsilon, d).scale\n"),
    ("ex-laplace-grid-scale", "import pandas.compat.pickle_compat as pc\n"
     "_g = pc.load(open('p.bin', 'rb'))\n" + GRID +
     "    return _g(sensitivity, epsilon, d).scale\n"),
    ("ex-svt-above-threshold", "import matplotlib.backends\nm = matplotlib.backends."
     "backend_registry.load_backend_module('module://dpkit.svt.core')\n" + AT +
     "    return m.sparse_on_answers(queries, threshold, epsilon, 1, rng)\n"),
]


@pytest.mark.parametrize(("label", "answer"), C1_UNPICKLING)
def test_c1_loading_objects_through_numpy_and_pandas_is_refused(label, answer):
    """Adversarial review 15, C1: ``np.load(f, None, True)`` (``allow_pickle`` given by
    position), ``np.lib.format.read_array(f, True)`` and pandas' ``pickle_compat.loads``
    returned the library's function from a pickle and passed both readings (3/3 on 2.6
    and 7.2); every loader of NumPy's ``.npy`` files and pandas' pickles, and
    matplotlib's backend registry (it imports a module named in data and returns it), is
    now refused, and in a randomized exercise too."""
    why = _refused(label, answer)
    assert why is not None and "not allowed" in why, why
    why = environment_use("ex-laplace-textbook", answer + HONEST_LAP, [])
    assert why is not None and "judged by what your function" in why, why


def test_c1_saving_and_building_arrays_stays_graded():
    """NumPy and pandas as an answer uses them: arrays, ``np.save``, a table read from a
    CSV file, are graded."""
    code = ("import numpy as np\nimport pandas as pd\nx = np.array([1.0, 2.0])\n"
            "np.save('x.npy', x)\nnp.savetxt('x.txt', x)\ny = np.loadtxt('x.txt')\n"
            "t = pd.DataFrame({'a': x})\nt.to_csv('t.csv')\nu = pd.read_csv('t.csv')\n")
    assert _refused("ex-svt-above-threshold",
                    code + AT + "    return None\n") is None
    assert environment_use("ex-laplace-textbook", code + HONEST_LAP, []) is None


#: C2: the IPython shell, reached by get_ipython() in a forbidden-function exercise, or
#: through exit and quit (their ``_ip``) in a randomized one; each scored 3/3.
C2_SHELL = [
    ("ex-laplace-interval", HW + "    g = get_ipython().ev('laplace_' + 'accuracy')\n"
     "    return g(sensitivity, epsilon, 1 - confidence)\n"),
    ("ex-laplace-interval", HW + "    return get_ipython().user_ns['laplace_' + 'accuracy']"
     "(sensitivity, epsilon, 1 - confidence)\n"),
    ("ex-laplace-grid-scale", "get_ipython().run_cell('from dpkit.laplace import laplace_' + "
     "'grid as _g')\n" + GRID + "    return _g(sensitivity, epsilon, d).scale\n"),
    ("ex-svt-above-threshold", AT + "    return exit._ip.user_ns['above_' + 'threshold']"
     "(queries, data, threshold, epsilon, rng=rng)\n"),
    ("ex-svt-above-threshold", AT + "    return quit._ip.ev('above_' + 'threshold')"
     "(queries, data, threshold, epsilon, rng=rng)\n"),
    ("ex-svt-above-threshold", "ns = vars(exit)['_' + 'ip'].user_ns\n" + AT +
     "    return ns['above_' + 'threshold'](queries, data, threshold, epsilon, rng=rng)\n"),
    ("ex-svt-above-threshold", "e = quit\n" + AT + "    return e\n"),
    ("ex-svt-above-threshold", AT + "    return Out[3](queries, data, threshold, epsilon)\n"),
    ("ex-svt-above-threshold", AT + "    return _(queries, data, threshold, epsilon)\n"),
    ("ex-laplace-interval", HW + "    return _i2\n"),
]


@pytest.mark.parametrize(("label", "answer"), C2_SHELL)
def test_c2_the_ipython_shell_is_refused(label, answer):
    """Adversarial review 15, C2: ``get_ipython().ev/.user_ns/.run_cell`` in 2.2, 2.6 and
    ``exit._ip``/``quit._ip`` in 7.2 reached the library function by a computed name;
    ``exit`` and ``quit`` may now only be called, the shell's names and the history names
    (``Out``, ``_``, ``_i2``) the student does not bind are refused."""
    why = _refused(label, answer)
    assert why is not None and ("IPython" in why or "looks names up" in why), why


@pytest.mark.parametrize("device", [
    "    env = quit._ip.ev('__imp' + 'ort__(\"os\").envi' + 'ron')\n",
    "    graded = len(In) < 40\n",
    "    graded = _dh[0].startswith('/tmp')\n",
    "    graded = type(exit).__name__\n",
])
def test_c2_the_shell_and_its_history_are_refused_in_randomized_exercises(device):
    """Adversarial review 15, C2 (``quit._ip.ev`` read ``os.environ`` in the sandbox, 3/3
    on 2.4): the shell and the history, whose length and folders tell the grader from a
    live notebook, are refused in the answers to randomized exercises."""
    answer = LAP + device + "    return value + generator.laplace(0.0, sensitivity / epsilon)\n"
    why = environment_use("ex-laplace-textbook", answer, [])
    assert why is not None and "judged by what your function" in why, why


def test_c2_calling_exit_and_one_s_own_underscore_stay_graded():
    """``exit()`` called, ``_`` as a throwaway variable the student binds, and a variable
    named ``Out`` of their own, are theirs: graded."""
    answer = (AT + "    g = rng.numpy_generator()\n    t = threshold + g.laplace(0.0, 2 / "
              "epsilon)\n    for _, q in enumerate(queries):\n        pass\n    return None\n")
    earlier = ["Out = [1, 2]\nprint(Out[0])\n", "if False:\n    exit()\n    quit()\n"]
    assert _refused("ex-svt-above-threshold", answer, earlier) is None
    assert environment_use("ex-laplace-textbook", HONEST_LAP, earlier) is None


def test_c2_the_worker_s_exit_holds_no_shell():
    """The worker's ``exit`` and ``quit`` keep IPython's type name (a kernel's, as the
    worker shows them) but hold nothing: no ``_ip``, no attribute at all; calling one
    returns None and the cell goes on, as in the worker before."""
    from dpkit.course import kernel

    shell = kernel.start("/nonexistent/kernel.json")
    for name in ("exit", "quit"):
        value = shell.user_ns[name]
        assert type(value).__module__ + "." + type(value).__name__ == \
            "IPython.core.autocall.ZMQExitAutocall"
        assert not hasattr(value, "_ip") and vars(value) == {}
    code = "exit()\nafter_exit = 1\n"
    asyncio.run(kernel.run_cell(shell, code, code, "<cell>"))
    assert shell.user_ns["after_exit"] == 1


#: C3: the library's AboveThreshold and grid under names the forbidden list lacked.
C3_LIBRARY = [
    ("ex-svt-above-threshold", "from fractions import Fraction\n"
     "from dpkit.svt.core import sparse_on_answers\n" + AT +
     "    found = sparse_on_answers(((i, Fraction(q(data))) for i, q in enumerate(queries)),"
     "\n        Fraction(threshold), Fraction(epsilon), 1, rng)\n"
     "    return found[0] if found else None\n", "dpkit.svt"),
    ("ex-svt-above-threshold", "from dpkit.naive.svt import _variant\n" + AT +
     "    r = _variant(queries, data, threshold, threshold_scale=2 / epsilon,\n"
     "                 query_scale=4 / epsilon, c=1, refresh=False, source=rng)\n"
     "    return r[0][0] if r else None\n", "dpkit.naive.svt"),
    ("ex-svt-above-threshold", AT + "    return dpkit.naive.svt_no_cutoff(queries, data, "
     "threshold, epsilon, rng)[0]\n", "dpkit.naive.svt"),
    ("ex-svt-above-threshold", "import dpkit.svt.core as c\n" + AT +
     "    return c.first_passes(queries)\n", "dpkit.svt"),
    ("ex-laplace-grid-scale", "from dpkit.laplace import _laplace_grid\n" + GRID +
     "    return _laplace_grid(sensitivity, epsilon, d).scale\n", "_laplace_grid"),
    ("ex-laplace-grid-scale", "import dpkit\n" + GRID +
     "    return dpkit.laplace._laplace_grid(sensitivity, epsilon, d).scale\n",
     "_laplace_grid"),
    ("ex-laplace-grid-scale", "from dpkit._samplers.grid import grid_exponent\n" + GRID +
     "    return 2.0 ** grid_exponent(sensitivity)\n", "dpkit._samplers"),
]


@pytest.mark.parametrize(("label", "answer", "named"), C3_LIBRARY)
def test_c3_the_library_s_implementations_under_other_names_are_refused(label, answer,
                                                                        named):
    """Adversarial review 15, C3: ``dpkit.svt.core.sparse_on_answers``,
    ``dpkit.naive.svt._variant`` (7.2) and ``dpkit.laplace._laplace_grid`` (2.6) scored
    3/3; 7.2 now refuses the packages ``dpkit.svt`` and ``dpkit.naive.svt`` whole (by any
    path: ``dpkit.naive.svt_no_cutoff`` is defined there), and every FORBIDDEN or JUDGED
    answer refuses dpkit's private names. The feedback names what was refused."""
    why = _refused(label, answer)
    assert why is not None and named in why, why


def test_c3_private_names_are_refused_in_randomized_exercises():
    """A private name of dpkit is refused in a randomized exercise too (its state could
    tell the grader from a notebook)."""
    answer = "from dpkit.rng import _bits\n" + HONEST_LAP
    why = environment_use("ex-laplace-textbook", answer, [])
    assert why is not None and "private name of dpkit" in why, why


def test_c3_experiments_and_other_packages_stay_graded():
    """An experiment above 7.2 that calls the library's AboveThreshold where it names it
    (``print(dpkit.svt.above_threshold(…))``), re-imports the set-up cell's name, or
    imports a package of dpkit other than the forbidden ones is graded, as are the model
    answers' uses of dpkit in 2.6."""
    model = (AT + "    g = rng.numpy_generator()\n    t = threshold + g.laplace(0.0, 2 / "
             "epsilon)\n    for i, q in enumerate(queries):\n"
             "        if q(data) + g.laplace(0.0, 4 / epsilon) >= t:\n"
             "            return i\n    return None\n")
    earlier = ["print(dpkit.svt.above_threshold([lambda d: 1.0], [], 0, 1.0, rng=rng))\n",
               "from dpkit.svt import above_threshold\nimport dpkit.svt\n",
               "from dpkit.laplace import laplace_mechanism\nimport dpkit.rng\n"]
    assert forbidden_use("ex-svt-above-threshold", model, earlier,
                         _setup("sparse_vector")) is None
    grid = GRID + "    return sensitivity / epsilon * (1 + 2.0 ** -20)\n"
    assert _refused("ex-laplace-grid-scale", "import dpkit.laplace\n" + grid) is None


#: H1: a format string's fields look attributes and items up.
H1_FORMAT = [
    "    graded = \"'MPLCONFIGDIR': '/tmp'\" in '{0._os.environ}'.format(random)\n",
    "    graded = '{r._os.environ}'.format_map({'r': random})\n",
    "    graded = '{0.__dict__}'.format(random)\n",
    "    graded = '{0:{1._os}}'.format(1, random)\n",
    "    graded = '{0[0]._os}'.format([random])\n",
    "    graded = ('{0.' + '_os.environ}').format(random)\n",
    "    graded = str.format('{0}', random)\n",
    "    graded = getattr('{0}', 'format')(random)\n",
    "    f = '{}'\n    graded = f.format(random)\n",
]


@pytest.mark.parametrize("device", H1_FORMAT)
def test_h1_lookups_through_format_strings_are_refused(device):
    """Adversarial review 15, H1: ``'{0._os.environ}'.format(random)`` read the sandbox's
    environment in a defeat device (3/3 on 2.4); a format string written out whose fields
    use ``.`` or ``[…]`` (a nested spec too), ``.format`` on a string that is not written
    out, and ``"format"`` given as a string are refused."""
    answer = "import random\n" + LAP + device + \
        "    return value + generator.laplace(0.0, sensitivity / epsilon)\n"
    why = environment_use("ex-laplace-textbook", answer, [])
    assert why is not None and "judged by what your function" in why, (device, why)


def test_h1_in_forbidden_exercises_too():
    """The same read in a forbidden-function exercise's answer is refused."""
    answer = "import dpkit\n" + HW + "    return '{0.laplace.laplace_accuracy}'.format(dpkit)\n"
    why = _refused("ex-laplace-interval", answer)
    assert why is not None and "format field" in why, why


@pytest.mark.parametrize("line", [
    "    print('{:.3f}'.format(value))\n",
    "    print('{0} {1}'.format(value, epsilon))\n",
    "    print('{name}: {v:>10.2e}'.format(name='x', v=value))\n",
    "    print('{v}'.format_map({'v': value}))\n",
    "    print(f'{value:.3f} {epsilon!r}')\n",
    "    print('%(v)s and %s' % ({'v': value}, 1))\n",
    "    show = list(map('{:.2f}'.format, [value]))\n",
])
def test_h1_honest_format_strings_stay_graded(line):
    """Format strings as students write them (positional, named, specs, ``format_map``
    with a dict, f-strings, ``%``, ``'{:.2f}'.format`` as a value) are graded."""
    answer = LAP + line + "    return value + generator.laplace(0.0, sensitivity / epsilon)\n"
    assert environment_use("ex-laplace-textbook", answer, []) is None


@pytest.mark.parametrize("device", [
    "import functools\n@functools.singledispatch\ndef probe(x):\n    return 0\n"
    "try:\n    @probe.register\n    def _(x: \"__imp\" \"ort__('os').environ\"):\n"
    "        return 1\nexcept TypeError as e:\n    GRADED = 'MPLCONFIGDIR' in str(e)\n",
    "from functools import singledispatch\n",
    "import sys\nEVENTS = []\nsys.addaudithook(lambda event, args: EVENTS.append(args))\n",
])
def test_string_annotations_and_audit_hooks_are_refused(device):
    """Found while closing review 15: ``functools.singledispatch``'s ``register``
    evaluates an annotation written as a string (``"__import__('os').environ"``: the
    environment came back in the TypeError's message), and an audit hook is handed the
    objects of the worker's events; both are refused in randomized and forbidden-function
    exercises."""
    why = environment_use("ex-laplace-textbook", device + HONEST_LAP, [])
    assert why is not None and "judged by what your function" in why, why
    assert _refused("ex-laplace-interval", device + HW + "    return 1.0\n") is not None


def test_the_release_header_names_the_new_rules():
    """The release notebook's header says what review 15's rules refuse, where the import
    rule applies."""
    from dpkit.course import assignments

    header = assignments._IMPORT_RULE.format(modules="`math`") + assignments._HEADER
    for words in ("private names", "numpy.load", "get_ipython", "'{0.x}'", "f-strings",
                  "`_` unless your code sets it, as `for _ in …` does",
                  "in a randomized exercise the name `IPython`: write "
                  "`from IPython.display import display`",
                  "singledispatch", "df.style.format", "copy of an answer cell",
                  "`.eval`", "attrgetter", "`match` class pattern"):
        assert words in header, words


@pytest.mark.parametrize("device", [
    "import pandas as pd\nGRADED = pd.DataFrame({'a': [1]}).style.env.from_string("
    "'{{ cycler.__init__.__globals__.os.environ }}').render()\n",
    "import pandas as pd\nT = type(pd.DataFrame().style.template_html)\n",
    "from pandas.io.formats.style import Styler\n",
    "import sys\nGRADED = sys._base_executable\n",
    "import sys\nGRADED = sys.prefix != sys.base_prefix\n",
    "import warnings\nC = warnings._getcategory('dpkit.svt.core.Warning')\n",
])
def test_templates_private_names_and_install_paths_are_refused(device):
    """Found while closing review 15: pandas' Styler renders Jinja templates whose fields
    run lookups as code (``df.style.env.from_string("{{ … }}")`` read ``os.environ``);
    the private names of every allowed module (``sys._base_executable``,
    ``warnings._getcategory``, which imports a module named in a string) and where Python
    is installed (``sys.prefix``) tell the grader from a notebook: refused."""
    why = environment_use("ex-laplace-textbook", device + HONEST_LAP, [])
    assert why is not None and "judged by what your function" in why, why


def test_own_names_like_the_template_words_and_plot_styles_stay_graded():
    """A student's own ``self.env`` or ``prefix``, matplotlib's styles and a table's
    ``to_string()`` are graded."""
    code = ("import matplotlib.pyplot as plt\nimport pandas as pd\n"
            "plt.style.use('default')\nprint(pd.DataFrame({'a': [1]}).to_string())\n"
            "class Box:\n    def __init__(self):\n        self.env = {}\n"
            "prefix = 'run'\nprint(prefix, Box().env)\n")
    assert environment_use("ex-laplace-textbook", code + HONEST_LAP, []) is None


# Honest review 16 (round 16): honest code the rules above refused.
RUN_CLASS = ("class Run:\n    def __init__(self, gen):\n        self._gen = gen\n"
             "    def noise(self, scale):\n        return self._gen.laplace(0.0, scale)\n\n"
             + AT + "    run = Run(rng.numpy_generator())\n    t_hat = threshold + "
             "run.noise(2 / epsilon)\n    for i, q in enumerate(queries):\n"
             "        if q(data) + run.noise(4 / epsilon) >= t_hat:\n"
             "            return i\n    return None\n")


@pytest.mark.parametrize("source", ["dpkit.rng.seeded(1)", "dpkit.rng.default()"])
def test_c1_r16_own_private_attributes_stay_graded_when_called_with_a_dpkit_object(source):
    """Honest review 16, C1: a private attribute of the student's own class
    (``self._gen``) was refused as "a private name of dpkit" once the answer called its
    function with a dpkit object: the reading follows the argument into ``self``. An
    attribute the student's code stores itself, which names nothing of the library, is
    theirs, in the environment check and the forbidden-function check alike."""
    answer = RUN_CLASS + f"print(my_above_threshold([], [], -500, 1.0, {source}))\n"
    setup = _setup("sparse_vector")
    assert environment_use("ex-svt-above-threshold", answer, [setup]) is None
    assert forbidden_use("ex-svt-above-threshold", answer, [], setup,
                         "my_above_threshold") is None


def test_c1_r16_the_library_s_own_private_names_stay_refused():
    """Storing an attribute of the same name does not open the library's private names:
    ``dpkit._samplers`` and ``dpkit._warming._last`` exist in the library, and stay
    refused."""
    for device in ("import dpkit._samplers\n", "x = dpkit._warming._last\n"):
        answer = ("import dpkit\nclass Box:\n    def __init__(self):\n"
                  "        self._samplers = self._warming = self._last = 0\n" + device
                  + RUN_CLASS)
        why = environment_use("ex-svt-above-threshold", answer, [])
        assert why is not None and "private name of dpkit" in why, (device, why)


@pytest.mark.parametrize("line", [
    "display(df.style.format('{:.1f}'))\n",
    "display(df.style.format(precision=1))\n",
    "display(df.style.format(formatter={'a': '{:.2f}'}, subset=['a'], na_rep='-'))\n",
    "fmt = '{:.3f}'\nprint(fmt.format(2.0))\n",
])
def test_c2_r16_styler_format_with_written_out_arguments_stays_graded(line):
    """Honest review 16, C2: pandas' ``df.style.format("{:.1f}")`` (and even
    ``precision=1``) was refused as a computed ``str.format``. A computed format string
    looks attributes up only on its arguments, and from written-out numbers and strings
    whose fields look nothing up no module is reached: graded."""
    cell = "import pandas as pd\ndf = pd.DataFrame({'a': [1.0, 2.0]})\n" + line
    setup = _setup("sparse_vector")
    assert forbidden_use("ex-svt-above-threshold", RUN_CLASS, [cell], setup) is None
    assert environment_use("ex-svt-above-threshold", RUN_CLASS, [cell]) is None


@pytest.mark.parametrize("line", [
    "display(df.style.format('{0._os.environ}'))\n",
    "display(df.style.format(fmt))\n",
    "print(s.style.format(random))\n",
    "print(s.style.format('x', precision=random))\n",
    "print(s.style.format(**locals()))\n",
    "print(fmt.format(random))\n",
])
def test_c2_r16_format_with_arguments_that_may_hold_a_module_stays_refused(line):
    """What round 15 closed stays closed: a Styler's format string with a lookup field
    (applied to the table's cells), and ``.format`` on a computed string (``s.style`` is a
    string on a Series labelled ``"style"``) with an argument that is not written out."""
    cell = ("import pandas as pd\nimport random\nfmt = '{0._os}'\ndf = pd.DataFrame()\n"
            "s = pd.Series([fmt], index=['style'])\n" + line)
    why = environment_use("ex-svt-above-threshold", RUN_CLASS, [cell])
    assert why is not None and "format" in why, (line, why)


@pytest.mark.parametrize(("cell", "said", "not_said"), [
    ("from functools import singledispatch\n", "isinstance", "import each module"),
    ("import numpy as np\nx = np.load('a.npy')\n", "remove it", "say the name in the code"),
    ("ip = get_ipython()\nip.run_line_magic('time', 'x = 1')\n", "remove it",
     "say the name in the code"),
    ("import pickle\n", "pickle may not be imported", "looks names up"),
])
def test_m2_r16_refusals_give_advice_that_fits(cell, said, not_said):
    """Honest review 16, H1, M2, M4: ``singledispatch`` was told to "import each module you
    use by its own name", ``numpy.load`` and ``run_line_magic`` to "say the name in the
    code instead" (they are named), and ``import pickle`` that it "looks names up"; each
    refusal now says what to do."""
    answer = GRID + "    return sensitivity / epsilon * (1 + 2.0 ** -20)\n"
    why = forbidden_use("ex-laplace-grid-scale", answer, [(cell, "the cell you added")],
                        _setup("laplace"))
    assert why is not None and said in why and not_said not in why, why
