r"""The inversion identity :math:`Q_X^{-1}` and the reference-expectation engine.

For a function :math:`h(v, x)` of the public part ``v`` and the private covariates ``x``,

.. math::

    (Q_X h)(v, x) = \alpha h(v, x) + (1-\alpha)(\bar Q h)(v), \qquad
    (Q_X^{-1} h)(v, z) = \frac{h(v, z) - (1-\alpha)(\bar Q h)(v)}{\alpha},

and :math:`E_{P_{VZ}}[(Q_X^{-1} h)(V, Z)] = E_{P_{VX}}[h(V, X)]` (Kormos and van der
Vaart, 2026, sec. 4.1): the average of :math:`Q_X^{-1}h` over released rows is unbiased
for the true-data mean of ``h``. Everything private in privinfer is this identity.

**Whole functions.** :math:`Q_X^{-1}` is applied to the whole function of ``x``:
:math:`Q_X^{-1}[b b'] \ne Q_X^{-1}[b]\,Q_X^{-1}[b]'` because
:math:`\bar Q[b b'] = E_{\bar Q}[b b']` is not :math:`E_{\bar Q}[b] E_{\bar Q}[b]'`.
No function here ever multiplies two inverted factors.

**Separable evaluation.** Basis functions are products
:math:`\varphi_j(v, x) = a_j(v)\,p_j(x)` of a public factor and a private factor. Then
:math:`\bar Q[\varphi_j](v) = a_j(v) E_{\bar Q} p_j` and
:math:`\bar Q[\varphi_j \varphi_k](v) = a_j(v) a_k(v) E_{\bar Q}[p_j p_k]`, so the reference
enters only through the moments :class:`ReferenceMoments` (``mean``, ``outer``),
computed **once** from a reference sample of size ``M``. Cost O(n J^2 + M J^2), never
O(n M).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.interpolate import CubicSpline

from privinfer._repr import short_repr
from privinfer._typing import FloatArray, IntArray, RandomStateLike
from privinfer._validation import check_alpha, check_int
from privinfer.exceptions import DataMismatchError, MissingValueError
from privinfer.formula import cast_private_categoricals

__all__ = [
    "ReferenceDesign",
    "ReferenceMoments",
    "column_groups",
    "index_expectation",
    "invert",
    "private_cross_moment",
    "private_gram",
    "private_mean",
    "qbar_linear",
    "qbar_quadratic",
    "reference_design",
    "weighted_cross",
]


def _array(values: object, name: str, owner: str, ndim: int) -> FloatArray:
    """A finite float array of ``ndim`` dimensions (DataMismatchError / MissingValueError)."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataMismatchError(
            f"{owner}: {name!r} must be a numeric array; got {type(values).__name__}."
        ) from exc
    if arr.ndim != ndim:
        raise DataMismatchError(
            f"{owner}: {name!r} must be a {ndim}-D array; got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise MissingValueError(
            f"{owner}: {name!r} holds {int(np.sum(~np.isfinite(arr)))} NaN or infinite "
            "value(s)."
        )
    return arr


def _check_rows(
    P: object, alpha: object, A: object, weights: object, owner: str
) -> tuple[FloatArray, float, FloatArray | None, FloatArray | None]:
    P_arr = _array(P, "P", owner, 2)
    if P_arr.shape[0] < 1:
        raise DataMismatchError(f"{owner}: 'P' has no rows; at least one released row is needed.")
    a = check_alpha(alpha, owner)
    A_arr = None if A is None else _array(A, "A", owner, 2)
    if A_arr is not None and A_arr.shape != P_arr.shape:
        raise DataMismatchError(
            f"{owner}: 'A' must have the shape of 'P' {P_arr.shape}; got {A_arr.shape}."
        )
    w = None if weights is None else _array(weights, "weights", owner, 1)
    if w is not None and w.shape[0] != P_arr.shape[0]:
        raise DataMismatchError(
            f"{owner}: 'weights' must have one entry per row of 'P' ({P_arr.shape[0]}); "
            f"got {w.shape[0]}."
        )
    return P_arr, a, A_arr, w


