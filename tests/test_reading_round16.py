"""Issue #17 (round 16): matplotlib's ``figure.hooks`` (and backends named as modules) make
``pyplot.figure`` import a module named in data and call a function of it, a way around
the allow-list that the static reading never saw. Each way of setting them is refused in
the answers to the randomized and forbidden-function exercises; honest plotting stays
graded. Every test here is deterministic (no randomness)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_reading_round15 import HONEST_LAP, HW, _refused

from dpkit.course.exercises import environment_use

HOOKS = [
    "import matplotlib as mpl\nmpl.rcParams['figure.hooks'] = ['antigravity:fly']\n",
    "import matplotlib\nmatplotlib.rcParams.update({'figure.hooks': ['this:x']})\n",
    "import matplotlib as mpl\nwith mpl.rc_context({'figure.hooks': ['this:x']}):\n"
    "    pass\n",
    "import matplotlib as mpl\nmpl.rc('figure', hooks=['this:x'])\n",
    "import matplotlib as mpl\nmpl.rc('figure', **{'hooks': ['this:x']})\n",
    "import matplotlib.pyplot as plt\nplt.style.use({'figure.hooks': ['this:x']})\n",
    "import matplotlib\nmatplotlib.use('module://antigravity')\n",
]


@pytest.mark.parametrize("device", HOOKS)
def test_figure_hooks_are_refused_in_randomized_exercises(device):
    """``rcParams["figure.hooks"]``, ``rcParams.update``, ``rc_context``, ``rc`` with
    ``hooks=`` (or ``**{"hooks": …}``), ``style.use`` with a dict, and a ``module://``
    backend: each was graded before (no rule named them)."""
    why = environment_use("ex-laplace-textbook", device + HONEST_LAP, [])
    assert why is not None and "matplotlib" in why, (device, why)


@pytest.mark.parametrize("device", HOOKS)
def test_figure_hooks_are_refused_in_forbidden_function_exercises(device):
    """The same in the answer to a forbidden-function exercise."""
    why = _refused("ex-laplace-interval", device + HW + "    return 1.0\n")
    assert why is not None and "matplotlib" in why, (device, why)


def test_honest_plotting_settings_stay_graded():
    """Other settings, by key, ``rc`` group or context, and a style by name, are graded."""
    code = ("import matplotlib as mpl\nimport matplotlib.pyplot as plt\n"
            "mpl.rcParams['figure.dpi'] = 120\nmpl.rc('font', size=9)\n"
            "with mpl.rc_context({'axes.grid': True}):\n    plt.style.use('default')\n")
    assert environment_use("ex-laplace-textbook", code + HONEST_LAP, []) is None
    assert _refused("ex-laplace-interval", code + HW + "    return 1.0\n") is None


def test_the_worker_refuses_hooks_the_reading_cannot_see():
    """A key computed at run time, or written past the validator, reaches the worker: once
    guarded (as :func:`~dpkit.course.worker.main` does), matplotlib refuses to set a
    figure hook and ``pyplot.figure`` to call one; other settings and figures work. Run in
    a fresh interpreter, so that this process's matplotlib stays as it was."""
    probe = textwrap.dedent("""
        import sys
        from dpkit.course.worker import HOOKS_REFUSED, guard_matplotlib
        guard_matplotlib()
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        matplotlib.rcParams["figure.dpi"] = 90
        plt.figure()
        key = "figure." + "hooks"
        for how in ("set", "update", "past the validator"):
            try:
                if how == "set":
                    matplotlib.rcParams[key] = ["this:x"]
                elif how == "update":
                    matplotlib.rcParams.update({key: ["this:x"]})
                else:
                    dict.__setitem__(matplotlib.rcParams, key, ["this:x"])
                    plt.figure()
                print(how, "graded")
            except ValueError as error:
                print(how, HOOKS_REFUSED in str(error))
        print("imported", "this" in sys.modules)
    """)
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, timeout=300)
    assert done.stdout.split("\n")[:4] == ["set True", "update True",
                                           "past the validator True", "imported False"], done
