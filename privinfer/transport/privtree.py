r"""PrivTree private synthetic measures with Wasserstein-1 guarantees (He, 2026).

The functional core :func:`privtree_synthesize` grows a PrivTree on a cyclic binary
partition of the (optionally randomly shifted) unit cube, releases integer-noised leaf
counts and projects them back to a probability measure. :class:`PrivTreeSynthesizer`
is the sklearn-like class over it. :func:`grid_synthesize` is the uniform-grid
construction of He, Vershynin and Zhu (2023), kept as a baseline.

Neighbouring data sets differ by adding or removing one record. All noise is calibrated
on counts (sensitivity 1), so the number of records is never used by the mechanism.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from privinfer._typing import BoolArray, FloatArray, IntArray, RandomStateLike
from privinfer._validation import (
    check_in_interval,
    check_int,
    check_random_state,
    spawn_generators,
)
from privinfer.exceptions import NotFittedError, OutOfSupportError, ProblemSizeError
from privinfer.transport._release import warn_if_seeded
from privinfer.transport.measures import (
    _BITS,
    DyadicTree,
    SyntheticMeasure,
    _as_points,
    grow_tree,
)

__all__ = [
    "PrivTreeDiagnostics",
    "PrivTreeSynthesizer",
    "grid_synthesize",
    "privtree_synthesize",
    "two_sided_geometric",
]

Projection = Literal["tree", "lp"]

#: The paper's LP has n_atoms**2 transport variables; above this many atoms use "tree".
_LP_MAX_ATOMS = 400

#: Largest number of cells of :func:`grid_synthesize` (depth 24: about 5 GB while the
#: grid is built); a deeper grid is refused instead of exhausting memory.
_GRID_MAX_CELLS = 2**24

#: PrivTree constants in count units (Zhang, Xiao and Xie 2016, fan-out 2): the split
#: noise scale is (2*beta - 1)/(beta - 1) / eps_tree = 3 / eps_tree with eps_tree = eps/2,
#: the depth bias is delta = sigma * log(beta), and the threshold is theta = 0.
_FANOUT = 2
_THETA = 0.0


@dataclass(frozen=True)
class PrivTreeDiagnostics:
    """What happened during one fit, for the data holder.

    ``n_obs`` and ``n_clipped`` are computed from the private data without noise: they are
    *not* differentially private and must not be published with the measure. Nor is
    ``expected_leaves_bound`` of :func:`privtree_synthesize`, which gives ``n_obs`` away.
    A pickled :class:`PrivTreeSynthesizer` carries these three as None.

    Attributes
    ----------
    n_obs : int or None
        Number of records used (None in a pickled :class:`PrivTreeSynthesizer`).
    n_clipped : int or None
        Records moved onto the public bounds (only with ``clip=True``; None in a pickled
        :class:`PrivTreeSynthesizer`).
    n_leaves : int
        Leaves of the released tree (atoms of the measure).
    n_nodes : int
        Cells that received a noisy split decision.
    depth : int
        Depth of the deepest leaf.
    n_discarded : int
        Cells dropped without noise because they miss the shifted window.
    expected_leaves_bound : float or None
        The paper's bound on the expected number of leaves, ``6 + eps n / (4 log 2)``
        (``2**depth`` for :func:`grid_synthesize`; None in a pickled
        :class:`PrivTreeSynthesizer`).
    projection_cost : float
        W1 cost of the projection in unit-cube coordinates (see Notes of
        :func:`privtree_synthesize`).
    degenerate : bool
        True when the noisy counts summed to at most zero and uniform weights were used.

    Examples
    --------
    One record outside the public bounds is clipped onto them (``clip=True``):

    >>> x = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> x[0] = [1.5, 0.5]
    >>> nu, diag = privtree_synthesize(x, 1.0, [(0, 1), (0, 1)], clip=True, random_state=0)
    >>> diag.n_obs, diag.n_clipped, diag.degenerate
    (2000, 1, False)
    >>> diag.n_leaves == nu.n_atoms, diag.n_leaves < diag.expected_leaves_bound
    (True, True)
    """

    n_obs: int | None
    n_clipped: int | None
    n_leaves: int
    n_nodes: int
    depth: int
    n_discarded: int
    expected_leaves_bound: float | None
    projection_cost: float
    degenerate: bool


def two_sided_geometric(
    eps: float, size: int | tuple[int, ...], random_state: RandomStateLike = None
) -> IntArray:
    r"""Integer (discrete Laplace) noise for a count query of sensitivity 1.

    The two-sided geometric distribution is the integer analogue of Laplace noise with
    scale 1/eps; adding it to counts gives eps-differential privacy without the
    floating-point weaknesses of continuous Laplace noise. O(size).

    Parameters
    ----------
    eps : float
        Privacy budget for a sensitivity-1 (L1) count vector, ``eps > 0``.
    size : int or tuple of int
        Shape of the output.
    random_state : None, int, SeedSequence or Generator, default=None
        None draws fresh OS entropy.

    Returns
    -------
    ndarray of int64
        Draws with :math:`P(Z = z) = \frac{1-a}{1+a} a^{|z|}`, :math:`a = e^{-\varepsilon}`.

    Raises
    ------
    ValueError
        If ``eps`` is not a positive finite number.

    Notes
    -----
    :math:`Z = G_1 - G_2` with :math:`G_i` i.i.d. geometric on :math:`\{0, 1, \dots\}` with
    success probability :math:`1 - a`; :math:`\operatorname{Var} Z = 2a/(1-a)^2`, which
    tends to the Laplace variance :math:`2/\varepsilon^2` as :math:`\varepsilon \to 0`
    (Ghosh, Roughgarden and Sundararajan 2012).

    Examples
    --------
    >>> from privinfer.transport.privtree import two_sided_geometric
    >>> two_sided_geometric(1.0, 4, random_state=0).dtype
    dtype('int64')
    """
    eps = check_in_interval(eps, "eps", "two_sided_geometric", 0.0, math.inf, low_open=True)
    rng = check_random_state(random_state)
    success = -math.expm1(-eps)  # 1 - exp(-eps), accurate for small eps
    g = rng.geometric(success, size=(2, *np.atleast_1d(size)))
    return (g[0] - g[1]).astype(np.int64).reshape(size)


def _check_bounds(bounds: object, owner: str) -> FloatArray:
    try:
        arr = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"The 'bounds' parameter of {owner} must be a sequence of (low, high) pairs, "
            f"one per coordinate. Got {bounds!r} instead."
        ) from err
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"The 'bounds' parameter of {owner} must have shape (d, 2): one (low, high) pair "
            f"per coordinate. Got shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise ValueError(
            f"The 'bounds' parameter of {owner} describes d = 0 coordinates; at least one "
            "coordinate is needed."
        )
    if not np.all(np.isfinite(arr)) or np.any(arr[:, 0] >= arr[:, 1]):
        raise ValueError(
            f"The 'bounds' parameter of {owner} must hold finite pairs with low < high. "
            f"Got {arr.tolist()!r}."
        )
    return arr


def _prepare(
    X: object, bounds: FloatArray, clip: bool, owner: str
) -> tuple[FloatArray, int, tuple[str, ...]]:
    """Rescale data to the unit cube; raise for points outside the bounds unless clipping."""
    d = bounds.shape[0]
    if isinstance(X, pd.DataFrame):
        columns = tuple(str(c) for c in X.columns)
    else:
        columns = tuple(f"x{j}" for j in range(d))
    x = _as_points(X, d, owner)
    lo, hi = bounds[:, 0], bounds[:, 1]
    outside = np.any((x < lo) | (x > hi), axis=1)
    n_clipped = int(outside.sum())
    if n_clipped and not clip:
        raise OutOfSupportError(
            f"{owner}: {n_clipped} record(s) lie outside the public bounds {bounds.tolist()!r}. "
            "Widen the bounds (they must not be derived from the data) or pass clip=True "
            "to move them onto the boundary."
        )
    if n_clipped:
        x = np.clip(x, lo, hi)
    return (x - lo) / (hi - lo), n_clipped, columns


def _window(d: int, random_shift: bool, rng: np.random.Generator) -> tuple[IntArray, IntArray]:
    """Integer window holding the unit cube: the grid, or a shifted half of [0, 2]^d."""
    if not random_shift:
        return np.zeros(d, dtype=np.int64), np.full(d, np.int64(1) << np.int64(_BITS))
    half = np.int64(1) << np.int64(_BITS - 1)
    lo = rng.integers(0, half, size=d, endpoint=True, dtype=np.int64)
    return lo, lo + half


def _representatives(
    tree: DyadicTree, bounds: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    lo_u, hi_u = tree.leaf_boxes()
    centre_u = 0.5 * (lo_u + hi_u)
    lo, span = bounds[:, 0], bounds[:, 1] - bounds[:, 0]
    return centre_u, lo + centre_u * span, lo + lo_u * span, lo + hi_u * span


def _project_lp(atoms_unit: FloatArray, target: FloatArray) -> tuple[float, FloatArray]:
    """Exact Euclidean W1 projection of a signed measure of total 1 (He 2026, §3 LP)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    m = atoms_unit.shape[0]
    if m == 1:  # a single leaf: the only probability measure on it, nothing to move
        return 0.0, np.ones(1)
    q, r = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    off = q != r
    q, r = q[off], r[off]
    cost = np.linalg.norm(atoms_unit[q] - atoms_unit[r], axis=1)
    n_var = q.shape[0]
    var = np.arange(n_var)
    # out_Q - in_Q <= target_Q keeps p_Q = target_Q - out_Q + in_Q nonnegative
    a_ub = coo_matrix(
        (np.r_[np.ones(n_var), -np.ones(n_var)], (np.r_[q, r], np.r_[var, var])), shape=(m, n_var)
    ).tocsr()
    res = linprog(cost, A_ub=a_ub, b_ub=target, bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"W1 projection LP failed: {res.message}")
    flow = res.x
    weights = (
        target
        - np.bincount(q, weights=flow, minlength=m)
        + np.bincount(r, weights=flow, minlength=m)
    )
    weights = np.maximum(weights, 0.0)
    return float(res.fun), weights / weights.sum()