def _check_ref(ref: object, J: int, owner: str) -> ReferenceMoments:
    if not isinstance(ref, ReferenceMoments):
        raise TypeError(f"{owner}: 'ref' must be a ReferenceMoments; got {type(ref).__name__}.")
    if ref.mean.shape != (J,):
        raise DataMismatchError(
            f"{owner}: the reference moments cover {ref.mean.shape[0]} factor(s) but 'P' has "
            f"{J} column(s)."
        )
    return ref


def invert(h_z: FloatArray | float, qbar_h: FloatArray | float, alpha: float) -> FloatArray:
    r"""Apply :math:`Q_X^{-1}`: :math:`(h(v,z) - (1-\alpha)(\bar Q h)(v)) / \alpha`.

    Parameters
    ----------
    h_z : ndarray
        The function evaluated at the released data, :math:`h(V_i, Z_i)`.
    qbar_h : ndarray or float
        Its reference expectation :math:`(\bar Q h)(V_i)` (broadcastable).
    alpha : float
        Keep probability of the mechanism. At ``alpha = 1`` the reference part is dropped
        exactly (a copy of ``h_z``, broadcast), so a private fit is then the ordinary one
        bit for bit, even where ``qbar_h`` is not finite.

    Notes
    -----
    This is the one implementation of :math:`Q_X^{-1}` in privinfer: every deconvolved
    mean, Gram matrix, score and kernel sum goes through it.

    Examples
    --------
    >>> float(invert(2.0, 1.0, 0.5))
    3.0
    >>> invert(np.array([2.0]), np.array([np.nan]), 1.0).tolist()
    [2.0]
    """
    alpha = check_alpha(alpha, "invert")
    h = np.asarray(h_z, dtype=float)
    q = np.asarray(qbar_h, dtype=float)
    if alpha == 1.0:
        return np.array(np.broadcast_to(h, np.broadcast_shapes(h.shape, q.shape)), dtype=float)
    return (h - (1.0 - alpha) * q) / alpha


