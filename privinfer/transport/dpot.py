r"""Differentially private optimal transport (DPOT, seed 000 Algorithm 1).

The source party projects its rows with a public Johnson-Lindenstrauss matrix
:math:`M \sim N(0, 1/\ell)^{k\times\ell}` and adds Gaussian noise; it publishes only
:math:`(M, X_s M + \Delta)`. The target party builds the debiased squared-Euclidean cost
to its own projected rows :math:`X_t M` and solves optimal transport with POT.

The module is a functional core (:func:`draw_projection`, :func:`publish_rows`,
:func:`debiased_cost`, :func:`solve_transport`, :func:`dpot`, :func:`dpot_minibatch`)
and two thin sklearn-like classes: :class:`DPOTSource` (source side) and :class:`DPOT`
(target side). No object of this module ever stores the raw source rows.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy.optimize import brentq

from privinfer._typing import FloatArray, RandomStateLike
from privinfer._validation import (
    check_in_interval,
    check_int,
    check_no_nan,
    check_random_state,
    spawn_generators,
)
from privinfer.exceptions import (
    DataMismatchError,
    TransportConvergenceError,
    TransportConvergenceWarning,
)
from privinfer.transport._pot import import_ot
from privinfer.transport.accounting import (
    NeighbourRelation,
    PrivacyStatement,
    _check_relation,
    minibatch_privacy,
)
from privinfer.transport.calibration import (
    analytic_gaussian_sigma,
    max_row_norm,
    record_sensitivity,
    theorem2_sigma,
)

__all__ = [
    "DPOT",
    "DPOTResult",
    "DPOTSource",
    "MinibatchDPOTResult",
    "PublishedMinibatches",
    "PublishedSource",
    "debiased_cost",
    "dpot",
    "dpot_minibatch",
    "draw_projection",
    "publish_rows",
    "solve_transport",
]

Method = Literal["emd", "sinkhorn"]


# ----------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PublishedSource:
    r"""What the source party publishes: the projection and the noisy projected rows.

    It holds nothing else; in particular never the raw source rows :math:`X_s`.

    Attributes
    ----------
    projection : ndarray of shape (n_features, ell)
        The public matrix :math:`M`.
    rows : ndarray of shape (n_source, ell)
        :math:`Z_s = X_s M + \Delta` (rows clipped first under the ``"record"`` relation).
    sigma : float
        Standard deviation of every entry of :math:`\Delta`.
    privacy : PrivacyStatement
        The guarantee of this publication.

    Examples
    --------
    >>> Xs = np.random.default_rng(0).normal(size=(30, 5))
    >>> pub = DPOTSource(eps=5.0, delta=1e-3, ell=50, random_state=1).publish(Xs)
    >>> pub.n_samples, pub.n_features, pub.ell
    (30, 5, 50)
    >>> pub.rows.shape, pub.projection.shape
    ((30, 50), (5, 50))
    >>> bool(pub.sigma > 0), pub.privacy.eps, pub.privacy.neighbour
    (True, 5.0, 'entry')
    """

    projection: FloatArray
    rows: FloatArray
    sigma: float
    privacy: PrivacyStatement

    @property
    def ell(self) -> int:
        r"""Projection dimension :math:`\ell`."""
        return int(self.projection.shape[1])

    @property
    def n_features(self) -> int:
        """Number of original features :math:`k`."""
        return int(self.projection.shape[0])

    @property
    def n_samples(self) -> int:
        """Number of published source rows."""
        return int(self.rows.shape[0])


@dataclass(frozen=True, eq=False)
class PublishedMinibatches:
    """A sequence of Poisson-sampled minibatch publications sharing one projection.

    Attributes
    ----------
    batches : tuple of PublishedSource
        One publication per step (rows in random order; a batch may be empty).
    sampling_probability : float
        Poisson rate :math:`q` of a source row in a step.
    privacy : PrivacyStatement
        Guarantee of the whole sequence (PLD composition in ``dp_accounting``).

    Examples
    --------
    Four Poisson-sampled batches of 50 expected rows out of 200, within eps = 1 in total:

    >>> Xs = np.random.default_rng(0).normal(size=(200, 5))
    >>> src = DPOTSource(eps=1.0, delta=1e-3, ell=20, random_state=1)
    >>> pubs = src.publish_minibatches(Xs, batch_size=50, n_batches=4)
    >>> len(pubs.batches), pubs.sampling_probability
    (4, 0.25)
    >>> [batch.n_samples for batch in pubs.batches]  # random sizes around 50
    [47, 48, 47, 44]
    >>> bool(pubs.privacy.eps <= 1.0), all(b.privacy is pubs.privacy for b in pubs.batches)
    (True, True)
    """

    batches: tuple[PublishedSource, ...]
    sampling_probability: float
    privacy: PrivacyStatement


@dataclass(frozen=True, eq=False)
class DPOTResult:
    r"""Outcome of one DPOT solve (seed 000, Algorithm 1, steps 3-4).

    Attributes
    ----------
    plan : ndarray of shape (n_source, n_target)
        The coupling :math:`\tilde\gamma_0`.
    cost : ndarray of shape (n_source, n_target)
        The debiased cost :math:`\tilde C = \lVert Z_s - X_t M\rVert^2 - \ell\sigma^2`.
    w_tilde : float
        :math:`\tilde W = \langle \tilde\gamma_0, \tilde C\rangle`, the private estimate
        of the squared-Euclidean (2-Wasserstein squared) transport cost.
    privacy : PrivacyStatement
        The guarantee of the publication the result was computed from.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(30, 5)), rng.normal(1.0, 1.0, size=(40, 5))
    >>> pub = DPOTSource(eps=5.0, delta=1e-3, ell=50, random_state=1).publish(Xs)
    >>> res = dpot(pub, Xt)
    >>> res.plan.shape, res.cost.shape
    ((30, 40), (30, 40))
    >>> bool(np.allclose(res.plan.sum(axis=1), 1 / 30))  # uniform source marginal
    True
    >>> bool(np.allclose(res.plan.sum(axis=0), 1 / 40))  # uniform target marginal
    True
    >>> bool(np.isclose(res.w_tilde, np.sum(res.plan * res.cost))), res.privacy is pub.privacy
    (True, True)
    """

    plan: FloatArray
    cost: FloatArray
    w_tilde: float
    privacy: PrivacyStatement


@dataclass(frozen=True, eq=False)
class MinibatchDPOTResult:
    r"""Outcome of minibatch DPOT: one solve per published minibatch.

    Attributes
    ----------
    w_tilde : float
        Mean of the per-batch :math:`\tilde W` (non-empty batches only).
    batch_w_tilde : ndarray of shape (n_used_batches,)
        The per-batch estimates.
    privacy : PrivacyStatement
        Guarantee of the whole sequence of publications.
    diagnostics : dict
        ``n_empty_batches`` (batches skipped because the Poisson sample was empty).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(200, 5)), rng.normal(1.0, 1.0, size=(200, 5))
    >>> src = DPOTSource(eps=1.0, delta=1e-3, ell=20, random_state=1)
    >>> pubs = src.publish_minibatches(Xs, batch_size=50, n_batches=4)
    >>> res = dpot_minibatch(pubs, Xt, random_state=2)
    >>> res.batch_w_tilde.shape, res.diagnostics
    ((4,), {'n_empty_batches': 0})
    >>> bool(np.isclose(res.w_tilde, res.batch_w_tilde.mean())), res.privacy is pubs.privacy
    (True, True)
    """

    w_tilde: float
    batch_w_tilde: FloatArray
    privacy: PrivacyStatement
    diagnostics: dict[str, int] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------
# Functional core
# ----------------------------------------------------------------------------------------
def _as_matrix(X: object, name: str, owner: str) -> FloatArray:
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataMismatchError(
            f"{owner}: {name!r} must be a numeric 2-D array of shape (n_samples, n_features); "
            f"got {type(X).__name__} that does not convert to float ({exc})."
        ) from exc
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise DataMismatchError(
            f"{owner}: {name!r} must be a non-empty 2-D array of shape (n_samples, "
            f"n_features). Got shape {arr.shape}."
        )
    check_no_nan(arr, name, owner)
    return arr


def draw_projection(
    n_features: int, ell: int, random_state: RandomStateLike = None
) -> FloatArray:
    r"""Draw the Johnson-Lindenstrauss matrix :math:`M \sim N(0, 1/\ell)^{k\times\ell}`.

    Entries are i.i.d. with **variance** :math:`1/\ell`, so
    :math:`E\lVert xM\rVert^2 = \lVert x\rVert^2` and row norms concentrate around 1.
    Cost O(k l).

    Parameters
    ----------
    n_features : int
        Number :math:`k \ge 1` of original features.
    ell : int
        Projection dimension :math:`\ell \ge 1`.
    random_state : int, SeedSequence, Generator or None, default=None
        Source of randomness; None draws fresh OS entropy.

    Returns
    -------
    ndarray of shape (n_features, ell)
        The projection matrix.

    Raises
    ------
    ValueError
        If ``n_features < 1`` or ``ell < 1``.

    Examples
    --------
    >>> M = draw_projection(5, 3, random_state=0)
    >>> M.shape
    (5, 3)
    """
    k = check_int(n_features, "n_features", "draw_projection", 1)
    ell_i = check_int(ell, "ell", "draw_projection", 1)
    rng = check_random_state(random_state)
    return rng.normal(0.0, 1.0 / np.sqrt(ell_i), size=(k, ell_i))


def publish_rows(
    Xs: FloatArray, M: FloatArray, sigma: float, random_state: RandomStateLike = None
) -> FloatArray:
    r"""Noisy projected source rows :math:`X_s M + \Delta`, :math:`\Delta\sim N(0,\sigma^2)`.

    This is step 2 of seed 000, Algorithm 1. The caller is responsible for calibrating
    ``sigma`` (see :mod:`privinfer.transport.calibration`) and for clipping rows under the
    ``"record"`` relation; :class:`DPOTSource` does both. Cost O(n k l).

    Parameters
    ----------
    Xs : ndarray of shape (n_source, n_features)
        Source rows.
    M : ndarray of shape (n_features, ell)
        Projection matrix.
    sigma : float
        Noise standard deviation (``0`` gives the non-private projection).
    random_state : int, SeedSequence, Generator or None, default=None
        Source of the noise; None draws fresh OS entropy.

    Returns
    -------
    ndarray of shape (n_source, ell)
        The rows to publish.

    Raises
    ------
    DataMismatchError
        If ``Xs`` and ``M`` have different numbers of features.
    ValueError
        If ``sigma`` is negative.

    Examples
    --------
    >>> import numpy as np
    >>> M = draw_projection(4, 2, random_state=0)
    >>> publish_rows(np.ones((3, 4)), M, sigma=1.0, random_state=1).shape
    (3, 2)
    """
    owner = "publish_rows"
    X = _as_matrix(Xs, "Xs", owner)
    M_arr = _as_matrix(M, "M", owner)
    if X.shape[1] != M_arr.shape[0]:
        raise DataMismatchError(
            f"{owner}: Xs has {X.shape[1]} features but M has {M_arr.shape[0]} rows."
        )
    s = check_in_interval(sigma, "sigma", owner, 0.0, np.inf, high_open=True)
    rng = check_random_state(random_state)
    return X @ M_arr + rng.normal(0.0, s, size=(X.shape[0], M_arr.shape[1]))


def debiased_cost(Zs: FloatArray, Xt: FloatArray, M: FloatArray, sigma: float) -> FloatArray:
    r"""Debiased squared-Euclidean cost between published rows and projected targets.

    Step 3 of seed 000, Algorithm 1. Each entry is unbiased for the projected squared
    distance (over :math:`\Delta`), hence for the original squared distance (over
    :math:`M` and :math:`\Delta`). Entries can be negative. Cost O(n m l).

    Parameters
    ----------
    Zs : ndarray of shape (n_source, ell)
        Published rows :math:`X_s M + \Delta`.
    Xt : ndarray of shape (n_target, n_features)
        Target rows (held by the target party).
    M : ndarray of shape (n_features, ell)
        The published projection.
    sigma : float
        Noise standard deviation of the publication.

    Returns
    -------
    ndarray of shape (n_source, n_target)
        :math:`\tilde C`.

    Raises
    ------
    DataMismatchError
        If the dimensions of ``Zs``, ``Xt`` and ``M`` do not match.

    Notes
    -----
    .. math:: \tilde C_{ij} = \lVert z_i - x^t_j M\rVert_2^2 - \ell\sigma^2,\qquad
              E_\Delta \tilde C_{ij} = \lVert (x^s_i - x^t_j) M\rVert_2^2,\qquad
              E_{M,\Delta}\tilde C_{ij} = \lVert x^s_i - x^t_j\rVert_2^2 .

    Examples
    --------
    >>> import numpy as np
    >>> M = np.eye(2)
    >>> debiased_cost(np.zeros((1, 2)), np.ones((1, 2)), M, sigma=0.5)
    array([[1.5]])
    """
    owner = "debiased_cost"
    Z = _as_matrix(Zs, "Zs", owner)
    T = _as_matrix(Xt, "Xt", owner)
    M_arr = _as_matrix(M, "M", owner)
    if T.shape[1] != M_arr.shape[0]:
        raise DataMismatchError(
            f"{owner}: Xt has {T.shape[1]} features but the projection M has "
            f"{M_arr.shape[0]} rows; source and target must share the feature space."
        )
    if Z.shape[1] != M_arr.shape[1]:
        raise DataMismatchError(
            f"{owner}: the published rows have {Z.shape[1]} columns but M has "
            f"{M_arr.shape[1]} (ell)."
        )
    s = check_in_interval(sigma, "sigma", owner, 0.0, np.inf, high_open=True)
    ot = import_ot()
    C = ot.dist(Z, T @ M_arr, metric="sqeuclidean")
    C -= M_arr.shape[1] * s**2
    return C


def _emd_max_iter(n: int, m: int) -> int:
    return int(max(100_000, 50 * n * m))


def solve_transport(
    C: FloatArray,
    a: FloatArray | None = None,
    b: FloatArray | None = None,
    *,
    method: Method = "emd",
    reg: float | None = None,
    max_iter: int | None = None,
) -> FloatArray:
    r"""Optimal plan for a cost matrix with POT (``ot.emd`` or ``ot.sinkhorn``).

    The exact solver is POT's network simplex with an iteration cap raised to
    ``max(1e5, 50 n m)``; reaching the cap raises instead of returning a non-optimal
    plan. The entropic solver is ``ot.sinkhorn(method="sinkhorn")`` on the cost shifted
    to a zero minimum (the plan is unchanged by a constant shift; the shift prevents
    overflow in :math:`e^{-C/\mathrm{reg}}` for debiased costs).

    Parameters
    ----------
    C : ndarray of shape (n_source, n_target)
        Cost matrix.
    a, b : ndarray of shape (n_source,) / (n_target,), default=None
        Marginal weights; None means uniform.
    method : {"emd", "sinkhorn"}, default="emd"
        Exact or entropic transport.
    reg : float or None, default=None
        Entropic regularisation (in units of the cost), required for ``"sinkhorn"``.
    max_iter : int or None, default=None
        Iteration cap; None uses ``max(1e5, 50 n m)`` for EMD and 1000 for Sinkhorn.

    Returns
    -------
    ndarray of shape (n_source, n_target)
        The transport plan.

    Raises
    ------
    TransportConvergenceError
        If the network simplex stops before optimality.
    ValueError
        For an unknown ``method`` or a missing/non-positive ``reg``.

    Warns
    -----
    TransportConvergenceWarning
        If Sinkhorn stops before its threshold.

    Examples
    --------
    >>> import numpy as np
    >>> solve_transport(np.array([[0.0, 1.0], [1.0, 0.0]]))
    array([[0.5, 0. ],
           [0. , 0.5]])
    """
    owner = "solve_transport"
    C_arr = np.ascontiguousarray(C, dtype=float)
    n, m = C_arr.shape
    a_arr = np.full(n, 1.0 / n) if a is None else np.asarray(a, dtype=float)
    b_arr = np.full(m, 1.0 / m) if b is None else np.asarray(b, dtype=float)
    ot = import_ot()
    if method == "emd":
        n_iter = _emd_max_iter(n, m) if max_iter is None else check_int(
            max_iter, "max_iter", owner, 1)
        if n == 1 or m == 1:
            return np.outer(a_arr, b_arr)  # the only coupling
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*numItermax.*")
            # shifted to be >= 0 (the optimal plan is unchanged: the marginals are fixed);
            # POT's network simplex reports all-negative cost matrices, which the debiased
            # cost can be, as "infeasible"
            plan, log = ot.emd(a_arr, b_arr, C_arr - C_arr.min(), numItermax=n_iter, log=True)
        if log.get("result_code", 1) != 1:
            raise TransportConvergenceError(
                f"{owner}: ot.emd stopped before optimality ({log.get('warning')!r}) "
                f"with max_iter={n_iter}. Increase max_iter."
            )
        return plan
    if method == "sinkhorn":
        if reg is None:
            raise ValueError(f"{owner}: method='sinkhorn' needs 'reg' > 0. Got None.")
        reg_f = check_in_interval(reg, "reg", owner, 0.0, np.inf, low_open=True,
                                  high_open=True)
        n_iter = 1000 if max_iter is None else check_int(max_iter, "max_iter", owner, 1)
        if n == 1 or m == 1:
            return np.outer(a_arr, b_arr)  # the only coupling
        stop_thr = 1e-9
        plan, log = ot.sinkhorn(a_arr, b_arr, C_arr - C_arr.min(), reg_f, method="sinkhorn",
                                numItermax=n_iter, stopThr=stop_thr, log=True, warn=False)
        errs = log.get("err", [])
        if not np.all(np.isfinite(plan)):
            raise TransportConvergenceError(
                f"{owner}: Sinkhorn produced non-finite values; increase 'reg' "
                f"(got {reg_f}) relative to the cost range {np.ptp(C_arr):.4g}."
            )
        if len(errs) and errs[-1] > stop_thr:
            warnings.warn(
                f"{owner}: Sinkhorn stopped after {n_iter} iterations with marginal error "
                f"{errs[-1]:.3g} > {stop_thr}; increase max_iter or reg.",
                TransportConvergenceWarning,
                stacklevel=2,
            )
        return plan
    raise ValueError(
        f"The 'method' parameter of {owner} must be 'emd' or 'sinkhorn'. Got {method!r}."
    )


def dpot(
    published: PublishedSource,
    Xt: FloatArray,
    *,
    method: Method = "emd",
    reg: float | None = None,
    max_iter: int | None = None,
) -> DPOTResult:
    r"""Target side of DPOT: debiased cost, transport plan and :math:`\tilde W`.

    Steps 3-4 of seed 000, Algorithm 1, on a :class:`PublishedSource`. Uniform weights on
    the published rows and on the target rows. Cost: the POT solve (``ot.emd`` is
    roughly O(n^3) in practice) plus O(n m l) for the cost.

    Parameters
    ----------
    published : PublishedSource
        What the source party published.
    Xt : ndarray of shape (n_target, n_features)
        Target rows.
    method : {"emd", "sinkhorn"}, default="emd"
        Exact or entropic transport.
    reg : float or None, default=None
        Entropic regularisation in units of the cost (``"sinkhorn"`` only).
    max_iter : int or None, default=None
        Iteration cap of the solver (see :func:`solve_transport`).

    Returns
    -------
    DPOTResult
        ``plan``, ``cost``, ``w_tilde`` and ``privacy``.

    Raises
    ------
    DataMismatchError
        If ``Xt`` does not have the source's number of features.
    TypeError
        If ``published`` is not a :class:`PublishedSource`.

    See Also
    --------
    DPOT : the same as an estimator with fitted attributes.

    Notes
    -----
    .. math:: \tilde\gamma_0 = \arg\min_{\gamma\in\Pi(a,b)}\langle\gamma,\tilde C\rangle,
              \qquad \tilde W = \langle \tilde\gamma_0, \tilde C\rangle .

    Subtracting :math:`\ell\sigma^2` from every entry changes
    :math:`\langle\gamma,\tilde C\rangle` by the same constant for every coupling, so the
    exact plan is the plan for the uncorrected noisy cost.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(30, 5)), rng.normal(1.0, 1.0, size=(40, 5))
    >>> pub = DPOTSource(eps=5.0, delta=1e-3, ell=50, random_state=1).publish(Xs)
    >>> res = dpot(pub, Xt)
    >>> res.plan.shape
    (30, 40)
    """
    if not isinstance(published, PublishedSource):
        raise TypeError(
            f"dpot: 'published' must be a PublishedSource (from DPOTSource.publish). "
            f"Got {type(published).__name__}."
        )
    C = debiased_cost(published.rows, Xt, published.projection, published.sigma)
    plan = solve_transport(C, method=method, reg=reg, max_iter=max_iter)
    return DPOTResult(plan=plan, cost=C, w_tilde=float(np.sum(plan * C)),
                      privacy=published.privacy)


def dpot_minibatch(
    published: PublishedMinibatches,
    Xt: FloatArray,
    *,
    target_batch_size: int | None = None,
    method: Method = "emd",
    reg: float | None = None,
    random_state: RandomStateLike = None,
) -> MinibatchDPOTResult:
    r"""Minibatch DPOT: pair each published batch with a random target batch and average.

    The estimate targets the minibatch transport cost (the mean of batch-to-batch
    transport costs), not the full-data :math:`W`; use it when the budget only allows
    Poisson-sampled publications. Cost: one POT solve per batch.

    Parameters
    ----------
    published : PublishedMinibatches
        From :meth:`DPOTSource.publish_minibatches`.
    Xt : ndarray of shape (n_target, n_features)
        Target rows.
    target_batch_size : int or None, default=None
        Size of each target batch, drawn without replacement; None uses the size of the
        source batch it is paired with (capped at ``n_target``).
    method : {"emd", "sinkhorn"}, default="emd"
        Exact or entropic transport.
    reg : float or None, default=None
        Entropic regularisation (``"sinkhorn"`` only).
    random_state : int, SeedSequence, Generator or None, default=None
        Randomness of the target batches (not a privacy mechanism).

    Returns
    -------
    MinibatchDPOTResult
        Mean and per-batch :math:`\tilde W`, with the privacy of the whole sequence.

    Raises
    ------
    DataMismatchError
        If ``Xt`` does not match the source's feature count, or every batch is empty.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(200, 5)), rng.normal(1.0, 1.0, size=(200, 5))
    >>> src = DPOTSource(eps=5.0, delta=1e-3, ell=20, random_state=1)
    >>> pubs = src.publish_minibatches(Xs, batch_size=20, n_batches=5)
    >>> res = dpot_minibatch(pubs, Xt, random_state=2)
    >>> res.batch_w_tilde.shape[0] <= 5
    True
    """
    owner = "dpot_minibatch"
    T = _as_matrix(Xt, "Xt", owner)
    rng = check_random_state(random_state)
    values = []
    n_empty = 0
    for batch in published.batches:
        if batch.n_samples == 0:
            n_empty += 1
            continue
        size = batch.n_samples if target_batch_size is None else check_int(
            target_batch_size, "target_batch_size", owner, 1)
        idx = rng.choice(T.shape[0], size=min(size, T.shape[0]), replace=False)
        values.append(dpot(batch, T[idx], method=method, reg=reg).w_tilde)
    if not values:
        raise DataMismatchError(f"{owner}: every published batch is empty.")
    vals = np.asarray(values)
    return MinibatchDPOTResult(w_tilde=float(vals.mean()), batch_w_tilde=vals,
                               privacy=published.privacy,
                               diagnostics={"n_empty_batches": n_empty})


# ----------------------------------------------------------------------------------------
# Classes
# ----------------------------------------------------------------------------------------
class DPOTSource:
    r"""Source party of DPOT: calibrates, projects, adds noise and publishes.

    ``publish(Xs)`` returns a :class:`PublishedSource` holding only
    :math:`(M, X_s M + \Delta)`, :math:`\sigma` and the privacy statement; the object
    keeps nothing about ``Xs``. Use it on the data owner's side, then send the
    publication to the target party (:class:`DPOT`). Cost O(n k l).

    Parameters
    ----------
    eps : float
        Privacy parameter :math:`\varepsilon > 0` of the publication (of the whole run for
        :meth:`publish_minibatches`).
    delta : float
        Privacy parameter :math:`\delta \in (0, 1)`.
    ell : int
        Projection dimension :math:`\ell \ge 1`.
    neighbour : {"entry", "record"}, default="entry"
        ``"entry"``: neighbours differ in one entry of one row by at most 1 (seed 000,
        Theorem 2; the feature scale matters: the bound is one *unit* of a feature).
        ``"record"``: one row, clipped to ``clip_norm``, is replaced by any other row;
        sensitivity :math:`2C\lVert M\rVert_2` and analytic Gaussian calibration.
    clip_norm : float or None, default=None
        Public bound :math:`C` on row norms, required for ``neighbour="record"``.
    random_state : int, SeedSequence, Generator or None, default=None
        Source of ``M`` and of the noise; None draws fresh OS entropy (use that for real
        releases; a seed is for research only).

    See Also
    --------
    DPOT : the target party.
    privinfer.transport.calibration.theorem2_sigma : the ``"entry"`` calibration.

    Notes
    -----
    Seed 000, Algorithm 1, steps 1-2: :math:`M\sim N(0,1/\ell)^{k\times\ell}`,
    :math:`\Delta\sim N(0,\sigma^2)^{n_s\times\ell}`, publish :math:`(M, X_sM+\Delta)`,
    with

    .. math:: \sigma = \frac{w\sqrt{2(\ln\frac1{2\delta}+\varepsilon)}}{\varepsilon}
              \ (\text{entry}),\qquad
              \sigma = \sigma_{\text{analytic}}(\varepsilon,\delta;\,2C\lVert M\rVert_2)
              \ (\text{record}).

    Examples
    --------
    >>> import numpy as np
    >>> Xs = np.random.default_rng(0).normal(size=(50, 8))
    >>> pub = DPOTSource(eps=2.0, delta=1e-5, ell=16, random_state=0).publish(Xs)
    >>> pub.rows.shape, round(pub.sigma, 3) > 0
    ((50, 16), True)
    """

    def __init__(
        self,
        eps: float,
        delta: float,
        ell: int,
        *,
        neighbour: NeighbourRelation = "entry",
        clip_norm: float | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.eps = eps
        self.delta = delta
        self.ell = ell
        self.neighbour = neighbour
        self.clip_norm = clip_norm
        self.random_state = random_state

    def _validated(self) -> tuple[float, float, int, NeighbourRelation, float | None]:
        owner = type(self).__name__
        eps = check_in_interval(self.eps, "eps", owner, 0.0, np.inf, low_open=True,
                                high_open=True)
        delta = check_in_interval(self.delta, "delta", owner, 0.0, 1.0, low_open=True,
                                  high_open=True)
        ell = check_int(self.ell, "ell", owner, 1)
        rel = _check_relation(self.neighbour, owner)
        clip = None
        if rel == "record":
            if self.clip_norm is None:
                raise ValueError(
                    f"{owner}: neighbour='record' needs a public 'clip_norm' > 0. Got None."
                )
            clip = check_in_interval(self.clip_norm, "clip_norm", owner, 0.0, np.inf,
                                     low_open=True, high_open=True)
        return eps, delta, ell, rel, clip

    def _prepare(self, Xs: object, owner: str, rng: np.random.Generator
                 ) -> tuple[FloatArray, FloatArray, float, NeighbourRelation, float, float]:
        eps, delta, ell, rel, clip = self._validated()
        X = _as_matrix(Xs, "Xs", owner)
        M = draw_projection(X.shape[1], ell, random_state=rng)
        if rel == "record":
            norms = np.linalg.norm(X, axis=1, keepdims=True)
            scale = np.ones_like(norms)
            over = norms > clip
            scale[over] = clip / norms[over]  # rows inside the ball are left as they are
            X = X * scale
            sens = record_sensitivity(M, float(clip or 0.0))
        else:
            sens = max_row_norm(M)
        return X, M, sens, rel, eps, delta

    def publish(self, Xs: FloatArray) -> PublishedSource:
        r"""Publish :math:`(M, X_sM+\Delta)` with noise calibrated to ``(eps, delta)``.

        Parameters
        ----------
        Xs : ndarray of shape (n_source, n_features)
            The private source rows (not kept).

        Returns
        -------
        PublishedSource
            Projection, noisy rows, :math:`\sigma` and the privacy statement.

        Raises
        ------
        ValueError
            If a hyperparameter is out of range (``eps <= 0``, ``delta`` outside (0, 1),
            ``ell < 1``, missing ``clip_norm`` for ``"record"``).
        DataMismatchError
            If ``Xs`` is not a non-empty 2-D array.
        """
        owner = f"{type(self).__name__}.publish"
        rng_m, rng_noise = spawn_generators(self.random_state, 2)
        X, M, sens, rel, eps, delta = self._prepare(Xs, owner, rng_m)
        if rel == "entry":
            sigma = theorem2_sigma(eps, delta, sens)
            mech = "JL projection + Gaussian noise, Theorem 2 calibration (seed 000)"
        else:
            sigma = analytic_gaussian_sigma(eps, delta, sens)
            mech = "clipped rows, JL projection + Gaussian noise, analytic Gaussian calibration"
        rows = publish_rows(X, M, sigma, random_state=rng_noise)
        stmt = PrivacyStatement(eps=eps, delta=delta, neighbour=rel, mechanism=mech,
                                sigma=sigma, sensitivity=sens)
        return PublishedSource(projection=M, rows=rows, sigma=sigma, privacy=stmt)

    def publish_minibatches(
        self, Xs: FloatArray, *, batch_size: float, n_batches: int
    ) -> PublishedMinibatches:
        r"""Publish ``n_batches`` Poisson-sampled minibatches within the total budget.

        Every row enters each batch independently with probability
        :math:`q = \text{batch\_size}/n_s`; the kept rows are shuffled, projected with one
        shared :math:`M` and noised. :math:`\sigma` is the smallest noise (found by root
        finding on :func:`~privinfer.transport.accounting.minibatch_privacy`) for which
        the whole sequence is ``(eps, delta)``-DP under ``dp_accounting``'s PLD
        accountant.

        Parameters
        ----------
        Xs : ndarray of shape (n_source, n_features)
            The private source rows (not kept).
        batch_size : float
            Expected batch size :math:`q n_s`, in (0, n_source].
        n_batches : int
            Number of publications :math:`T \ge 1`.

        Returns
        -------
        PublishedMinibatches
            The batches and the statement for the whole run.

        Raises
        ------
        ValueError
            If a hyperparameter is out of range.
        """
        owner = f"{type(self).__name__}.publish_minibatches"
        rng_m, rng_sample = spawn_generators(self.random_state, 2)
        X, M, sens, rel, eps, delta = self._prepare(Xs, owner, rng_m)
        n = X.shape[0]
        q = check_in_interval(batch_size, "batch_size", owner, 0.0, float(n),
                              low_open=True) / n
        steps = check_int(n_batches, "n_batches", owner, 1)
        nm = _calibrate_noise_multiplier(eps, delta, q, steps)
        sigma = nm * sens
        batches = []
        for _ in range(steps):
            keep = np.flatnonzero(rng_sample.random(n) < q)
            rng_sample.shuffle(keep)
            rows = publish_rows(X[keep], M, sigma, rng_sample) if keep.size else np.empty(
                (0, M.shape[1]))
            batches.append((rows, keep.size))
        stmt = PrivacyStatement(
            eps=minibatch_privacy(nm, q, steps, delta), delta=delta, neighbour=rel,
            mechanism=(f"{steps} Poisson-sampled (q={q:.4g}) JL + Gaussian publications, "
                       "PLD accounting (dp_accounting), membership treated as public"),
            sigma=sigma, sensitivity=sens,
        )
        pubs = tuple(PublishedSource(projection=M, rows=r, sigma=sigma, privacy=stmt)
                     for r, _ in batches)
        return PublishedMinibatches(batches=pubs, sampling_probability=q, privacy=stmt)


def _calibrate_noise_multiplier(eps: float, delta: float, q: float, steps: int) -> float:
    """Smallest noise multiplier whose run is (eps, delta)-DP (PLD from dp_accounting).

    Bracket: one subsampled step alone is the Gaussian at ``delta / q`` (lower bound);
    ``steps`` unsampled steps are one Gaussian with ``nm / sqrt(steps)`` (upper bound).
    """
    from privinfer.transport.calibration import _import_dp_accounting

    dpa = _import_dp_accounting()
    lo = float(dpa.get_sigma_gaussian(eps, min(delta / q, 0.5)))
    hi = float(np.sqrt(steps) * dpa.get_sigma_gaussian(eps, delta)) * 1.01
    if q >= 1.0:
        lo = hi / 1.02

    def gap(log_nm: float) -> float:
        return minibatch_privacy(float(np.exp(log_nm)), q, steps, delta,
                                 value_discretization_interval=1e-3) - eps

    if gap(np.log(lo)) >= 0:
        log_nm = float(np.log(lo)) if gap(np.log(hi)) >= 0 else brentq(
            gap, np.log(lo), np.log(hi), xtol=2e-3)
    else:  # pragma: no cover - lo is a lower bound, kept for safety
        log_nm = float(np.log(lo))
    nm = float(np.exp(log_nm))
    # the pessimistic fine-grid epsilon must be within budget
    while minibatch_privacy(nm, q, steps, delta) > eps:
        nm *= 1.005
    return nm


class DPOT:
    r"""Target party of DPOT: fits the private plan and :math:`\tilde W`.

    ``fit(published, Xt)`` builds the debiased cost between the published source rows
    and the projected target rows and solves OT with POT. Use it when the source has
    published through :class:`DPOTSource`. Cost: one POT solve.

    Parameters
    ----------
    method : {"emd", "sinkhorn"}, default="emd"
        Exact (``ot.emd``) or entropic (``ot.sinkhorn``) transport.
    reg : float or None, default=None
        Entropic regularisation in units of the cost (``"sinkhorn"`` only).
    max_iter : int or None, default=None
        Solver iteration cap (see :func:`solve_transport`).

    Attributes
    ----------
    plan_ : ndarray of shape (n_source, n_target)
        The private coupling :math:`\tilde\gamma_0`.
    cost_ : ndarray of shape (n_source, n_target)
        The debiased cost :math:`\tilde C`.
    w_tilde_ : float
        The private transport cost :math:`\tilde W`.
    privacy_ : PrivacyStatement
        The guarantee of the publication.
    result_ : DPOTResult
        All of the above as one frozen record.

    See Also
    --------
    dpot : the functional form.
    DPOTSource : the source party.

    Notes
    -----
    Seed 000, Algorithm 1, steps 3-4:
    :math:`\tilde C = c(X_sM+\Delta, X_tM) - \ell\sigma^2`, then
    :math:`\tilde\gamma_0 = \arg\min_{\gamma\in\Pi}\langle\gamma,\tilde C\rangle`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(40, 6)), rng.normal(2.0, 1.0, size=(40, 6))
    >>> pub = DPOTSource(eps=5.0, delta=1e-3, ell=30, random_state=0).publish(Xs)
    >>> est = DPOT().fit(pub, Xt)
    >>> est.plan_.shape
    (40, 40)
    """

    def __init__(
        self,
        *,
        method: Method = "emd",
        reg: float | None = None,
        max_iter: int | None = None,
    ) -> None:
        self.method = method
        self.reg = reg
        self.max_iter = max_iter

    def fit(self, published: PublishedSource, Xt: FloatArray) -> DPOT:
        """Fit the private plan; returns ``self``.

        Parameters
        ----------
        published : PublishedSource
            The source party's publication.
        Xt : ndarray of shape (n_target, n_features)
            Target rows.

        Returns
        -------
        DPOT
            The fitted estimator.
        """
        res = dpot(published, Xt, method=self.method, reg=self.reg, max_iter=self.max_iter)
        self.result_ = res
        self.plan_ = res.plan
        self.cost_ = res.cost
        self.w_tilde_ = res.w_tilde
        self.privacy_ = res.privacy
        return self