def _release(
    tree: DyadicTree,
    leaf_counts: IntArray,
    *,
    eps_leaves: float,
    eps_total: float,
    bounds: FloatArray,
    shift: FloatArray | None,
    columns: tuple[str, ...],
    projection: Projection,
    rng: np.random.Generator,
    owner: str,
    privacy: str = "",
) -> tuple[SyntheticMeasure, float, bool]:
    """Integer noise on leaf counts, then projection to a probability measure."""
    m = leaf_counts.shape[0]
    noisy = leaf_counts + two_sided_geometric(eps_leaves, m, random_state=rng)
    centre_u, points, cell_lo, cell_hi = _representatives(tree, bounds)
    total = float(noisy.sum())
    degenerate = total <= 0
    if degenerate:
        weights, cost = np.full(m, 1.0 / m), float("nan")
    elif projection == "lp":
        if m > _LP_MAX_ATOMS:
            raise ProblemSizeError(
                f"{owner}: projection='lp' solves an LP with n_atoms**2 variables; the "
                f"released tree has {m} leaves (> {_LP_MAX_ATOMS}). Use projection='tree'."
            )
        cost, weights = _project_lp(centre_u, noisy / total)
    else:
        cost, kept = tree.cancel(noisy / total)
        weights = kept / kept.sum()
    measure = SyntheticMeasure(
        points=points,
        weights=weights,
        cell_lower=cell_lo,
        cell_upper=cell_hi,
        noisy_counts=noisy,
        tree=tree,
        bounds=bounds,
        shift=shift,
        columns=columns,
        eps=eps_total,
        projection=projection,
        projection_cost=cost,
        privacy=privacy,
    )
    return measure, cost, degenerate