@dataclass(frozen=True)
class ReferenceMoments:
    r"""Reference moments of private basis factors, with their numerical error.

    Attributes
    ----------
    mean : ndarray of shape (J,)
        :math:`E_{\bar Q} p_j(X)`.
    outer : ndarray of shape (J, J)
        :math:`E_{\bar Q} p_j(X) p_k(X)`.
    mean_reps, outer_reps : ndarray or None
        The same moments computed on each independent Sobol scramble (``None`` for an
        exact enumeration); their spread measures the quasi-Monte Carlo error.
    n_points : int
        Size of the reference sample.

    Examples
    --------
    >>> ref = ReferenceMoments.from_features(np.array([[1.0], [3.0]]), np.array([0.5, 0.5]))
    >>> ref.mean.tolist(), ref.outer.round(12).tolist(), ref.exact
    ([2.0], [[5.0]], True)
    """

    mean: FloatArray
    outer: FloatArray
    mean_reps: FloatArray | None
    outer_reps: FloatArray | None
    n_points: int
    __repr__ = short_repr  # one line: arrays and tables by their shape

    @property
    def exact(self) -> bool:
        """Whether the moments are exact (finite reference support enumerated)."""
        return self.mean_reps is None

    @classmethod
    def from_features(
        cls, features: FloatArray, weights: FloatArray, replicate: np.ndarray | None = None
    ) -> ReferenceMoments:
        """Moments from private factors evaluated on a reference sample.

        Parameters
        ----------
        features : ndarray of shape (M, J)
            :math:`p_j` at the reference points, through the *same* formula spec and
            basis as the released data.
        weights : ndarray of shape (M,)
            Probability weights of the points (sum to one).
        replicate : ndarray of shape (M,), optional
            Scramble labels; ``None`` for an exact enumeration.
        """
        owner = "ReferenceMoments.from_features"
        f = _array(features, "features", owner, 2)
        w = _array(weights, "weights", owner, 1)
        if f.shape[0] < 1 or w.shape[0] != f.shape[0]:
            raise DataMismatchError(
                f"{owner}: 'weights' must have one entry per reference point ({f.shape[0]}, "
                f"at least one); got {w.shape[0]}."
            )
        if np.any(w < 0) or abs(float(w.sum()) - 1.0) > 1e-8:
            raise ValueError(
                f"The 'weights' parameter of {owner} must be non-negative probability weights "
                f"summing to one. They sum to {float(w.sum())!r}."
            )
        if replicate is not None and np.asarray(replicate).shape != (f.shape[0],):
            raise DataMismatchError(
                f"{owner}: 'replicate' must have one label per reference point ({f.shape[0]})."
            )
        mean = w @ f
        outer = weighted_cross(f, w)
        if replicate is None:
            return cls(mean, outer, None, None, f.shape[0])
        labels = np.unique(replicate)
        means, outers = [], []
        for r in labels:
            sel = replicate == r
            if not w[sel].sum() > 0:
                raise ValueError(
                    "ReferenceMoments.from_features: replicate "
                    f"{r!r} has zero total weight; every replicate needs positive weight."
                )
            wr = w[sel] / w[sel].sum()
            means.append(wr @ f[sel])
            outers.append(weighted_cross(f[sel], wr))
        return cls(mean, outer, np.array(means), np.array(outers), f.shape[0])

    def error(self, functional: Callable[[FloatArray, FloatArray], float]) -> float:
        """Standard error of a functional of the moments over the Sobol scrambles.

        ``functional(mean, outer)`` is evaluated on each scramble's moments; the
        returned value is their standard deviation over ``sqrt(n_replicates)`` (zero for
        exact moments).
        """
        if self.mean_reps is None or self.outer_reps is None:
            return 0.0
        vals = np.array(
            [functional(m, o) for m, o in zip(self.mean_reps, self.outer_reps, strict=True)]
        )
        return float(vals.std(ddof=1) / np.sqrt(vals.size))


@dataclass(frozen=True)
class ReferenceDesign:
    r"""A sample of the reference :math:`\bar Q` of the private columns, ready for moments.

    Made by :func:`reference_design`, the one place that draws the reference sample of a
    model (exact enumeration of a small finite support, else scrambled Sobol replicates).

    Attributes
    ----------
    frame : DataFrame of shape (M, n_private)
        Reference points; private categoricals carry the mechanism's public levels.
    U : ndarray of shape (M, p) or None
        The private covariate design of a covariate spec at the points (None without spec).
    weights : ndarray of shape (M,)
        Probability weights summing to one.
    replicate : ndarray of shape (M,) or None
        Sobol scramble of each point (None when exact).
    exact : bool
        Whether the sample is an exact enumeration.

    Examples
    --------
    >>> import privinfer as pi
    >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    >>> design = reference_design(mech, size=256, random_state=0)
    >>> design.n_points, design.exact
    (256, False)
    >>> ref = design.moments(design.frame[["x"]].to_numpy())
    >>> bool(abs(ref.mean[0] - 0.5) < 0.01)
    True
    """

    frame: pd.DataFrame
    U: FloatArray | None
    weights: FloatArray
    replicate: FloatArray | None
    exact: bool
    __repr__ = short_repr  # one line: arrays and tables by their shape

    @property
    def n_points(self) -> int:
        """Number of reference points ``M``."""
        return int(self.weights.shape[0])

    def moments(self, features: FloatArray | None = None) -> ReferenceMoments:
        """Reference moments of ``features`` at the points (default: the design ``U``)."""
        feats = self.U if features is None else features
        if feats is None:
            raise DataMismatchError(
                "ReferenceDesign.moments: no features given and no covariate design."
            )
        return ReferenceMoments.from_features(feats, self.weights, self.replicate)


