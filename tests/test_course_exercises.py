"""The exercises' metadata: library functions an answer may not use (report §2: one library
call answered "write it yourself" exercises with full marks), found statically."""

import pytest

from dpkit.course.exercises import FORBIDDEN, forbidden_use

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
    ("ex-exp-precision", "bits = compute_precision(0, 100, 1000, Eta(1243, 11))\n", [],
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
    with a message that names the exercise's demand and the function. Deterministic."""
    why = forbidden_use(label, answer, earlier)
    assert why is not None and named in why and FORBIDDEN[label][1] in why, why


@pytest.mark.parametrize("answer", [
    AT + "    f = getattr(dpkit.svt, 'above_' + 'threshold')\n"
    "    return f(queries, data, threshold, epsilon, rng=rng)\n",
    AT + "    return eval('dpkit.svt.above' + '_threshold')(queries, data, threshold, "
    "epsilon, rng=rng)\n",
    AT + "    return vars(dpkit.svt)['above_threshold'](queries, data, threshold, epsilon, rng)\n",
    AT + "    import sys\n    return sys.modules['dpkit.svt'].__dict__['above_threshold'](\n"
    "        queries, data, threshold, epsilon, rng)\n",
])
def test_dynamic_lookups_are_refused_where_a_function_is_forbidden(answer):
    """A name built at run time cannot be read from the source: refused as such."""
    why = forbidden_use("ex-svt-above-threshold", answer, [])
    assert why is not None and "dynamically" in why, why


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