def _check_common(
    eps: object, bounds: object, projection: object, clip: object, owner: str
) -> tuple[float, FloatArray]:
    eps = check_in_interval(eps, "eps", owner, 0.0, math.inf, low_open=True)
    bounds_arr = _check_bounds(bounds, owner)
    if projection not in ("tree", "lp"):
        raise ValueError(
            f"The 'projection' parameter of {owner} must be 'tree' or 'lp'. "
            f"Got {projection!r} instead."
        )
    if not isinstance(clip, bool):
        raise ValueError(f"The 'clip' parameter of {owner} must be a bool. Got {clip!r} instead.")
    return eps, bounds_arr


def privtree_synthesize(
    X: object,
    eps: float,
    bounds: object,
    *,
    random_shift: bool = True,
    projection: Projection = "tree",
    clip: bool = False,
    max_depth: int | None = None,
    random_state: RandomStateLike = None,
) -> tuple[SyntheticMeasure, PrivTreeDiagnostics]:
    r"""Release an eps-differentially private synthetic measure with PrivTree (He, 2026).

    The data are rescaled to :math:`[0,1]^d` by the public bounds. A PrivTree grows a
    cyclic binary partition (a depth-k cell is halved along coordinate k mod d), splitting
    a cell when its biased noisy count is positive; it refines where the data are and
    stays coarse elsewhere, so the error adapts to the intrinsic dimension of the data.
    The leaf counts then get integer noise and are projected to a probability measure on
    the leaf representatives.

    Use it to publish one synthetic data set that preserves every Lipschitz statistic.
    Cost: O(n_obs * depth) time with a Python loop over levels only; expected tree size
    O(eps * n_obs).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_obs, d)
        Private records.
    eps : float
        Total privacy budget, ``eps > 0``; half builds the tree, half the leaf counts.
    bounds : array-like of shape (d, 2)
        Public (low, high) of each coordinate. They must not depend on the data.
    random_shift : bool, default=True
        Shift the data by a public :math:`U \sim \mathrm{Unif}[0,1]^d` and partition
        :math:`[0,2]^d` (He, 2026, §6); cells missing the shifted window are dropped
        without noise.
    projection : {"tree", "lp"}, default="tree"
        ``"tree"``: exact W1 projection for the tree ultrametric, O(tree size).
        ``"lp"``: the paper's LP, the exact Euclidean W1 projection, for at most 400
        leaves (scipy's HiGHS).
    clip : bool, default=False
        Move records outside the bounds onto them (counted in the diagnostics) instead
        of raising.
    max_depth : int, optional
        Public cap on the depth of the tree; default and maximum ``52 * d`` (the float
        resolution). Cells at the cap become leaves, which keeps privacy and adds at
        most :math:`2\sqrt d\, 2^{-\lfloor\text{max\_depth}/d\rfloor}` resolution error.
    random_state : None, int, SeedSequence or Generator, default=None
        None draws fresh OS entropy (use it for real releases). An int or a
        ``SeedSequence`` issues :class:`SeedReleaseWarning`: the published shift is a
        function of the seed, so a guessed seed is confirmed and then replays the count
        noise.

    Returns
    -------
    measure : SyntheticMeasure
        The released measure (no raw data, no seed).
    diagnostics : PrivTreeDiagnostics
        Fit facts for the data holder; ``n_obs``, ``n_clipped`` and
        ``expected_leaves_bound`` (a function of ``n_obs``) are not private.

    Raises
    ------
    ValueError
        If ``eps <= 0``, the bounds are malformed or empty (d = 0), or the data are empty.
    OutOfSupportError
        If records lie outside the bounds and ``clip`` is False.
    DataMismatchError
        If the data do not have d columns or hold NaN.
    ProblemSizeError
        If ``projection="lp"`` and the tree has more than 400 leaves.

    Warns
    -----
    SeedReleaseWarning
        If ``random_state`` is an int or a ``SeedSequence``.

    See Also
    --------
    PrivTreeSynthesizer : the class interface.
    grid_synthesize : the uniform-grid baseline of He, Vershynin and Zhu.

    Notes
    -----
    **Tree** (Zhang, Xiao and Xie 2016; He 2026, §5.2). In mass units with
    :math:`p_Q = \mu_n(Q)`,

    .. math:: b(Q) = \max\{p_Q - \operatorname{depth}(Q)\,\delta,\ \theta - \delta\},
              \quad \text{split } Q \iff b(Q) + \mathrm{Lap}(\sigma) > \theta,

    with :math:`\theta = 0`, :math:`\sigma = 6/(\varepsilon n)`,
    :math:`\delta = \sigma\log 2`. Multiplying by n gives the same decisions on counts
    with :math:`\sigma_c = 6/\varepsilon`, :math:`\delta_c = \sigma_c \log 2`, which is how
    they are computed: n is never needed, and the tree is :math:`\varepsilon/2`-DP for
    add/remove-one neighbours by PrivTree's Corollary 1. The expected number of leaves is
    at most :math:`6 + \varepsilon n/(4\log 2)`.

    **Leaves** (He 2026, §3). Each record lies in one leaf, so the leaf count vector has
    L1 sensitivity 1 and :func:`two_sided_geometric` noise with parameter
    :math:`e^{-\varepsilon/2}` (the integer version of :math:`\mathrm{Lap}(2/\varepsilon)`
    on counts, i.e. :math:`\mathrm{Lap}(2/(\varepsilon n))` on masses) is
    :math:`\varepsilon/2`-DP. Sequential composition gives :math:`\varepsilon`-DP.

    **Projection.** Let :math:`\tilde\nu = \sum_Q (\tilde c_Q / \tilde N) \delta_{y_Q}`,
    :math:`\tilde N = \sum_Q \tilde c_Q`, the signed noisy measure of total one (post-
    processing, no use of n). ``"tree"`` returns

    .. math:: \hat\nu = \arg\min_{\nu \ge 0,\ \nu(\Omega) = 1} W_{1,T}(\nu, \tilde\nu),
              \qquad d_T(Q, R) = \operatorname{diam}(Q \wedge R),

    the exact projection in the ultrametric of the tree (diameter of the smallest common
    cell, intersected with the window): bottom-up, every cell cancels as much positive
    against negative mass of its subtree as possible. Since :math:`d_T` dominates the
    Euclidean distance and the oracle :math:`\nu_T` (exact leaf masses) is feasible,

    .. math:: W_1(\hat\nu, \tilde\nu) \le W_{1,T}(\hat\nu, \tilde\nu)
              = \texttt{projection\_cost} \le W_{1,T}(\nu_T, \tilde\nu),

    so :math:`W_{1,T}(\hat\nu, \nu_T) \le 2 W_{1,T}(\tilde\nu, \nu_T)`: the projection at
    most doubles the (tree-metric) privacy error. ``"lp"`` minimises the Euclidean
    :math:`W_1(\nu, \tilde\nu)` exactly; with total one the paper's constraint
    :math:`|f| \le d` is inactive. If :math:`\tilde N \le 0` the weights are uniform and
    ``diagnostics.degenerate`` is True.

    The split decisions use continuous Laplace draws from numpy; the leaf counts use
    integer noise, which avoids the floating-point attack on released values.

    References
    ----------
    Y. He, "Intrinsic-dimensional Wasserstein guarantees for private synthetic
    measures" (He, 2026). J. Zhang, X. Xiao and X. Xie, "PrivTree: a differentially
    private algorithm for hierarchical decompositions", SIGMOD 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from privinfer.transport.privtree import privtree_synthesize
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(size=2000)
    >>> x = np.c_[t, t**2, 0.5 + 0.0 * t]  # a curve in d = 3
    >>> nu, diag = privtree_synthesize(x, 1.0, [(0, 1)] * 3, random_state=0)
    >>> bool(np.isclose(nu.weights.sum(), 1.0))
    True
    """
    owner = "privtree_synthesize"
    eps, bounds_arr = _check_common(eps, bounds, projection, clip, owner)
    if not isinstance(random_shift, bool):
        raise ValueError(
            f"The 'random_shift' parameter of {owner} must be a bool. Got {random_shift!r}."
        )
    d = bounds_arr.shape[0]
    depth_cap = _BITS * d
    max_depth = depth_cap if max_depth is None else check_int(max_depth, "max_depth", owner, 0)
    if max_depth > depth_cap:
        raise ValueError(
            f"The 'max_depth' parameter of {owner} must be at most 52 * d = {depth_cap}. "
            f"Got {max_depth}."
        )
    unit, n_clipped, columns = _prepare(X, bounds_arr, clip, owner)
    warn_if_seeded(random_state, owner)
    rng_shift, rng_tree, rng_leaves = spawn_generators(random_state, 3)
    window_lo, window_hi = _window(d, random_shift, rng_shift)
    shift = (
        (window_lo.astype(float) / float(np.int64(1) << np.int64(_BITS - 1)))
        if random_shift
        else None
    )

    eps_tree = eps / 2.0
    sigma = (2 * _FANOUT - 1) / (_FANOUT - 1) / eps_tree  # = 6 / eps
    delta = sigma * math.log(_FANOUT)

    def decide(k: int, counts: IntArray) -> BoolArray:
        biased = np.maximum(counts - k * delta, _THETA - delta)
        return biased + rng_tree.laplace(0.0, sigma, counts.shape[0]) > _THETA

    grid = window_lo + np.floor(unit * (window_hi - window_lo)).astype(np.int64)
    grid = np.minimum(grid, window_hi - 1)
    tree, leaf_counts, _ = grow_tree(grid, window_lo, window_hi, max_depth=max_depth, decide=decide)
    measure, cost, degenerate = _release(
        tree,
        leaf_counts,
        eps_leaves=eps - eps_tree,
        eps_total=eps,
        bounds=bounds_arr,
        shift=shift,
        columns=columns,
        projection=projection,
        rng=rng_leaves,
        owner=owner,
        privacy=(f"({eps:.4g}, 0)-DP for add/remove-one-record neighbours: PrivTree "
                 f"partition (eps/2) and integer-noised leaf counts (eps/2); bounds"
                 f"{', depth cap' if max_depth < depth_cap else ''} and shift public."),
    )
    n_obs = unit.shape[0]
    diagnostics = PrivTreeDiagnostics(
        n_obs=n_obs,
        n_clipped=n_clipped,
        n_leaves=tree.n_leaves,
        n_nodes=tree.n_nodes,
        depth=len(tree.levels) - 1,
        n_discarded=tree.n_discarded,
        expected_leaves_bound=6.0 + eps * n_obs / (4.0 * math.log(2.0)),
        projection_cost=cost,
        degenerate=degenerate,
    )
    return measure, diagnostics