def reference_design(
    mechanism: object,
    spec: object | None = None,
    size: int = 8192,
    random_state: RandomStateLike = None,
) -> ReferenceDesign:
    r"""Draw the reference sample of a mechanism and evaluate a covariate design on it.

    Parameters
    ----------
    mechanism : AlphaIdentity
        Its reference :math:`\bar Q` is enumerated when finite and small, else sampled by
        scrambled Sobol replicates (``ProductReference.draw_for_moments``).
    spec : CovariateSpec, optional
        A covariate spec whose ``private_design`` is evaluated at the points (``U``);
        private categoricals are cast to the mechanism's public levels first, so the
        design has the same columns as on the released data.
    size : int, default=8192
        Sample size for continuous references.
    random_state : int, SeedSequence, Generator or None
        Seeds the Sobol scrambles (numerical integration, not privacy noise).

    Returns
    -------
    ReferenceDesign

    Examples
    --------
    >>> import privinfer as pi
    >>> mech = pi.AlphaIdentity(0.5, {"g": pi.reference.Categorical(["a", "b"])})
    >>> design = reference_design(mech)
    >>> design.exact, design.weights.tolist()
    (True, [0.5, 0.5])
    """
    size = check_int(size, "size", "reference_design", 2)
    draw = mechanism.reference.draw_for_moments(size, random_state=random_state)  # type: ignore[attr-defined]
    frame = cast_private_categoricals(draw.frame, mechanism)  # type: ignore[arg-type]
    U = None if spec is None else spec.private_design(frame, reference=True)  # type: ignore[attr-defined]
    weights = np.asarray(draw.weights, dtype=float)
    return ReferenceDesign(frame, U, weights, draw.replicate, bool(draw.exact))


def _phi(P: FloatArray, A: FloatArray | None) -> FloatArray:
    return P if A is None else A * P


def private_mean(
    P: FloatArray,
    ref: ReferenceMoments,
    alpha: float,
    A: FloatArray | None = None,
    weights: FloatArray | None = None,
) -> FloatArray:
    r"""Unbiased estimate of :math:`E[w(V)\varphi_j(V, X)]` from released rows.

    Parameters
    ----------
    P : ndarray of shape (n, J)
        Private factors :math:`p_j(Z_i)` at the released covariates.
    ref : ReferenceMoments
        Reference moments of the same factors.
    alpha : float
        Keep probability.
    A : ndarray of shape (n, J), optional
        Public factors :math:`a_j(V_i)`; ``None`` means all ones.
    weights : ndarray of shape (n,), optional
        Public row weights :math:`w(V_i)` (e.g. a treatment indicator).

    Notes
    -----
    .. math:: \frac1n\sum_i \frac{w_i a_{ij} p_j(Z_i) - (1-\alpha) w_i a_{ij} E_{\bar Q}p_j}
              {\alpha}

    Examples
    --------
    >>> ref = ReferenceMoments.from_features(np.array([[0.0], [1.0]]), np.array([0.5, 0.5]))
    >>> private_mean(np.array([[1.0], [1.0]]), ref, 0.5).tolist()
    [1.5]
    """
    P, alpha, A, weights = _check_rows(P, alpha, A, weights, "private_mean")
    _check_ref(ref, P.shape[1], "private_mean")
    n = P.shape[0]
    w = np.ones(n) if weights is None else weights
    raw = w @ _phi(P, A) / n
    pub = w.sum() / n if A is None else w @ A / n
    return invert(raw, pub * ref.mean, alpha)


