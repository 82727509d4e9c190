r"""A series basis that grows with the data: a nested ladder of additive splines.

The default nuisance basis of the one-step models. Every continuous covariate column is
first mapped to :math:`v = 2\hat F(x) - 1 \in [-1, 1]` by its **deconvolved** CDF
:math:`\hat F_X(t) = \{F_Z(t) - (1 - \alpha)\bar F(t)\}/\alpha` (post-processing of the
release, no extra privacy cost), which is about uniform over the data. Then it gets,
level by level, the Legendre polynomials :math:`P_1(v)`, :math:`P_2(v)`, :math:`P_3(v)`
(levels 1-3) and hierarchical cubic B-spline bumps at 1, then 2, 4, 8 and 16 more
centres (levels 4-8: the dyadic points 0; -1/2, 1/2; -3/4, ..., 3/4; -7/8, ..., 7/8;
-15/16, ..., 15/16 of the ``v`` scale, i.e. the data's dyadic quantiles; a level enters
the candidates only where the data support its size, see
:func:`privinfer.models._nuisances.sieve_basis`), each level's bumps half as wide as the
previous level's: together a cubic spline whose knots double from level to level. Every
function has unit norm under the uniform law, so an identity ridge penalises all of them
alike, and the bumps are local (a new knot adds a new, well-conditioned direction, not a
near-copy of the polynomials below it). Binary columns enter linearly. A categorical
covariate enters through its **tail contrasts** (:func:`tail_coding`): its levels are
sorted by deconvolved frequency and the m-th contrast compares one level with the pooled
rarer ones. Contrasts between resolved frequencies enter at level 1, like dummies; those
the privatisation noise swamps climb the ladder dyadically (:func:`tail_levels`), so a
small candidate pools the swamped levels, and a ridge shrinks a rare level toward the
levels about as rare as itself instead of toward the frequent ones. Pairwise products of
the linear terms (different columns) form an optional interaction block; a product with a
tail contrast enters with that contrast's level. The block also holds the polynomial
tensor products :math:`P_i(v_a)P_j(v_b)` (:math:`i, j \le 3`) of two columns, each from
the level of its higher degree on, so the "+ interactions" candidates of levels 1-3 are
the tensor polynomials of those degrees (bivariate cubic at level 3), and the products of
every tail contrast with :math:`P_1, P_2, P_3` of the other columns (a curve per level of
a factor), and the products of every bump of a continuous column with the linear terms
of the other columns, each from the bump's level on (:data:`BUMP_BY_LINEAR`: a curve
steep in one column's distribution-function scale times another column).

A **candidate** sub-basis is "levels up to ``a``, with or without interactions", and
below ``alpha = 1`` (``public_head``) also the same with the public columns some levels
richer: public functions carry no privatisation noise, so a fit may use more of them
than of the private ones. The
candidates are index subsets of one largest basis, so the per-fold sufficient statistics
(Gram matrices and moments) of that basis give every candidate's private cross-validation
loss by taking sub-blocks, and the outcome and Riesz fits may choose different candidates
(:func:`privinfer.nuisance.regularize.cv_spectral`). Rate double robustness needs both
nuisance errors to vanish; a sieve chosen by cross-validation grows with the information
in the data instead of staying at a fixed degree.

Why the CDF scale: every basis function is bounded (by 8) wherever the reference puts
mass, so a reference much wider than the data (a uniform reference on [0, cap] for a
skewed income) or with heavy tails cannot inflate the privatisation noise of the Gram
matrices through huge powers of far-out reference draws; and knots at data quantiles
follow the data, not the reference. Every function is a product :math:`a_j(v)p_j(x)` of a
public and a private factor, as the separable inversion engine requires.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privinfer._repr import short_repr
from privinfer._typing import FloatArray, IntArray
from privinfer._validation import check_int
from privinfer.exceptions import DataMismatchError

__all__ = [
    "SieveBasis",
    "deconvolved_moments",
    "deconvolved_quantiles",
    "quantile_rows",
    "tail_coding",
    "tail_levels",
]

#: Largest ladder level (linear, square, cube, then 1, 3, 7, 15 and 31 knots). Level 8
#: (16 bumps a column, each over 1/16 of the data) enters the candidates only when the
#: size limit allows it (about n_k * alpha^2 >= 700 for two continuous columns): at
#: alpha = 1 and n = 16000 it took the sparse-tail bias of a clipped lognormal covariate's
#: E[Y(1)] from -0.56 to -0.21 SE (validation page of the user guide); at level 7 its
#: upper 6% lies inside one knot interval.
MAX_LEVEL = 8
#: Kinds of the Legendre atoms (levels 1-3); the interaction block multiplies them across
#: columns (the polynomial tensor block, ``tensor=True``).
_POLY_KINDS = frozenset({"lin", "sq", "cube"})
#: Bumps times lines (default True): the interaction block also multiplies every bump of
#: a continuous column (levels 4 to 8) with the linear term of each other column, entering
#: the "+ interactions" candidates at the bump's level. The polynomial tensor block's
#: products are polynomials of degree at most 3 in each column's distribution-function
#: scale, so a product of a column that is steep in that scale (a skewed income near its
#: top) with another column is out of its reach at any sieve size. ``"poly"``: with each
#: other column's linear, square and cube as well; ``False``: the tensor block alone.
#: Measured with ``benchmarks/validate.py --bump-by-linear {off,lin,poly}`` (validation
#: page of the user guide): on the held-out ``dollar_scale`` at alpha = 1, n = 16000
#: (income times a saving share) the ATT's bias went from +1.07 to +0.66 standard errors
#: and its coverage from 0.80 to 0.975 (the bias bound sees the rest); on the other
#: designs, at alpha 1, 0.7 and 0.5 and n 1000 to 16000, interval lengths and errors
#: moved by a median of 0% to 2%. It adds no function below level 4, so fits that stop
#: there (small n * alpha^2, many covariates) are unchanged.
#: ``"bump"`` (a research setting, not a default): also the products of two columns'
#: bumps of the same level, up to level :data:`BUMP_BY_BUMP_LEVEL` (a corner that two
#: steps make, which polynomial products and bumps times lines approximate poorly).
BUMP_BY_LINEAR: bool | str = True
#: Highest level of the bumps multiplied together under ``BUMP_BY_LINEAR = "bump"``.
BUMP_BY_BUMP_LEVEL = 5
#: Research switch (default ``False``): the interaction block also holds products of
#: three columns. ``"linear"``: the products of three different columns' linear terms
#: (a factor's tail contrasts among them), entering the "+ interactions" candidates at
#: level 2; ``"bump"``: those, and the products of every bump of a continuous column with
#: the linear terms of two other columns, from the bump's level on. The pairwise block
#: cannot draw structure of order three or more (a step in the sum of several binary
#: items; a public group times two private steps: the eighteenth round of held-out
#: designs, validation page of the user guide). A function of several private columns
#: times a public factor is still one public and one private factor, so the inversion
#: stays separable. Measured with ``benchmarks/bias_sources.py --variants triples=...``.
TRIPLES: bool | str = False
#: Research switch (default ``False``): single-index atoms. The models pass the private
#: parts of linear indices fitted on the release (the deconvolved least-squares fits of
#: the treatment and of each arm's outcome on the linear terms,
#: :func:`privinfer.models._nuisances.index_coefficients`); each index
#: :math:`t = x_{\mathrm{priv}}'b` is mapped through its deconvolved CDF like a column
#: and gets the ladder's :math:`P_2, P_3` and bumps up to level :data:`INDEX_TOP` (no
#: linear term: that is in the span of the columns' linear terms). A step or curve in a
#: weighted sum of several private columns (a score of binary items, a logistic index of
#: many covariates) is a function of all of them at once, which additive terms and
#: products of two or three columns draw poorly. A function of the private columns alone,
#: so the inversion stays separable. ``True``: at every alpha; ``"alpha1"``: where nothing
#: is replaced (``alpha = 1``: the indices are plain least squares). Measured (validation
#: page of the user guide): at ``alpha = 1`` on the 54 validation designs with two or
#: more private columns the mean absolute bias fell from 0.29 to 0.26 SE and coverage
#: rose from 0.950 to 0.959 (the held-out ``item_index`` ATT from -2.2 to -0.3 SE), no
#: cell worse by more than 0.21 SE; below ``alpha = 1`` it lost cells on designs with
#: many private columns at ``alpha = 0.5``. Not yet a default: the privacy planner's
#: curve would step at ``alpha = 1`` (the indices add variance there and nowhere else).
INDEX_ATOMS: bool | str = False
#: Highest ladder level of the single-index atoms (:data:`INDEX_ATOMS`).
INDEX_TOP = 6
#: Quantile probabilities of the knots added at levels 4 to 8 (dyadic).
_KNOT_PROBS = {
    4: (0.5,),
    5: (0.25, 0.75),
    6: (0.125, 0.375, 0.625, 0.875),
    7: tuple((2 * i + 1) / 16 for i in range(8)),
    8: tuple((2 * i + 1) / 32 for i in range(16)),
}
#: Continuous columns are mapped to v = 2 F(x) - 1 in [-1, 1] through their deconvolved
#: CDF, interpolated between the quantiles at these probabilities (0.5% ... 99.5%). Every
#: basis function is then bounded wherever the reference puts mass (a reference much wider
#: than the data, heavy tails), which keeps the privatisation noise of the Gram matrices
#: small; the fit is constant beyond the extreme quantiles.
_MAP_PROBS = np.r_[0.005, np.arange(1, 64) / 64, 0.995]
#: Rows used for deconvolved quantiles (a deterministic stride beyond this).
_QUANTILE_ROWS = 100_000


def quantile_rows(n: int) -> IntArray:
    """Positions of the released rows that :func:`deconvolved_quantiles` reads out of ``n``.

    Every row up to ``_QUANTILE_ROWS`` rows, else a deterministic stride. Passing only
    these rows (in order) gives the same quantiles as passing all ``n``: a data source
    that is not in memory (Dask partitions) gathers just them.

    Examples
    --------
    >>> quantile_rows(5).tolist(), quantile_rows(250_000)[:3].tolist()
    ([0, 1, 2, 3, 4], [0, 2, 4])
    """
    step = n // _QUANTILE_ROWS if n > _QUANTILE_ROWS else 1
    return np.arange(0, n, step, dtype=np.int64)


def deconvolved_quantiles(
    released: FloatArray,
    ref_values: FloatArray,
    ref_weights: FloatArray,
    alpha: float,
    probs: FloatArray,
) -> FloatArray:
    r"""Quantiles of the true marginal of a private column, from released values.

    The released marginal is :math:`F_Z = \alpha F_X + (1-\alpha)\bar F`, so
    :math:`F_X = (F_Z - (1-\alpha)\bar F)/\alpha`, evaluated on the released values,
    made monotone (running maximum) and clipped to [0, 1], then inverted.

    Parameters
    ----------
    released : ndarray of shape (n,)
        Released values of the column.
    ref_values, ref_weights : ndarray of shape (M,)
        Reference sample of the column and its weights.
    alpha : float
        Keep probability.
    probs : ndarray
        Probabilities in (0, 1).

    Returns
    -------
    ndarray
        The quantiles (at ``alpha = 1`` the sample quantiles).

    Examples
    --------
    Half the rows replaced by a uniform reference on [0, 10]; the data live on [0, 1]:

    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(0, 1, 20000)
    >>> z = np.where(rng.random(20000) < 0.5, x, rng.uniform(0, 10, 20000))
    >>> ref = np.linspace(0, 10, 1001)
    >>> q = deconvolved_quantiles(z, ref, np.full(1001, 1 / 1001), 0.5, np.array([0.5]))
    >>> bool(abs(q[0] - 0.5) < 0.05), bool(np.median(z) > 0.9)
    (True, True)
    """
    z = np.asarray(released, dtype=float)
    t = np.sort(z[quantile_rows(z.size)])
    fz = np.arange(1, t.size + 1) / t.size
    if alpha < 1.0:
        order = np.argsort(ref_values, kind="stable")
        cw = np.cumsum(np.asarray(ref_weights, dtype=float)[order])
        pos = np.searchsorted(np.asarray(ref_values, dtype=float)[order], t, side="right")
        fq = np.where(pos > 0, cw[np.maximum(pos - 1, 0)], 0.0)
        fx = np.clip(np.maximum.accumulate((fz - (1 - alpha) * fq) / alpha), 0.0, 1.0)
    else:
        fx = fz
    idx = np.searchsorted(fx, np.asarray(probs, dtype=float), side="left")
    return t[np.clip(idx, 0, t.size - 1)]


def _cdf_map(
    released: FloatArray, ref_values: FloatArray, ref_weights: FloatArray, alpha: float
) -> tuple[FloatArray, FloatArray]:
    r"""Knots of :math:`x \mapsto 2\hat F(x) - 1`, the deconvolved CDF on [-1, 1].

    Piecewise linear through the deconvolved quantiles at ``_MAP_PROBS``; constant below
    the 0.5% and above the 99.5% quantile.
    """
    q = deconvolved_quantiles(released, ref_values, ref_weights, alpha, _MAP_PROBS)
    x, first = np.unique(q, return_index=True)
    last = np.r_[first[1:] - 1, q.size - 1]
    u = 0.5 * (_MAP_PROBS[first] + _MAP_PROBS[last])
    if x.size == 1:  # a (nearly) constant column
        return np.array([x[0] - 1.0, x[0] + 1.0]), np.array([-1.0, 1.0])
    return x, 2 * u - 1


def _two_values(v: FloatArray, released: FloatArray) -> tuple[float, float] | None:
    """The two values of a column that takes exactly two (else None).

    ``v`` holds the column at the reference points (private) or its values (public),
    ``released`` its released values.
    """
    vals = np.unique(v)
    if vals.size != 2 or not np.all(np.isin(np.unique(released), vals)):
        return None
    return float(vals[0]), float(vals[1])


def _indicator_map(low: float, high: float) -> tuple[FloatArray, FloatArray]:
    """The map of a two-valued column onto 0 and 1 (it then enters as a 0/1 column).

    A column coded 0/2, 1/2 or -1/1 is the same covariate as its 0/1 coding, so it gets
    the same basis (one linear function, no powers or bumps) and the same fits.
    """
    return np.array([low, high]), np.array([0.0, 1.0])


def _is_indicator_map(mp: tuple[FloatArray, FloatArray]) -> bool:
    """Whether ``mp`` is an :func:`_indicator_map` (a CDF map never ends at 0 and 1)."""
    return mp[1].size == 2 and mp[1][0] == 0.0 and mp[1][1] == 1.0


#: Integral of the squared cardinal cubic B-spline over the real line.
_B2 = 151.0 / 315.0


def _cardinal_cubic(t: FloatArray) -> FloatArray:
    """Cardinal cubic B-spline (support [-2, 2], peak 2/3 at 0)."""
    a = np.abs(t)
    p2 = np.maximum(2.0 - a, 0.0)
    p1 = np.maximum(1.0 - a, 0.0)
    return (p2 * p2 * p2 - 4.0 * (p1 * p1 * p1)) / 6.0


def _atom(v: FloatArray, kind: str, centre: float, width: float, raw: bool) -> FloatArray:
    """One atom on the transformed scale ``v`` (``raw``: a binary column, as it is)."""
    if raw:
        return v
    # Legendre polynomials scaled to unit norm, with products instead of powers (a float
    # power of 3 goes through pow(), several times slower on the rows of a large fit)
    if kind == "lin":
        return np.sqrt(3.0) * v
    if kind == "sq":
        return (1.5 * np.sqrt(5.0)) * (v * v) - 0.5 * np.sqrt(5.0)
    if kind == "cube":
        return v * ((2.5 * np.sqrt(7.0)) * (v * v) - 1.5 * np.sqrt(7.0))
    # unit norm under the uniform law on [-1, 1] (density 1/2), ignoring truncation
    return _cardinal_cubic((v - centre) / width) / np.sqrt(width * _B2 / 2)


def deconvolved_moments(
    released: FloatArray, ref_values: FloatArray, ref_weights: FloatArray, alpha: float
) -> tuple[float, float]:
    r"""Mean and standard deviation of a private column's true marginal.

    :math:`E X^k = (\overline{Z^k} - (1 - \alpha)E_{\bar Q}X^k)/\alpha` for k = 1, 2; the
    reference's moments are returned if the deconvolved variance is not positive.

    Examples
    --------
    >>> z = np.array([0.0, 1.0, 2.0, 3.0])
    >>> deconvolved_moments(z, z, np.full(4, 0.25), 0.5)  # data = reference here
    (1.5, 1.118033988749895)
    """
    z = np.asarray(released, dtype=float)
    rv, rw = np.asarray(ref_values, dtype=float), np.asarray(ref_weights, dtype=float)
    m1r, m2r = float(rw @ rv), float(rw @ rv**2)
    m1 = (float(z.mean()) - (1 - alpha) * m1r) / alpha
    m2 = (float(np.mean(z**2)) - (1 - alpha) * m2r) / alpha
    var = m2 - m1**2
    if not np.isfinite(var) or var <= 1e-12 * max(m2r - m1r**2, 1e-300):
        return m1r, float(np.sqrt(max(m2r - m1r**2, 0.0))) or 1.0
    return m1, float(np.sqrt(var))


def _triples(
    units: list[tuple[int, int]],
    atoms: list[tuple[int, str, float, float]],
    groups: tuple[int, ...] | list[int],
    kind: bool | str,
) -> list[tuple[int, ...]]:
    """Atom triples of :data:`TRIPLES`.

    Three columns' linear units, and with ``"bump"`` every bump times two other columns'
    linear units (no two factors from one column).
    """
    out = [
        (a, b, c)
        for (ga, a), (gb, b), (gc, c) in itertools.combinations(units, 3)
        if len({ga, gb, gc}) == 3
    ]
    if kind == "bump":
        bumps = [(a, at[0]) for a, at in enumerate(atoms) if at[1] == "bump" and at[0] >= 0]
        for a, ca in bumps:
            out += [
                (a, b, c)
                for (gb, b), (gc, c) in itertools.combinations(units, 2)
                if len({groups[ca], gb, gc}) == 3
            ]
    return out


def _categorical_groups(groups: tuple[int, ...], binary: np.ndarray) -> dict[int, list[int]]:
    """Columns of every group of two or more binary columns (the dummies of a factor)."""
    cols: dict[int, list[int]] = {}
    for j, g in enumerate(groups):
        cols.setdefault(g, []).append(j)
    return {g: c for g, c in cols.items() if len(c) >= 2 and all(binary[j] for j in c)}


def _level_frequencies(
    released: FloatArray, ref: FloatArray, ref_weights: FloatArray, alpha: float
) -> tuple[FloatArray, FloatArray, int]:
    r"""Deconvolved frequencies of a factor's levels: its dummies' columns, then the base.

    :math:`\hat p_j = (\bar z_j - (1 - \alpha)E_{\bar Q}u_j)/\alpha` for each dummy
    column and one minus their sum for the base level (all dummies zero). Post-processing
    of the release. Also returns the released shares :math:`\bar z_j` (base last) and the
    number of rows they were read from, which give the frequencies' noise
    (:func:`tail_levels`).
    """
    z = np.asarray(released, dtype=float)
    z = z[quantile_rows(z.shape[0])]  # the rows the quantiles read (a Dask source has them)
    q = z.mean(axis=0)
    p = q
    if alpha < 1.0:
        p = (q - (1 - alpha) * (np.asarray(ref_weights) @ np.asarray(ref, dtype=float))) / alpha
    return np.r_[p, 1.0 - p.sum()], np.r_[q, 1.0 - q.sum()], int(z.shape[0])


#: A level (or pooled tail) whose deconvolved frequency is below this many of its standard
#: errors is swamped by the privatisation noise: its contrast climbs the ladder.
RESOLVED_Z = 2.0


def tail_levels(
    freq: FloatArray, shares: FloatArray, n_rows: int, alpha: float, max_level: int
) -> list[int]:
    r"""Ladder levels of a factor's tail contrasts (:func:`tail_coding` order).

    A contrast compares the level :math:`\ell_{m-1}` with the pooled rarer ones
    :math:`T_m`. When both frequencies are resolved, at least ``RESOLVED_Z`` standard errors
    :math:`\sqrt{s(1-s)/n}/\alpha` above zero (``s`` the released share), it enters at
    level 1, like a dummy. The others are levels the privatisation noise swamps: the j-th
    of them enters at level :math:`1 + \lceil\log_2(j + 1)\rceil` (2, 3, 3, 4, ...), so
    small candidates pool them and private CV decides how finely the data resolve them. A
    public factor (``alpha = 1``) climbs only for levels with a handful of rows.

    Examples
    --------
    A uniform reference over 4 levels at alpha = 0.5, n = 4000: the third level (2%) is
    within two standard errors of zero, so its contrast with the rarest climbs; the
    pooled 3% of the two rarest is resolved against the second level.

    >>> freq = np.array([0.6, 0.37, 0.02, 0.01])
    >>> shares = 0.5 * freq + 0.5 / 4
    >>> tail_levels(freq, shares, 4000, 0.5, 7)
    [1, 1, 2]
    """
    freq = np.asarray(freq, dtype=float)
    shares = np.clip(np.asarray(shares, dtype=float), 0.0, 1.0)
    order = np.argsort(-freq, kind="stable")

    def resolved(idx: IntArray) -> bool:
        s = float(shares[idx].sum())
        return float(freq[idx].sum()) >= RESOLVED_Z * np.sqrt(s * (1 - s) / n_rows) / alpha

    out, j = [], 0
    for m in range(1, freq.size):
        if resolved(order[m - 1 : m]) and resolved(order[m:]):
            out.append(1)
        else:
            j += 1
            out.append(int(min(max_level, 1 + int(np.ceil(np.log2(j + 1))))))
    return out


def tail_coding(freq: FloatArray) -> list[tuple[float, FloatArray, int]]:
    r"""Tail contrasts of a factor: its levels pooled from the rarest up, orthogonalised.

    Sort the levels by (deconvolved) frequency, :math:`\ell_1` the most frequent, and let
    :math:`T_m = \{\ell_m, \dots, \ell_L\}` be the m-th tail, :math:`P_m` its mass and
    :math:`h_m = 1\{g \in T_m\}` its indicator (:math:`h_1 = 1`). The contrasts are

    .. math::

        \tilde h_m = h_m - \frac{P_m}{P_{m-1}} h_{m-1}, \qquad m = 2, \dots, L:

    on :math:`T_{m-1}` the level :math:`\ell_{m-1}` against the pooled rarer ones, zero
    outside. Under the level frequencies they are centred and orthogonal to each other
    (Helmert contrasts in the order of frequency), and with the constant they span the
    same functions as the dummies, so an unpenalised fit is unchanged. A fit that drops or
    shrinks the contrasts from some m on gives all levels of :math:`T_{m-1}` their pooled
    mean: the rare levels are pooled with the levels about as rare as themselves. The
    dummies' coding shrinks a rare level toward the row-weighted mean of all levels
    instead, which the frequent levels dominate; on a 12-level private factor with 80% of
    the rows on two levels, the outcome and Riesz fits were both pulled there, and the
    one-step estimator kept their product bias (see the validation page of the user
    guide). Orthogonal contrasts, rather than the nested indicators themselves, keep the
    noise of the deconvolved Gram matrix spread over its entries, as the noise guard
    (:func:`~privinfer.nuisance.regularize.noise_guard`) assumes.

    Parameters
    ----------
    freq : ndarray of shape (L,)
        Frequencies of the dummy columns' levels, then of the base level (all dummies
        zero); negative values (noise) count as zero mass.

    Returns
    -------
    list of (c0, coefs, size)
        :math:`\tilde h_m = c_0 + \sum_j \mathrm{coef}_j u_j` in terms of the dummy
        columns ``u``, and the size of the tail :math:`T_m`, for m = 2..L.

    Examples
    --------
    Three dummies (levels b, c, d) and the base a; frequencies a 0.1, b 0.6, c 0.05, d 0.25.
    The first contrast is "not b", centred; the last is c against a, zero elsewhere:

    >>> out = tail_coding(np.array([0.6, 0.05, 0.25, 0.1]))
    >>> np.round([[c0, *c] for c0, c, _ in out], 4).tolist()  # c0, then b, c, d
    [[0.6, -1.0, 0.0, 0.0], [0.625, -0.625, 0.0, -1.0], [-0.3333, 0.3333, 1.0, 0.3333]]
    >>> [size for _, _, size in out]
    [3, 2, 1]
    """
    freq = np.asarray(freq, dtype=float)
    L = freq.size
    order = np.argsort(-freq, kind="stable")
    base = L - 1
    mass = np.maximum(freq, 0.0)
    out = []
    prev_c0, prev_coefs, prev_mass = 1.0, np.zeros(L - 1), float(mass.sum())
    for m in range(1, L):
        in_tail = np.zeros(L, dtype=bool)
        in_tail[order[m:]] = True
        c0 = float(in_tail[base])
        coefs = in_tail[:base] - c0
        t_mass = float(mass[order[m:]].sum())
        r = t_mass / prev_mass if prev_mass > 0 else 0.0
        out.append((c0 - r * prev_c0, coefs - r * prev_coefs, L - m))
        prev_c0, prev_coefs, prev_mass = c0, coefs, t_mass
    return out


@dataclass(frozen=True)
class SieveBasis:
    r"""Nested additive spline ladder with an optional block of pairwise interactions.

    Attributes
    ----------
    n_private : int
        Number of private design columns (they come first).
    maps : tuple
        Per column (private then public), ``(x, u)`` knots of the monotone piecewise-linear
        map to the transformed scale :math:`v = 2\hat F(x) - 1 \in [-1, 1]` (``None`` for
        0/1 columns, which enter as they are; a column with two other values is mapped
        onto 0 and 1 by :func:`_indicator_map`).
    atoms : tuple of (int, str, float)
        ``(column, kind, centre, width)``: kind ``"lin"``, ``"sq"``, ``"cube"`` (the
        Legendre polynomials of degree 1-3 in ``v``, orthonormal under the uniform law
        that ``v`` follows over the data), ``"bump"`` (a cubic B-spline of half-width
        ``2 * width`` centred at ``centre``, normalised likewise) or ``"tail"`` (a tail
        contrast of a categorical covariate, ``tails[int(centre)]``; ``column`` is the
        first of its dummy columns).
    functions : tuple of tuple of int
        Atoms multiplied in each basis function (``()`` is the constant).
    level : tuple of int
        Ladder level of each function (0 for the constant; minus the finer level of its
        two factors for an interaction, which enters the candidates with interactions
        from that level on).
    names : tuple of str
        Readable names.
    max_level : int
        Highest level present.

    Examples
    --------
    Two private uniform columns, levels up to 4 (one knot), with interactions:

    >>> rng = np.random.default_rng(0)
    >>> ref = rng.uniform(-1, 1, (512, 2))
    >>> b = SieveBasis.build(ref, np.full(512, 1 / 512), ref, np.zeros((512, 0)), 1.0,
    ...                      (0, 1), (), ("x1", "x2"), max_level=4)
    >>> b.n_basis, [len(c) for _, c in b.candidates()]
    (20, [3, 4, 5, 9, 7, 16, 9, 20])
    >>> b.names[-3], b.level[-3]  # the bivariate cubic's top term, from level 3 on
    ('P3(x1)*P3(x2)', -3)
    >>> b.names[-2:], b.level[-2:]  # bumps times lines, from level 4 on
    (('B(x1; +0)*x2', 'B(x2; +0)*x1'), (-4, -4))
    >>> A, P = b.split(ref[:3], None)
    >>> A is None, P.shape
    (True, (3, 20))
    """

    n_private: int
    maps: tuple[tuple[FloatArray, FloatArray] | None, ...]
    atoms: tuple[tuple[int, str, float, float], ...]
    functions: tuple[tuple[int, ...], ...]
    level: tuple[int, ...]
    names: tuple[str, ...]
    max_level: int
    #: largest candidate kept by :meth:`candidates` when no size is given (set by
    #: :meth:`restrict`)
    max_size: int | None = None
    #: the tail contrasts of categorical groups: ``(c0, columns, coefficients)``, the
    #: function ``c0 + sum_j coef_j u_j`` of the group's dummy columns (``"tail"`` atoms
    #: point here through their ``centre``)
    tails: tuple[tuple[float, tuple[int, ...], tuple[float, ...]], ...] = ()
    #: levels by which the public columns lead in the second variant of every candidate
    #: (``build``'s ``public_head_start``; 0: no variant)
    public_head: int = 0
    #: single indices of the private columns (:data:`INDEX_ATOMS`): ``(coefficients,
    #: map)``; an atom on index ``m`` has column ``-1 - m``
    indices: tuple[tuple[FloatArray, tuple[FloatArray, FloatArray]], ...] = ()
    __repr__ = short_repr  # one line: arrays and tables by their shape

    @classmethod
    def build(
        cls,
        private_ref: FloatArray,
        ref_weights: FloatArray,
        private_released: FloatArray,
        public: FloatArray,
        alpha: float,
        private_groups: tuple[int, ...],
        public_groups: tuple[int, ...],
        names: tuple[str, ...],
        *,
        max_level: int = MAX_LEVEL,
        interactions: bool = True,
        tensor: bool = True,
        public_head_start: int = 0,
        tail_tensor: bool = True,
        index_coefs: Sequence[FloatArray] = (),
    ) -> SieveBasis:
        r"""Build the ladder up to ``max_level`` from public information and the release.

        Parameters
        ----------
        private_ref : ndarray of shape (M, K_private)
            Private design columns at the reference points.
        ref_weights : ndarray of shape (M,)
            Reference weights.
        private_released : ndarray of shape (n, K_private)
            Released private design columns (their deconvolved marginals place knots).
        public : ndarray of shape (n, K_public)
            Public design columns.
        alpha : float
            Keep probability.
        private_groups, public_groups : tuple of int
            Group label of each column (dummies of one categorical share a label).
        names : tuple of str
            Names of the private then the public columns.
        max_level : int, default=8
            Highest ladder level (1: linear ... 8: cubic spline with 31 knots).
        interactions : bool, default=True
            Include the pairwise products of linear terms.
        tensor : bool, default=True
            With ``interactions``, also the products of two columns' Legendre atoms of
            degrees up to 3 (:math:`P_i(v_a)P_j(v_b)`, :math:`i, j \le 3`), each entering
            the "+ interactions" candidates at the level of its higher degree: a
            function of a thin direction such as :math:`x_1 - x_2` of two correlated
            columns is not additive, and pairwise products of linear terms alone leave
            a bias that does not shrink with :math:`n`. The products of bumps and lines
            (:data:`BUMP_BY_LINEAR`) come with ``interactions`` whatever ``tensor``.
        public_head_start : int, default=0
            With :math:`h > 0`, every candidate also comes in a variant whose public
            columns lead by :math:`h` levels (a public function of ladder level
            :math:`l` enters at :math:`\max(1, l - h)`), and the private CV chooses
            between the two: public functions carry no privatisation noise, so below
            ``alpha = 1`` a fit may need to be richer in the public columns than the
            noise lets it be in the private ones (the models pass
            :math:`h = \min(3, \mathrm{round}(\log_2 \alpha^{-2}))`, 0 at ``alpha = 1``).
        tail_tensor : bool, default=True
            With ``tensor``, the tensor block also multiplies a categorical covariate's
            tail contrasts with the squares and cubes of the other columns (its linear
            products are in the block anyway): a propensity slope and an outcome curve
            that differ by sector are then in the candidates. Without them, a design with
            sector-specific curves in a private covariate kept a bias of 0.4-0.6 SE at
            ``alpha = 1`` (held-out ``group_curves`` of the validation suite).
        index_coefs : sequence of ndarray of shape (K_private,), default=()
            Coefficients of single indices :math:`t = x_{\mathrm{priv}}'b` of the private
            columns; each gets the ladder's :math:`P_2`, :math:`P_3` and bumps up to level
            :data:`INDEX_TOP` on its deconvolved CDF scale (:data:`INDEX_ATOMS`).

        Raises
        ------
        DataMismatchError
            If the column counts disagree.
        """
        owner = "SieveBasis"
        max_level = check_int(max_level, "max_level", owner, 1)
        max_level = min(max_level, MAX_LEVEL)
        k_priv, k_pub = private_ref.shape[1], public.shape[1]
        if private_released.shape[1] != k_priv or len(names) != k_priv + k_pub:
            raise DataMismatchError(f"{owner}: column counts of the inputs disagree.")
        groups = tuple(private_groups) + tuple(public_groups)
        n_cols = k_priv + k_pub
        binary = np.zeros(n_cols, dtype=bool)
        maps: list[tuple[FloatArray, FloatArray] | None] = []
        rw = np.asarray(ref_weights, dtype=float)
        for j in range(n_cols):
            if j < k_priv:
                v, rel, w, a = private_ref[:, j], private_released[:, j], rw, alpha
            else:
                v = rel = public[:, j - k_priv]
                w, a = np.full(1, 1.0), 1.0
            binary[j] = bool(np.all((v == 0) | (v == 1)))
            if binary[j]:
                maps.append(None)
                continue
            two = _two_values(v, rel)
            binary[j] = two is not None
            maps.append(_indicator_map(*two) if two is not None
                        else _cdf_map(rel, v if a < 1 else v[:1], w, a))
        # knots at dyadic points of the transformed scale v = 2 F(x) - 1
        knots = {lv: 2 * np.asarray(p) - 1 for lv, p in _KNOT_PROBS.items()}
        atoms: list[tuple[int, str, float, float]] = []
        functions: list[tuple[int, ...]] = [()]
        level = [0]
        fnames = ["1"]

        head = check_int(public_head_start, "public_head_start", owner, 0)

        def add(col: int, kind: str, knot: float, lv: int) -> None:
            atoms.append((col, kind, knot, 2.0 ** -(lv - 3)))
            functions.append((len(atoms) - 1,))
            level.append(lv)
            nm = names[col]
            fnames.append(
                {"lin": nm, "sq": f"P2({nm})", "cube": f"P3({nm})"}.get(
                    kind, f"B({nm}; {knot:+.3g})"
                )
            )

        # linear units: one per column, except that the dummies of a categorical group
        # become its tail contrasts (:func:`tail_coding`)
        # (0/1 columns only: the tail contrasts combine the raw dummy columns)
        zero_one = binary & np.array([mp is None for mp in maps], dtype=bool)
        categorical = _categorical_groups(groups, zero_one)
        tails: list[tuple[float, tuple[int, ...], tuple[float, ...]]] = []
        units: list[tuple[int, int]] = []  # (group, atom)
        done: set[int] = set()
        for j in range(n_cols):
            if j in done:
                continue
            cols = categorical.get(groups[j])
            if cols is None:
                add(j, "lin", 0.0, 1)
                units.append((groups[j], len(atoms) - 1))
                continue
            done.update(cols)
            if cols[0] < k_priv:
                rel, ref, w, a = private_released[:, cols], private_ref[:, cols], rw, alpha
            else:
                pub = [c - k_priv for c in cols]
                rel, ref, w, a = public[:, pub], public[:1, pub], np.ones(1), 1.0
            freq, shares, rows = _level_frequencies(rel, ref, w, a)
            levels = tail_levels(freq, shares, rows, a, max_level)
            prefix = names[cols[0]].split("[")[0]
            for m, (c0, coefs, size) in enumerate(tail_coding(freq), start=2):
                tails.append((c0, tuple(cols), tuple(coefs)))
                atoms.append((cols[0], "tail", float(len(tails) - 1), 1.0))
                functions.append((len(atoms) - 1,))
                level.append(levels[m - 2])
                fnames.append(f"{prefix}[{size} rarest]")
                units.append((groups[j], len(atoms) - 1))
        for lv in range(2, max_level + 1):
            for j in range(n_cols):
                if binary[j]:
                    continue
                if lv == 2:
                    add(j, "sq", 0.0, 2)
                elif lv == 3:
                    add(j, "cube", 0.0, 3)
                else:
                    for kn in knots[lv]:
                        add(j, "bump", float(kn), lv)
        indices = []
        for m, b in enumerate(index_coefs):
            b = np.asarray(b, dtype=float)
            t_ref, t_rel = private_ref @ b, private_released @ b
            indices.append((b, _cdf_map(t_rel, t_ref if alpha < 1 else t_ref[:1], rw, alpha)))
            for lv in range(2, min(max_level, INDEX_TOP) + 1):
                kinds = ("sq",) if lv == 2 else ("cube",) if lv == 3 else ("bump",) * len(knots[lv])
                centres = (0.0,) if lv < 4 else knots[lv]
                for kind, kn in zip(kinds, centres, strict=True):
                    atoms.append((-1 - m, kind, float(kn), 2.0 ** -(lv - 3)))
                    functions.append((len(atoms) - 1,))
                    level.append(lv)
                    fnames.append({"sq": f"P2(index{m + 1})", "cube": f"P3(index{m + 1})"}.get(
                        kind, f"B(index{m + 1}; {kn:+.3g})"))
        if interactions:
            single = {f[0]: i for i, f in enumerate(functions) if len(f) == 1}
            pairs = [(a, b) for (ga, a), (gb, b) in itertools.combinations(units, 2) if ga != gb]
            if tensor:
                # the polynomial tensor block: every product of two columns' Legendre
                # atoms (degree 1-3 each), entering with the higher degree of the two
                kinds = _POLY_KINDS | {"tail"} if tail_tensor else _POLY_KINDS
                poly = [(a, at[0]) for a, at in enumerate(atoms) if at[1] in kinds and at[0] >= 0]
                linear = set(pairs)
                pairs += [
                    (a, b)
                    for (a, ca), (b, cb) in itertools.combinations(poly, 2)
                    if groups[ca] != groups[cb] and (a, b) not in linear
                ]
            if BUMP_BY_LINEAR:
                by = {"lin"} if BUMP_BY_LINEAR != "poly" else _POLY_KINDS
                others = [(a, at[0]) for a, at in enumerate(atoms) if at[1] in by and at[0] >= 0]
                bumps = [(a, at[0]) for a, at in enumerate(atoms) if at[1] == "bump" and at[0] >= 0]
                pairs += [(a, b) for a, ca in bumps for b, cb in others if groups[ca] != groups[cb]]
                if BUMP_BY_LINEAR == "bump":
                    lv_of = {f[0]: level[i] for i, f in enumerate(functions) if len(f) == 1}
                    pairs += [
                        (a, b)
                        for (a, ca), (b, cb) in itertools.combinations(bumps, 2)
                        if groups[ca] != groups[cb] and lv_of[a] == lv_of[b]
                        and lv_of[a] <= BUMP_BY_BUMP_LEVEL
                    ]
            for a, b in pairs:
                fa, fb = single[a], single[b]
                functions.append((a, b))
                # enters the "+ interactions" candidates with its finer factor
                level.append(-max(level[fa], level[fb]))
                # a factor's contrast is named last, as in its linear products ("x*C(g)[...]")
                swap = atoms[a][1] == "tail" and atoms[b][1] != "tail"
                first, second = (fb, fa) if swap else (fa, fb)
                fnames.append(f"{fnames[first]}*{fnames[second]}")
            if TRIPLES:
                for atom_triple in _triples(units, atoms, groups, TRIPLES):
                    fs = [single[x] for x in atom_triple]
                    functions.append(atom_triple)
                    level.append(-max(2, *(level[f] for f in fs)))
                    fnames.append("*".join(fnames[f] for f in fs))
        return cls(
            k_priv, tuple(maps), tuple(atoms), tuple(functions), tuple(level),
            tuple(fnames), max_level, None, tuple(tails), head, tuple(indices),
        )  # fmt: skip

    # -- interface shared with PolynomialBasis / BSplineBasis ----------------------------
    @property
    def n_basis(self) -> int:
        """Number of basis functions J."""
        return len(self.functions)

    @property
    def has_public(self) -> bool:
        """Whether some basis function has a non-constant public factor."""
        return any(self.atoms[a][0] >= self.n_private for f in self.functions for a in f)

    @property
    def public_only(self) -> np.ndarray:
        """Which basis functions are the constant or depend on public columns alone.

        They carry no privatisation noise: below ``alpha = 1`` the noise guard of the
        models' outcome fits spares them in the candidates whose public columns lead
        (:func:`privinfer.nuisance.regularize.guard_lift`).
        """
        k = self.n_private
        return np.array([all(self.atoms[a][0] >= k for a in f) for f in self.functions])

    @property
    def degree(self) -> str:
        """A short description (for summaries)."""
        inter = any(lv < 0 for lv in self.level)
        return f"spline ladder <= {self.max_level}{' + interactions' if inter else ''}"

    def _atom_values(self, u: FloatArray, private: bool) -> tuple[FloatArray, dict[int, int]]:
        """Values of the atoms that the basis uses on one side, one row per atom.

        Returns the array (atoms x rows, a last row of ones) and the row of each atom.
        Only atoms that some basis function multiplies are evaluated (a restricted
        ladder keeps the atoms of the levels it dropped), and the bumps of one column
        and level are evaluated together.
        """
        k, off = self.n_private, (0 if private else self.n_private)
        used = sorted({a for f in self.functions for a in f if (self.atoms[a][0] < k) == private})
        row_of = {a: r for r, a in enumerate(used)}
        out = np.empty((len(used) + 1, u.shape[0]))
        out[-1] = 1.0
        by_col: dict[int, list[int]] = {}
        for a in used:
            _, kind, centre, _ = self.atoms[a]
            if kind == "tail":
                c0, cols, coefs = self.tails[int(centre)]
                out[row_of[a]] = c0 + u[:, [c - off for c in cols]] @ np.asarray(coefs)
                continue
            by_col.setdefault(self.atoms[a][0], []).append(a)
        for col, atoms in by_col.items():
            if col < 0:  # a single index of the private columns (INDEX_ATOMS)
                coefs, mp = self.indices[-1 - col]
                x = u @ coefs
            else:
                mp = self.maps[col]
                x = u[:, col - off]
            v = x if mp is None else np.interp(x, mp[0], mp[1])
            raw = mp is None or _is_indicator_map(mp)
            bumps: dict[float, list[int]] = {}
            for a in atoms:
                _, kind, centre, width = self.atoms[a]
                if kind == "bump" and mp is not None:
                    bumps.setdefault(width, []).append(a)
                else:
                    out[row_of[a]] = _atom(v, kind, centre, width, raw)
            for width, group in bumps.items():
                centres = np.array([self.atoms[a][2] for a in group])
                vals = _cardinal_cubic((v[None, :] - centres[:, None]) / width)
                out[[row_of[a] for a in group]] = vals / np.sqrt(width * _B2 / 2)
        return out, row_of

    def _factor(self, u: FloatArray, private: bool) -> FloatArray:
        T, row_of = self._atom_values(u, private)
        k = self.n_private
        ones = T.shape[0] - 1
        width = max(2, max(len(f) for f in self.functions))  # 3 with TRIPLES only
        idx = np.full((self.n_basis, width), ones, dtype=np.int64)
        for j, f in enumerate(self.functions):
            mine = [row_of[a] for a in f if (self.atoms[a][0] < k) == private]
            idx[j, : len(mine)] = mine
        # rows of the row-contiguous atom array; the transpose is a column-major (n, J) view
        out = T[idx[:, 0]] * T[idx[:, 1]]
        for m in range(2, width):
            out *= T[idx[:, m]]
        return out.T

    def split(
        self, private: FloatArray, public: FloatArray | None
    ) -> tuple[FloatArray | None, FloatArray]:
        """Public and private factors ``(A, P)`` of every basis function.

        Parameters
        ----------
        private : ndarray of shape (n, K_private)
            Private design columns (released or reference).
        public : ndarray of shape (n, K_public) or None
            Public design columns; ignored (may be ``None``) for reference points.

        Returns
        -------
        A : ndarray of shape (n, J) or None
            Public factors (``None`` when no basis function has one).
        P : ndarray of shape (n, J)
            Private factors.
        """
        P = self._factor(np.asarray(private, dtype=float), True)
        if public is None or not self.has_public:
            return None, P
        return self._factor(np.asarray(public, dtype=float), False), P

    def private_only(self, private: FloatArray) -> FloatArray:
        """Private factors alone (for reference points)."""
        return self.split(private, None)[1]

    # -- the ladder -----------------------------------------------------------------------
    def candidates(self, max_size: int | None = None) -> list[tuple[str, IntArray]]:
        """Nested candidate sub-bases ``(description, indices)``, smallest first.

        Levels ``1..max_level``, each without and then with the interaction block, and
        with a public lead (``public_head``) each of those again with the public columns
        that many levels richer; empty duplicates and candidates with more than
        ``max_size`` functions are dropped (the linear candidate is always kept).
        """
        max_size = self.max_size if max_size is None else max_size
        ladders = {0: np.asarray(self.level, dtype=np.int64)}
        if self.public_head > 0:  # a variant only where the lead moves some function
            led = self._levels(self.public_head)
            if not np.array_equal(led, ladders[0]):
                ladders[self.public_head] = led
        out: list[tuple[str, IntArray]] = []
        seen: set[tuple[int, ...]] = set()
        for a in range(1, self.max_level + 1):
            for lead, lv in ladders.items():
                for inter in (False, True):
                    keep = (lv >= 0) & (lv <= a)
                    if inter:
                        keep |= (lv < 0) & (-lv <= a)
                    idx = np.flatnonzero(keep)
                    key = tuple(idx.tolist())
                    if key in seen:
                        continue
                    if max_size is not None and idx.size > max_size and out:
                        continue
                    seen.add(key)
                    tag = f", public +{lead}" if lead else ""
                    out.append((f"level {a}{tag}{' + interactions' if inter else ''}", idx))
        return out

    def _levels(self, lead: int) -> IntArray:
        """Candidate levels of the functions with the public columns ``lead`` levels early."""
        lv = np.asarray(self.level, dtype=np.int64)
        atom_lv = {f[0]: lv[i] for i, f in enumerate(self.functions) if len(f) == 1}

        def entry(atom: int) -> int:
            base = int(atom_lv[atom])
            return max(1, base - lead) if self.atoms[atom][0] >= self.n_private else base

        out = lv.copy()
        for i, f in enumerate(self.functions):
            if len(f) == 1:
                out[i] = entry(f[0])
            elif len(f) == 2:
                out[i] = -max(entry(f[0]), entry(f[1]))
            elif len(f) > 2:  # products of three columns (TRIPLES) enter at level 2 or later
                out[i] = -max(2, *(entry(a) for a in f))
        return out

    def restrict(self, keep: IntArray, max_size: int | None = None) -> SieveBasis:
        """The basis made of the functions in ``keep`` (constant first, order kept).

        ``max_size`` becomes the default size limit of :meth:`candidates`.
        """
        keep = np.unique(np.r_[0, np.asarray(keep, dtype=np.int64)])
        lv = [self.level[i] for i in keep]
        return SieveBasis(
            self.n_private, self.maps, self.atoms,
            tuple(self.functions[i] for i in keep), tuple(lv),
            tuple(self.names[i] for i in keep), max(max(lv), 1), max_size, self.tails,
            self.public_head, self.indices,
        )  # fmt: skip