def grid_synthesize(
    X: object,
    eps: float,
    bounds: object,
    *,
    depth: int | None = None,
    n_bound: int | None = None,
    projection: Projection = "tree",
    clip: bool = False,
    random_state: RandomStateLike = None,
) -> tuple[SyntheticMeasure, PrivTreeDiagnostics]:
    r"""Uniform-grid private synthetic measure (He, Vershynin and Zhu 2023), a baseline.

    The cube is cut into the :math:`2^L` cells of the cyclic binary partition at a fixed
    depth L; every cell count gets integer noise with the whole budget, and the signed
    measure is projected as in :func:`privtree_synthesize`. The partition ignores the
    data, so its error follows the ambient dimension. O(n_obs * L + 2^L).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_obs, d)
        Private records.
    eps : float
        Privacy budget, ``eps > 0``, all spent on the cell counts.
    bounds : array-like of shape (d, 2)
        Public (low, high) of each coordinate.
    depth : int, optional
        Public depth L. Give either ``depth`` or ``n_bound``; the depth must not be
        computed from the private number of records.
    n_bound : int, optional
        Public bound on the number of records; the depth is then
        ``ceil(log2(eps * n_bound))`` (at least 1), the choice of He, Vershynin and Zhu
        with a public n.
    projection : {"tree", "lp"}, default="tree"
    clip : bool, default=False
    random_state : None, int, SeedSequence or Generator, default=None
        None draws fresh OS entropy. An int or a ``SeedSequence`` issues
        :class:`SeedReleaseWarning`.

    Returns
    -------
    measure : SyntheticMeasure
    diagnostics : PrivTreeDiagnostics

    Raises
    ------
    ValueError
        For the same bad inputs as :func:`privtree_synthesize`, a depth above 52 * d, or
        neither (or both) of ``depth`` and ``n_bound``.
    ProblemSizeError
        If the grid would have more than ``2**24`` cells (a depth above 24, e.g. from an
        ``n_bound`` above ``2**24 / eps``).

    See Also
    --------
    privtree_synthesize : the adaptive construction.

    Notes
    -----
    The partition depends only on the public depth (or public bound on n), so only the
    counts cost privacy: :math:`\varepsilon`-DP for add/remove neighbours. A default
    depth :math:`\lceil\log_2(\varepsilon n)\rceil` computed from the private n would
    publish n's binary order of magnitude through the number of atoms (n = 1024 gives
    1024 atoms at eps = 1, n = 1025 gives 2048), so it is not offered.

    Without logarithmic factors the error is of order :math:`(\varepsilon n)^{-1/d}`
    for :math:`d \ge 3` whatever the intrinsic dimension of the data.

    Examples
    --------
    >>> import numpy as np
    >>> from privinfer.transport.privtree import grid_synthesize
    >>> x = np.random.default_rng(0).uniform(size=(1000, 2))
    >>> nu, _ = grid_synthesize(x, 1.0, [(0, 1), (0, 1)], depth=6, random_state=0)
    >>> nu.n_atoms
    64
    """
    owner = "grid_synthesize"
    eps, bounds_arr = _check_common(eps, bounds, projection, clip, owner)
    d = bounds_arr.shape[0]
    if (depth is None) == (n_bound is None):
        raise ValueError(
            f"{owner} needs exactly one of a public 'depth' or a public bound 'n_bound' "
            f"on the number of records (got depth={depth!r}, n_bound={n_bound!r}); a "
            "depth computed from the private n would leak it through the number of atoms."
        )
    if n_bound is not None:
        n_pub = check_int(n_bound, "n_bound", owner, 1)
        depth = max(1, math.ceil(math.log2(max(eps * n_pub, 2.0))))
    depth = check_int(depth, "depth", owner, 0)
    if depth <= _BITS * d and 2**depth > _GRID_MAX_CELLS:
        raise ProblemSizeError(
            f"{owner}: a grid of depth {depth} has 2**{depth} = {2**depth:.3g} cells "
            f"(more than {_GRID_MAX_CELLS:.3g}, depth "
            f"{_GRID_MAX_CELLS.bit_length() - 1}), which does not fit in memory"
            + (f" (the depth comes from n_bound = {n_bound})" if n_bound is not None else "")
            + ". Pass a smaller public 'depth', or use privtree_synthesize, whose tree "
            "grows only where the data are."
        )
    unit, n_clipped, columns = _prepare(X, bounds_arr, clip, owner)
    n_obs = unit.shape[0]
    warn_if_seeded(random_state, owner)
    if depth > _BITS * d:
        raise ValueError(
            f"The 'depth' parameter of {owner} must be at most 52 * d = {_BITS * d}. Got {depth}."
        )
    rng = check_random_state(random_state)
    window_lo, window_hi = _window(d, False, rng)
    grid = np.minimum(np.floor(unit * (window_hi - window_lo)).astype(np.int64), window_hi - 1)
    tree, leaf_counts, _ = grow_tree(
        grid,
        window_lo,
        window_hi,
        max_depth=depth,
        decide=lambda k, counts: np.ones(counts.shape[0], dtype=bool),
    )
    measure, cost, degenerate = _release(
        tree,
        leaf_counts,
        eps_leaves=eps,
        eps_total=eps,
        bounds=bounds_arr,
        shift=None,
        columns=columns,
        projection=projection,
        rng=rng,
        owner=owner,
        privacy=(f"({eps:.4g}, 0)-DP for add/remove-one-record neighbours: integer-noised "
                 f"counts of a fixed grid of public depth {depth}"
                 f"{f' (from the public bound n <= {n_bound})' if n_bound is not None else ''}"
                 "; bounds public."),
    )
    diagnostics = PrivTreeDiagnostics(
        n_obs=n_obs,
        n_clipped=n_clipped,
        n_leaves=tree.n_leaves,
        n_nodes=tree.n_nodes,
        depth=depth,
        n_discarded=0,
        expected_leaves_bound=float(2**depth),
        projection_cost=cost,
        degenerate=degenerate,
    )
    return measure, diagnostics