def private_cross_moment(
    P: FloatArray,
    y: FloatArray,
    ref: ReferenceMoments,
    alpha: float,
    A: FloatArray | None = None,
    weights: FloatArray | None = None,
) -> FloatArray:
    r"""Unbiased estimate of :math:`E[w(V)\,Y\,\varphi(V, X)]` (``y`` public).

    Examples
    --------
    >>> ref = ReferenceMoments.from_features(np.array([[0.0], [2.0]]), np.array([0.5, 0.5]))
    >>> private_cross_moment(np.array([[2.0]]), np.array([3.0]), ref, 0.5).tolist()
    [9.0]
    """
    owner = "private_cross_moment"
    P, alpha, A, weights = _check_rows(P, alpha, A, weights, owner)
    y_arr = _array(y, "y", owner, 1)
    if y_arr.shape[0] != P.shape[0]:
        raise DataMismatchError(
            f"{owner}: 'y' must have one entry per row of 'P' ({P.shape[0]}); "
            f"got {y_arr.shape[0]}."
        )
    w = y_arr if weights is None else weights * y_arr
    return private_mean(P, ref, alpha, A=A, weights=w)


def private_gram(
    P: FloatArray,
    ref: ReferenceMoments,
    alpha: float,
    A: FloatArray | None = None,
    weights: FloatArray | None = None,
) -> FloatArray:
    r"""Unbiased estimate of the Gram matrix :math:`E[w(V)\varphi\varphi']`.

    :math:`Q_X^{-1}` is applied to the whole product :math:`\varphi\varphi'`:

    .. math:: G = \frac{\Phi' W \Phi / n - (1-\alpha)\,(A' W A / n) \circ E_{\bar Q}[p p']}
              {\alpha}.

    The result is symmetric but may be indefinite in finite samples.

    Examples
    --------
    >>> ref = ReferenceMoments.from_features(np.array([[0.0], [2.0]]), np.array([0.5, 0.5]))
    >>> private_gram(np.array([[3.0]]), ref, 0.5).round(12).tolist()  # (9 - 0.5 * 2) / 0.5
    [[16.0]]
    """
    P, alpha, A, weights = _check_rows(P, alpha, A, weights, "private_gram")
    _check_ref(ref, P.shape[1], "private_gram")
    n = P.shape[0]
    w = np.ones(n) if weights is None else weights
    phi = _phi(P, A)
    raw = weighted_cross(phi, w) / n
    pub = w.sum() / n if A is None else weighted_cross(A, w) / n
    return invert(raw, pub * ref.outer, alpha)


def weighted_cross(X: FloatArray, w: FloatArray) -> FloatArray:
    """``X' diag(w) X`` through a symmetric rank-k update when ``w >= 0`` (BLAS syrk).

    ``X.T @ (X * w)`` goes through a general matrix product that is several times slower
    than ``Y.T @ Y`` with ``Y = X * sqrt(w)``.

    Examples
    --------
    >>> weighted_cross(np.array([[1.0], [2.0]]), np.array([1.0, 0.25])).tolist()
    [[2.0]]
    """
    if np.all(w == 1.0):
        return X.T @ X
    if np.all(w >= 0):
        Y = X * np.sqrt(w)[:, None]
        return Y.T @ Y
    return X.T @ (X * w[:, None])


def qbar_linear(coef: FloatArray, ref_mean: FloatArray, A: FloatArray | None = None) -> FloatArray:
    r"""Row-wise :math:`\bar Q[\beta'\varphi](v_i) = \sum_j \beta_j a_j(v_i) E_{\bar Q}p_j`.

    Returns a scalar (as a 0-d array) when ``A`` is ``None``.

    Examples
    --------
    >>> float(qbar_linear(np.array([1.0, 2.0]), np.array([0.5, 0.25])))
    1.0
    >>> qbar_linear(np.array([1.0, 2.0]), np.array([0.5, 0.25]), A=np.eye(2)).tolist()
    [0.5, 0.5]
    """
    coef_arr = _array(coef, "coef", "qbar_linear", 1)
    mean_arr = _array(ref_mean, "ref_mean", "qbar_linear", 1)
    A_arr = None if A is None else _array(A, "A", "qbar_linear", 2)
    J = coef_arr.shape[0]
    if mean_arr.shape[0] != J or (A_arr is not None and A_arr.shape[1] != J):
        raise DataMismatchError(
            f"qbar_linear: 'coef' ({J}), 'ref_mean' ({mean_arr.shape[0]}) and the columns of "
            "'A' must agree."
        )
    bm, A = coef_arr * mean_arr, A_arr
    return np.asarray(bm.sum()) if A is None else A @ bm


