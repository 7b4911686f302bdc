"""Exact samplers and the power-of-two grid: the private machinery of the safe mechanisms.

Nothing in this package draws a floating-point random number or evaluates a transcendental
function in floating point to make a random decision. Every random choice is an exact
comparison between uniformly random bits and the binary expansion of a real number, and
those expansions are either computed exactly (rationals) or bracketed rigorously with
directed rounding in MPFR (through :mod:`gmpy2`), with more precision requested until the
comparison is decided. The samplers therefore draw from their target distributions *exactly*.

Modules, bottom up (each imports only modules above it in this list, plus
:mod:`dpkit._checks` and :mod:`dpkit.rng`):

:mod:`~dpkit._samplers.exact`
    Rational floors and roots, MPFR brackets of ``exp`` and of the logistic function,
    lazily computed binary expansions, the public size thresholds (``FIXED_MAX = 64``).
:mod:`~dpkit._samplers.bits`
    Reading random bits exactly as used, several fields of a proposal at once.
:mod:`~dpkit._samplers.bernoulli`
    Exact Bernoulli trials (CKS Algorithm 1, byte-wise and fixed-cost 64-bit trials) and
    geometric variables built from their digits.
:mod:`~dpkit._samplers.interval`
    One discrete Laplace value from one uniform of ``B`` bits (the interval algorithm).
:mod:`~dpkit._samplers.interval_gaussian`
    One discrete Gaussian value, each CKS round from one uniform of ``B`` bits.
:mod:`~dpkit._samplers.fixed_cost`
    Discrete Laplace and Gaussian for requests of up to 64 values, at a cost that does not
    depend on the values drawn.
:mod:`~dpkit._samplers.envelope`
    The block-envelope rejection sampler for larger arrays (near the entropy in bits).
:mod:`~dpkit._samplers.noise`
    ``discrete_laplace`` and ``discrete_gaussian``: the entry points, which choose a
    sampler from the request's size.
:mod:`~dpkit._samplers.grid`
    The power-of-two grid: ``to_grid``, ``add_units``, ``from_grid``, ``grid_exponent``,
    ``grid_sensitivity``.
:mod:`~dpkit._samplers.fixed_point`
    Level 1 of the base-2 selection's fast sampler: exact sums of 96-bit fixed-point weights,
    and the bound on the probability that a draw needs more (``fallback_bound``).
:mod:`~dpkit._samplers.base2`
    The exact selection of the base-2 exponential mechanism (Ilvento 2020).

Timing
------
A sampler whose loop count grows with ``|noise|`` tells anyone who can time a release how
large the noise was (Jin, McMurtry, Rubinstein & Ohrimenko, IEEE S&P 2022); CKS Algorithms 2
and 3 run one sample at a time are such samplers (kept, labelled, in :mod:`dpkit.naive.laplace`).
Requests of up to ``FIXED_MAX = 64`` values (every scalar release, every SVT threshold)
therefore use the *fixed-cost* samplers of :mod:`~dpkit._samplers.fixed_cost`: one discrete
Laplace value's trials are decided by the interval algorithm from one uniform of ``B`` bits
(:mod:`~dpkit._samplers.interval`: ``D = I + 3`` steps of the same Python integer
operations whatever the trials' outcomes), a scalar Gaussian round's likewise (a
proposal's trials, then its acceptance trial, from one uniform of ``B`` bits a round,
:mod:`~dpkit._samplers.interval_gaussian`), a larger request's by comparing 64 random
bits with the first 64 bits of each
trial's probability, all trials of all draws at once, so the random bytes read and the
operations run do not depend on the values drawn. What is and is not constant:

* Discrete Laplace (one value: a zero trial, a sign and a geometric magnitude; more: a
  difference of two geometrics; no rejection): the cost is a function of the scale and the
  count only, except in two events that finish with loops of their own: a tie
  (probability at most ``2**-64`` per scalar draw, per group of 8 trials or per trial) and
  a geometric beyond the ``2**I >= 64·scale`` covered digits (probability ``<= e**-64`` per
  draw). The interval walk runs on Python integers, whose subtraction and comparison scan
  the leading equal 30-bit digits of their operands (at most ``P/30``, ``P = B + 64``
  bits): a few tenths of a microsecond over the values (:mod:`~dpkit._samplers.interval`,
  "Fixed cost"), which the release's deadline pads. One value at a scale of ``2**55`` or more
  is drawn as a difference of two geometrics instead (that module's "Scales").
* Discrete Gaussian (CKS Algorithm 3): each round decides ``n + 1 + n // 2`` proposals at
  a fixed cost (one proposal and its acceptance for one value); rounds repeat until ``n``
  are accepted. The *number of rounds* varies, and the work with it, but it depends only
  on which proposals were accepted, and accepted proposals are independent draws from the
  target whatever that pattern is, so it is independent of the values returned and of the
  data (an overrun, though, shows the release's whole unpadded work: "Overruns" in
  :mod:`dpkit.timing`). For every request not walked by the interval algorithm (2 or more
  values, or one value at ``σ`` of about ``2**55`` or more) a proposal is accepted with
  probability exactly ``c·e**(-σ²/(2t²))·Σ_y e**(-y²/(2σ²))``, ``c = (1 - e**(-1/t))/2``,
  ``t = floor(σ) + 1``: at least 0.76 at the Gaussian mechanism's ``σ``, where a request
  of 2 to 64 values takes more than 9 rounds with probability at most ``2**-64``. The
  deadline must cover the rounds; ``benchmarks/deadlines.py``, which runs the sampler as it is,
  checks it. See "Rounds" in :func:`~dpkit._samplers.fixed_cost.fixed_discrete_gaussian`.
  Exceptions as above, plus (for ``n > 1``) an undecided acceptance
  comparison (probability about ``2**-40`` per proposal) and proposals ``|y| >= 2**53``
  (scales above about ``2**47``, never used by the mechanisms), which finish in exact
  arithmetic. A scalar Gaussian round's acceptance probability ``exp(-γ)`` is computed on
  its path, by the same fixed-point operations whatever ``γ``, from a byte-indexed table.
* Larger arrays use the block-envelope sampler (:mod:`~dpkit._samplers.envelope`): one
  round of proposals, the values and spares (a second round has probability below
  ``2**-64``), whose loops (undecided comparisons reading more bits, the tail) run over the
  whole array of up to ``_BLOCK = 2**17`` values: their length depends on the values
  collectively, diluting any single value's influence but not removing it. **Residual
  channel, tail values:** a value far in the tail (beyond about 8 scales for the discrete
  Laplace, about 4σ for the discrete Gaussian) lies in a block of the envelope table whose
  probability is below the guide table's resolution, so it almost always adds a
  refinement pass (two more reads of the source and a few NumPy passes, tens of µs). An
  adversarial review measured, at ``n = 65`` values: that pass ran in about 3% of the
  calls whose largest ``|x|`` was below 4 scales and in about 74% of those holding a value
  beyond 8 scales. Only arrays of thousands of values dilute it (the pass then runs in
  nearly every call). The release's deadline (below) covers that pass, so it shows only
  in a release that overruns its deadline.
* Selections: where the samplers choose between values by a condition on random bits or
  drawn values (the envelope's undecided entries, the entry of 0 that has no offset; the
  fixed-cost Gaussian's signs), they use bit masks
  (:func:`~dpkit._samplers.bits.mask`: ``&``, ``|``, ``^``), never :func:`numpy.where`,
  whose loop branches on each element; and a drawn prefix is located among the envelope's
  bounds by counting comparisons (about ``2·sqrt(J)`` per prefix), not by
  :func:`numpy.searchsorted`, whose loop length depends on the keys and their order. The
  same passes run whatever the values, and the outputs are bit for bit those of the
  earlier code (seeded draws of 1 to 300,000 values hashed). Measured unpadded, 4000
  interleaved calls a side, load 4–7 on 2 cores, Clopper–Pearson at 1 − 1e-6: the entry
  search on 628 prefixes, all decided against half undecided, certified ε ≥ 3.1–4.1 from
  its time before (7 runs) and 0.00 after; a 65-value fill at scale 1000 whose refined
  entry is forced to 0 or not (the same random bytes) certified ε ≥ 2.2–2.6 before (a
  3.4–3.6 µs shift, 2 runs) and 0.00 after; the Gaussian's signs of 97 proposals, all
  positive against random, certified nothing before or after. The cost, same process at
  load 6–7: table building unchanged (0.96–1.07 times), draws of 65 values 1.01–1.03
  times, of 1000 values 1.04–1.07 times, of 2**17 and 300,000 values within the run's
  noise (0.89–1.15 times), the fixed-cost Gaussian 1.00–1.01 times.
* Grid arithmetic: a float64 request (any size) is rounded to the grid, noised and
  converted back by :func:`~dpkit._samplers.grid.add_to_floats`: the same vectorised
  passes whatever the values' magnitudes and binary expansions (two branches computed for
  every element, one selected; no subnormal operand), bit for bit the exact result. The
  path is chosen from the dtype, the grid exponent and the noise's reach (public); outside
  them (values float64 cannot hold, grid steps beyond ``2**±1021``, noise whose reach --
  750 Laplace scales, 40 Gaussian σ -- exceeds ``2**53`` grid units) the arithmetic runs
  on exact Python integers (``to_grid``, ``add_units``, ``from_grid`` with
  ``exact=True``), always, never on ``int64`` by the values' magnitudes (a switch at
  ``2**61`` units that a breaker review timed: ε ≥ 2.94 certified against a promised
  0.01, review 23); its cost depends on the values, and the release's deadline is that of
  Python objects. The Laplace mechanism coarsens its grid (up to ``2**-10·Δ/d``) to keep
  its noise's reach below ``2**53`` units (:func:`dpkit.laplace.laplace_grid`), and the
  Gaussian's σ is about ``2**40`` units, so a float64 array leaves the float path only at
  extreme parameters. The fixed-cost samplers return an ``object`` array at scales whose
  digit plan exceeds 61 digits (public), never by whether the values drawn fit ``int64``.
* Deadlines: what the samplers and the grid cannot make constant (Python's exact
  arithmetic on values float64 cannot hold, the envelope's tail passes, the discrete
  Gaussian's rounds) is hidden by padding every release to a deadline set by public sizes,
  types and parameters (:mod:`dpkit.timing`). One deadline covers a common path only: the
  base-2 selection's fast sampler runs past it when a draw needs its MPFR or exact levels,
  with a probability bounded from the number of outcomes alone
  (:func:`~dpkit._samplers.fixed_point.fallback_bound`: below ``2**-52`` at ``10**6``),
  which enters its guarantee as an additive ``δ`` (:mod:`dpkit.exponential`).
* Input conversion: a float64 NumPy array is converted in a few vectorised operations; a
  Python list in one pass (:func:`dpkit._checks.check_finite_array`) whose cost hardly
  depends on the types of its elements (ints, floats, Fractions alike), except that an
  element float64 cannot hold exactly is looked at again. A list is several times slower
  than an array, and an array's dtype is visible in its cost: pass a float64 array.
* Constant cost is not constant time: Python, the allocator, caches, the secure source
  (:class:`dpkit.rng.SecureRandom` refills its buffer with a new key's ChaCha20 keystream
  every 16 KiB, after a number of releases that does not depend on the noise) and other
  load make
  the running time vary, but that variation is independent of the noise drawn.

References
----------
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (arXiv:2004.00010), Algorithms 1-3.
J. Jin, E. McMurtry, B. I. P. Rubinstein, O. Ohrimenko. *Are We There Yet? Timing and
Floating-Point Attacks on Differential Privacy Systems.* IEEE S&P 2022.
"""