class PrivTreeSynthesizer:
    r"""PrivTree synthesizer: an eps-DP synthetic measure with W1 guarantees (He, 2026).

    Fits a data-adaptive cyclic binary partition with PrivTree, adds integer noise to the
    leaf counts and projects them to a probability measure; ``measure_`` is the released
    :class:`~privinfer.transport.measures.SyntheticMeasure`. Hyperparameters are stored
    unchanged and validated in :meth:`fit`; no raw data are kept.

    Use it to publish one reusable synthetic data set whose W1 error scales with the
    intrinsic dimension s of the data, :math:`(\log(\varepsilon n)/(\varepsilon n))^{1/s}`
    for s > 2. Fitting costs O(n_obs * depth).

    Parameters
    ----------
    eps : float
        Total privacy budget, ``eps > 0`` (add/remove-one neighbours).
    bounds : array-like of shape (d, 2)
        Public (low, high) of each coordinate.
    random_shift : bool, default=True
        Public random shift of the partition (He, 2026, §6).
    projection : {"tree", "lp"}, default="tree"
        Exact W1 projection for the tree ultrametric, or the paper's Euclidean LP
        (at most 400 leaves).
    clip : bool, default=False
        Clip records outside the bounds (counted in ``diagnostics_.n_clipped``) instead
        of raising.
    max_depth : int, optional
        Public cap on the tree depth; default ``52 * d``.
    random_state : None, int, SeedSequence or Generator, default=None
        None draws fresh OS entropy; a seed is for reproducible research only and issues
        :class:`SeedReleaseWarning`. A pickled synthesizer drops the seed.

    Attributes
    ----------
    measure_ : SyntheticMeasure
        The released synthetic measure.
    diagnostics_ : PrivTreeDiagnostics
        Fit facts for the data holder (``n_obs``, ``n_clipped`` and
        ``expected_leaves_bound`` are not private). A pickled synthesizer is treated as
        shareable: its copy keeps only the facts read off the release (leaves, nodes,
        depth, projection cost) and has None for these three.

    See Also
    --------
    privtree_synthesize : the functional core, with the full Notes.
    grid_synthesize : the uniform-grid baseline.

    Notes
    -----
    Tree: :math:`b(Q) = \max\{p_Q - \operatorname{depth}(Q)\delta, \theta - \delta\}`,
    split iff :math:`b(Q) + \mathrm{Lap}(\sigma) > \theta`, :math:`\theta = 0`,
    :math:`\sigma = 6/(\varepsilon n)`, :math:`\delta = \sigma \log 2`
    (:math:`\varepsilon/2`). Leaves: two-sided geometric noise on counts
    (:math:`\varepsilon/2`). He (2026), Theorem 5.9: with intrinsic dimension s > 2,

    .. math:: \mathbb E\, W_1(\mu_n, \hat\nu) \le C_s d
              \Big(\frac{A d \log(\varepsilon n)}{\varepsilon n}\Big)^{1/s}.

    Examples
    --------
    >>> import numpy as np
    >>> from privinfer.transport.privtree import PrivTreeSynthesizer
    >>> x = np.random.default_rng(0).normal(0.5, 0.1, size=(5000, 2)).clip(0, 1)
    >>> synth = PrivTreeSynthesizer(1.0, [(0, 1), (0, 1)], random_state=0).fit(x)
    >>> synth.sample(2, random_state=0).shape
    (2, 2)
    >>> bool(synth.measure_.wasserstein(x) < 0.1)
    True
    """

    def __init__(
        self,
        eps: float,
        bounds: object,
        *,
        random_shift: bool = True,
        projection: Projection = "tree",
        clip: bool = False,
        max_depth: int | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.eps = eps
        self.bounds = bounds
        self.random_shift = random_shift
        self.projection = projection
        self.clip = clip
        self.max_depth = max_depth
        self.random_state = random_state

    def __getstate__(self) -> dict[str, object]:
        # a seed must not travel with the fitted (shareable) object: with the public
        # shift it identifies the seed, which replays the noise of the counts
        state = self.__dict__.copy()
        state["random_state"] = None
        # nor may the exact counts of the private data (expected_leaves_bound is a
        # function of n_obs and the public eps)
        if "diagnostics_" in state:
            state["diagnostics_"] = dataclasses.replace(
                self.diagnostics_, n_obs=None, n_clipped=None, expected_leaves_bound=None
            )
        return state

    def fit(self, X: object) -> PrivTreeSynthesizer:
        """Release the synthetic measure of ``X``; see :func:`privtree_synthesize`.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_obs, d)

        Returns
        -------
        self
        """
        self.measure_, self.diagnostics_ = privtree_synthesize(
            X,
            self.eps,
            self.bounds,
            random_shift=self.random_shift,
            projection=self.projection,
            clip=self.clip,
            max_depth=self.max_depth,
            random_state=self.random_state,
        )
        return self

    def sample(self, n: int, random_state: RandomStateLike = None) -> FloatArray:
        """Draw ``n`` points from the fitted measure; see :meth:`SyntheticMeasure.sample`."""
        if not hasattr(self, "measure_"):
            raise NotFittedError("PrivTreeSynthesizer.sample: call fit(X) first.")
        return self.measure_.sample(n, random_state=random_state)