def qbar_quadratic(
    theta: FloatArray, beta: FloatArray, ref_outer: FloatArray, A: FloatArray | None = None
) -> FloatArray:
    r"""Row-wise reference expectation of a product of two series functions.

    :math:`\bar Q[(\theta'\varphi)(\beta'\varphi)](v_i) = a_i'((\theta\beta')\circ R)a_i`.

    ``R`` is :math:`E_{\bar Q}[p p']`; cost O(n J^2), or O(n q^2) when the columns of ``A``
    take ``q <= J / 2`` distinct values (:func:`column_groups`). Returns a scalar when
    ``A`` is None.

    Examples
    --------
    >>> float(qbar_quadratic(np.array([1.0]), np.array([2.0]), np.array([[3.0]])))
    6.0
    """
    owner = "qbar_quadratic"
    theta = _array(theta, "theta", owner, 1)
    beta = _array(beta, "beta", owner, 1)
    ref_outer = _array(ref_outer, "ref_outer", owner, 2)
    A = None if A is None else _array(A, "A", owner, 2)
    J = theta.shape[0]
    if beta.shape != (J,) or ref_outer.shape != (J, J) or (A is not None and A.shape[1] != J):
        raise DataMismatchError(
            f"{owner}: 'theta', 'beta' ({J},), 'ref_outer' ({J}, {J}) and the columns of 'A' "
            f"must agree; got {beta.shape}, {ref_outer.shape}."
        )
    S = np.outer(theta, beta) * ref_outer
    if A is None:
        return np.asarray(S.sum())
    groups = column_groups(A)
    if groups is not None:  # a_i = E'b_i: a_i'Sa_i = b_i'(ESE')b_i, O(n q^2) for q groups
        first, inv = groups
        E = np.zeros((first.size, J))
        E[inv, np.arange(J)] = 1.0
        S, A = E @ S @ E.T, A[:, first]
    return np.einsum("ij,ij->i", A @ S, A)


#: the last grouping of each thread (the row-wise expectations of one chunk of rows all
#: take the same public factors ``A``); the array itself is kept, so its id cannot be
#: reused while it is remembered
_LAST_GROUPS = threading.local()


def column_groups(A: FloatArray) -> tuple[IntArray, IntArray] | None:
    """The distinct columns of ``A`` (first index of each) and every column's group.

    Public factors repeat: every basis function of a private covariate alone has the
    factor 1, and the functions that multiply one public atom share it, so
    :math:`a_i = E'b_i` with ``b_i`` the distinct factors and ``E`` the groups' 0/1
    matrix, and products of public factors can be summed over ``q`` groups instead of
    ``J`` functions. ``None`` unless the distinct columns are at most half of them (or
    when a check fails: the groups are verified exactly, so a grouping is never
    approximate). The groups of the last *read-only* array are remembered (the models
    mark a chunk's public factors read-only and take several expectations from them);
    a writeable array is grouped afresh at every call.

    Examples
    --------
    >>> A = np.array([[1.0, 2.0, 1.0, 2.0, 1.0], [1.0, 3.0, 1.0, 3.0, 1.0]])
    >>> first, inv = column_groups(A)
    >>> A[:, first][:, inv].tolist() == A.tolist(), first.size
    (True, 2)
    """
    if A.flags.writeable:
        return _find_groups(A)
    last = getattr(_LAST_GROUPS, "last", None)
    if last is not None and last[0] is A:
        return last[1]
    groups = _find_groups(A)
    _LAST_GROUPS.last = (A, groups)
    return groups


def _find_groups(A: FloatArray) -> tuple[IntArray, IntArray] | None:
    """:func:`column_groups` without the memory of the last array."""
    n, J = A.shape
    if n == 0 or J < 4:
        return None
    # candidate keys: a fixed weighting of every column, reduced column by column (equal
    # columns give equal keys; unequal ones that collide fail the check below)
    key = (A * np.sin(1.2345 * np.arange(1, n + 1))[:, None]).sum(axis=0)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    inv = np.asarray(inv).ravel()
    if 2 * first.size > J or not np.array_equal(A, A[:, first[inv]]):
        return None
    return first, inv


def index_expectation(
    t: FloatArray,
    eta_ref: FloatArray,
    features_ref: FloatArray,
    weights: FloatArray,
    link: Callable[[FloatArray], FloatArray],
    *,
    grid_size: int = 129,
    span: tuple[float, float, bool] | None = None,
) -> tuple[FloatArray, float]:
    r"""Reference expectations through a single index: :math:`E_{\bar Q}[f(X) g(t + \eta(X))]`.

    Needed when a nuisance is a non-polynomial function of a linear index that adds a
    public part ``t(v)`` and a private part :math:`\eta(x)`, e.g. a logistic propensity
    :math:`\pi = \mathrm{expit}(t + \eta)`. The expectation is a function of the scalar
    ``t`` only, so it is computed on the distinct values of ``t`` when there are few, else
    on a grid of ``grid_size`` points and interpolated by a cubic spline: O(T M J + n J), never
    O(n M).

    Parameters
    ----------
    t : ndarray of shape (n,)
        Public part of the index for each released row.
    eta_ref : ndarray of shape (M,)
        Private part of the index at the reference points.
    features_ref : ndarray of shape (M, J)
        :math:`f(X)` at the reference points.
    weights : ndarray of shape (M,)
        Reference weights.
    link : callable
        Vectorised :math:`g`.
    grid_size : int, default=129
        Grid size when ``t`` takes many values.
    span : IndexSpan or (float, float, bool), optional
        When ``t`` is one part of the rows (a partition of a Dask frame): the smallest
        and largest ``t`` of all rows and whether all rows have at most ``grid_size``
        distinct values, so every part is evaluated (exactly, or on the same grid) as
        the whole would be.

    Returns
    -------
    values : ndarray of shape (n, J)
        :math:`E_{\bar Q}[f(X) g(t_i + \eta(X))]` per row.
    interp_error : float
        Largest interpolation error found at the grid midpoints (0 when exact).

    Examples
    --------
    A logistic link over a two-point reference for :math:`\eta(X)`, with features
    :math:`f(X) = (1, \eta(X))`:

    >>> from scipy.special import expit
    >>> eta = np.array([-1.0, 1.0]); w = np.array([0.5, 0.5])
    >>> f = np.column_stack([np.ones(2), eta])
    >>> vals, err = index_expectation(np.array([0.0, 2.0]), eta, f, w, expit)
    >>> vals.round(4).tolist(), err  # two distinct t: evaluated exactly
    ([[0.5, 0.2311], [0.8418, 0.1108]], 0.0)
    >>> round(float(w @ expit(2.0 + eta)), 4)  # the same expectation, by hand
    0.8418

    Many distinct values of ``t`` are interpolated from a grid:

    >>> vals, err = index_expectation(np.linspace(-3, 3, 1000), eta, f, w, expit)
    >>> vals.shape, bool(err < 1e-6)
    ((1000, 2), True)
    """
    owner = "index_expectation"
    t = _array(t, "t", owner, 1)
    eta_ref = _array(eta_ref, "eta_ref", owner, 1)
    features_ref = _array(features_ref, "features_ref", owner, 2)
    weights = _array(weights, "weights", owner, 1)
    if not (eta_ref.shape[0] == features_ref.shape[0] == weights.shape[0] >= 1):
        raise DataMismatchError(
            f"{owner}: 'eta_ref', 'features_ref' and 'weights' must have one entry per reference "
            f"point; got {eta_ref.shape[0]}, {features_ref.shape[0]} and {weights.shape[0]}."
        )
    grid_size = check_int(grid_size, "grid_size", owner, 4)
    if t.size == 0:
        return np.empty((0, features_ref.shape[1])), 0.0
    uniq, inverse = np.unique(t, return_inverse=True)
    fw = features_ref * weights[:, None]

    def at(points: FloatArray) -> FloatArray:
        out = np.empty((points.size, features_ref.shape[1]))
        step = max(1, int(2e7 // max(eta_ref.size, 1)))
        for s in range(0, points.size, step):
            g = link(points[s : s + step, None] + eta_ref[None, :])
            out[s : s + step] = g @ fw
        return out

    lo, hi, exact = (uniq[0], uniq[-1], uniq.size <= grid_size) if span is None else span
    if exact:
        return at(uniq)[inverse], 0.0

    def build() -> tuple[CubicSpline, float]:
        grid = np.linspace(lo, hi, grid_size)
        spline = CubicSpline(grid, at(grid), axis=0)
        mids = 0.5 * (grid[:-1] + grid[1:])
        probe = mids[:: max(1, mids.size // 16)]
        err = float(np.max(np.abs(at(probe) - spline(probe)))) if probe.size else 0.0
        return spline, err

    if isinstance(span, IndexSpan):  # one spline for all the parts that share the span
        key = (link, grid_size, *(_digest(a) for a in (eta_ref, features_ref, weights)))
        spline, err = span.cached(key, build)
    else:
        spline, err = build()
    return spline(t), err


def _digest(a: FloatArray) -> tuple[tuple[int, ...], bytes]:
    return a.shape, hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).digest()


class IndexSpan:
    """The public index of *all* rows, for :func:`index_expectation` on a part of them.

    ``lo``, ``hi``: its smallest and largest value; ``exact``: whether it takes at most
    ``grid_size`` distinct values. Unpacks as ``(lo, hi, exact)``. The parts that share
    one span (the partitions of a Dask frame, in one process) also share the spline
    fitted on its grid, built once.

    Examples
    --------
    >>> from scipy.special import expit
    >>> eta, w = np.array([-1.0, 1.0]), np.array([0.5, 0.5])
    >>> t = np.linspace(-3, 3, 1000)
    >>> whole, _ = index_expectation(t, eta, eta[:, None], w, expit)
    >>> span = IndexSpan(-3.0, 3.0, False)
    >>> part, _ = index_expectation(t[:10], eta, eta[:, None], w, expit, span=span)
    >>> bool(np.array_equal(part, whole[:10]))
    True
    """

    def __init__(self, lo: float, hi: float, exact: bool) -> None:
        self.lo, self.hi, self.exact = float(lo), float(hi), bool(exact)
        self._cache: dict[Any, Any] = {}
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Any]:
        return iter((self.lo, self.hi, self.exact))

    def cached(self, key: Any, build: Callable[[], Any]) -> Any:
        """``build()`` once per key (thread-safe)."""
        with self._lock:
            if key not in self._cache:
                self._cache[key] = build()
            return self._cache[key]

    def __getstate__(self) -> tuple[float, float, bool]:
        return self.lo, self.hi, self.exact

    def __setstate__(self, state: tuple[float, float, bool]) -> None:
        self.__init__(*state)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"IndexSpan(lo={self.lo:g}, hi={self.hi:g}, exact={self.exact})"


def __getattr__(name: str) -> object:
    """``private_expectation`` moved to :mod:`privinfer.descriptive` (imported lazily)."""
    if name == "private_expectation":
        from privinfer.descriptive import private_expectation

        return private_expectation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
