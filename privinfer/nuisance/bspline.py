r"""B-spline and tensor-product series bases, and ridge-penalised private series fits.

A :class:`BSplineBasis` has the interface of
:class:`~privinfer.nuisance.PolynomialBasis`: every basis function is a product
:math:`\varphi_j(v, x) = a_j(v)\,p_j(x)` of a public factor and a private factor, so the
separable inversion engine needs only the reference moments of the private
factors. Knots come from public information only: quantiles of the reference
distribution :math:`\bar Q` for private columns (never of the released values), sample
quantiles for public columns.

:func:`fit_ridge_series` solves the penalised private normal equations
:math:`(G + \lambda s\,\Omega)\beta = c` (Kormos and van der Vaart, 2026, sec. 6)
for any such basis.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.interpolate import BSpline

from privinfer._typing import FloatArray
from privinfer._validation import check_alpha, check_in_interval, check_int
from privinfer.exceptions import BasisSizeError, IndefiniteGramWarning
from privinfer.nuisance.series import GramRepair, repair_gram

__all__ = ["BSplineBasis", "RidgeSeriesFit", "fit_ridge_series", "ridge_penalty"]


def _weighted_quantiles(v: FloatArray, w: FloatArray, q: FloatArray) -> FloatArray:
    order = np.argsort(v, kind="stable")
    cw = np.cumsum(w[order])
    cw = cw / cw[-1]
    return np.interp(q, cw - 0.5 * w[order] / w.sum(), v[order])


@dataclass(frozen=True)
class _Marginal:
    """One column group's marginal basis: ``[1, g_2, ..., g_K]`` (constant first)."""

    kind: str  # "spline" or "dummy"
    columns: tuple[int, ...]  # design columns (private first, then public, global index)
    knots: FloatArray | None = None  # full knot vector of a spline
    degree: int = 3

    @property
    def size(self) -> int:
        if self.kind == "dummy":
            return 1 + len(self.columns)
        assert self.knots is not None
        return self.knots.size - self.degree - 1

    def evaluate(self, u: FloatArray) -> FloatArray:
        """Marginal basis at design columns ``u`` (n, K): constant, then the rest."""
        n = u.shape[0]
        if self.kind == "dummy":
            return np.column_stack([np.ones(n), u[:, list(self.columns)]])
        assert self.knots is not None
        t, k = self.knots, self.degree
        # beyond the boundary knots (a kept value outside the reference sample's range)
        # the end polynomials are extended rather than clipped
        B = BSpline.design_matrix(u[:, self.columns[0]], t, k, extrapolate=True).toarray()
        # partition of unity: [1, B_2..B_K] spans the same space as [B_1..B_K]
        B[:, 0] = 1.0
        return B


@dataclass(frozen=True)
class BSplineBasis:
    r"""Additive or tensor-product B-spline basis split into public and private factors.

    Each continuous column gets a B-spline basis of degree ``spline_degree`` with
    ``n_knots`` interior knots at public quantiles (reference quantiles for private
    columns); each binary column or categorical term keeps its dummies. A column group's
    marginal basis is written ``[1, g_2, ..., g_K]`` (the first B-spline is replaced by
    the constant, which spans the same space). Basis functions are products of one
    element of each marginal with at most ``interaction_order`` non-constant factors:
    ``1`` gives an additive model, the number of groups the full tensor product.

    Attributes
    ----------
    n_knots : int
        Interior knots per continuous column.
    spline_degree : int
        Polynomial degree of the B-splines (3: cubic).
    interaction_order : int
        Largest number of non-constant factors in one basis function.
    n_private : int
        Number of private design columns (they come first in the design).
    marginals : tuple
        Marginal basis of each column group (private groups first).
    terms : tuple of tuple of int
        Index into each group's marginal for every basis function (0 = constant).
    names : tuple of str
        Readable names of the basis functions.

    Examples
    --------
    >>> import numpy as np
    >>> ref = np.random.default_rng(0).uniform(size=(1000, 2))
    >>> basis = BSplineBasis.build(3, ref, np.full(1000, 1e-3), np.zeros((5, 0)), (0, 1), (),
    ...                            ("x1", "x2"), interaction_order=2)
    >>> basis.n_basis, basis.has_public
    (49, False)
    >>> A, P = basis.split(ref[:4], None)
    >>> A is None, P.shape
    (True, (4, 49))
    """

    n_knots: int
    spline_degree: int
    interaction_order: int
    n_private: int
    marginals: tuple[_Marginal, ...]
    n_private_groups: int
    terms: tuple[tuple[int, ...], ...]
    names: tuple[str, ...]
    _penalty: FloatArray = field(repr=False)

    @classmethod
    def build(
        cls,
        n_knots: int,
        private_ref: FloatArray,
        ref_weights: FloatArray,
        public: FloatArray,
        private_groups: tuple[int, ...],
        public_groups: tuple[int, ...],
        names: tuple[str, ...],
        *,
        spline_degree: int = 3,
        interaction_order: int = 1,
    ) -> BSplineBasis:
        """Build the basis from the reference design and the released public design.

        Parameters
        ----------
        n_knots : int
            Interior knots per continuous column (>= 0).
        private_ref : ndarray of shape (M, K_private)
            Private design columns at the reference points (knots at their quantiles).
        ref_weights : ndarray of shape (M,)
            Reference weights.
        public : ndarray of shape (n, K_public)
            Public design columns of the released data.
        private_groups, public_groups : tuple of int
            Group label of each column (dummies of one categorical share a label).
        names : tuple of str
            Names of the private then the public columns.
        spline_degree : int, default=3
            B-spline degree (>= 0).
        interaction_order : int, default=1
            Largest number of non-constant factors per basis function (>= 1).

        Raises
        ------
        ValueError
            If ``n_knots`` or ``spline_degree`` is negative or ``interaction_order < 1``.

        Examples
        --------
        >>> import numpy as np
        >>> ref = np.linspace(0, 1, 101)[:, None]
        >>> BSplineBasis.build(2, ref, np.full(101, 1 / 101), np.zeros((3, 0)), (0,), (),
        ...                    ("x",)).n_basis
        6
        """
        owner = "BSplineBasis"
        n_knots = check_int(n_knots, "n_knots", owner, 0)
        spline_degree = check_int(spline_degree, "spline_degree", owner, 0)
        interaction_order = check_int(interaction_order, "interaction_order", owner, 1)
        k_priv = private_ref.shape[1]
        cols_by_group: dict[tuple[bool, int], list[int]] = {}
        for j, g in enumerate(private_groups):
            cols_by_group.setdefault((True, g), []).append(j)
        for j, g in enumerate(public_groups):
            cols_by_group.setdefault((False, g), []).append(k_priv + j)
        marginals: list[_Marginal] = []
        n_priv_groups = 0
        for (is_priv, _), cols in cols_by_group.items():
            if len(cols) == 1:
                j = cols[0]
                if is_priv:
                    v, w = private_ref[:, j], np.asarray(ref_weights, dtype=float)
                else:
                    v = public[:, j - k_priv]
                    w = np.full(v.size, 1.0 / max(v.size, 1))
                binary = bool(np.all((v == 0) | (v == 1)))
                if not binary:
                    q = np.linspace(0, 1, n_knots + 2)[1:-1]
                    inner = _weighted_quantiles(v, w, q) if n_knots else np.zeros(0)
                    lo, hi = float(v.min()), float(v.max())
                    inner = np.unique(inner[(inner > lo) & (inner < hi)])
                    t = np.r_[[lo] * (spline_degree + 1), inner, [hi] * (spline_degree + 1)]
                    marginals.append(_Marginal("spline", (j,), t, spline_degree))
                    n_priv_groups += is_priv
                    continue
            marginals.append(_Marginal("dummy", tuple(cols)))
            n_priv_groups += is_priv
        # private groups first (cols_by_group keeps insertion order: private then public)
        terms: list[tuple[int, ...]] = []
        ranges = [range(m.size) for m in marginals]
        for combo in itertools.product(*ranges):
            if sum(c > 0 for c in combo) <= interaction_order:
                terms.append(combo)
        terms.sort(key=lambda c: (sum(x > 0 for x in c), c))
        term_names = []
        for combo in terms:
            parts = []
            for m, c in zip(marginals, combo, strict=True):
                if c == 0:
                    continue
                if m.kind == "dummy":
                    parts.append(names[m.columns[c - 1]])
                else:
                    parts.append(f"bs({names[m.columns[0]]})[{c}]")
            term_names.append(":".join(parts) if parts else "1")
        pen = _difference_penalty(marginals, terms)
        return cls(
            n_knots,
            spline_degree,
            interaction_order,
            k_priv,
            tuple(marginals),
            n_priv_groups,
            tuple(terms),
            tuple(term_names),
            pen,
        )

    @property
    def n_basis(self) -> int:
        """Number of basis functions J."""
        return len(self.terms)

    @property
    def has_public(self) -> bool:
        """Whether some basis function has a non-constant public factor."""
        g = self.n_private_groups
        return any(any(c > 0 for c in t[g:]) for t in self.terms)

    def _product(self, u: FloatArray, groups: range) -> FloatArray:
        out = np.ones((u.shape[0], self.n_basis))
        idx = np.asarray(self.terms, dtype=np.int64)
        for g in groups:
            if np.all(idx[:, g] == 0):
                continue
            out *= self.marginals[g].evaluate(u)[:, idx[:, g]]
        return out

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

        Examples
        --------
        >>> import numpy as np
        >>> ref = np.linspace(0, 1, 11)[:, None]
        >>> b = BSplineBasis.build(1, ref, np.full(11, 1 / 11), np.zeros((2, 0)), (0,), (), ("x",))
        >>> b.split(np.array([[0.3]]), None)[1].shape
        (1, 5)
        """
        private = np.asarray(private, dtype=float)
        g = self.n_private_groups
        u = private
        if public is not None and self.has_public:
            u = np.hstack([private, np.asarray(public, dtype=float)])
        P = self._product(u, range(g))
        if public is None or not self.has_public:
            return None, P
        return self._product(u, range(g, len(self.marginals))), P

    def private_only(self, private: FloatArray) -> FloatArray:
        """Private factors alone (for reference points).

        Examples
        --------
        >>> import numpy as np
        >>> ref = np.linspace(0, 1, 11)[:, None]
        >>> b = BSplineBasis.build(0, ref, np.full(11, 1 / 11), np.zeros((2, 0)), (0,), (), ("x",))
        >>> b.private_only(ref).shape
        (11, 4)
        """
        return self.split(private, None)[1]

    def penalty(self) -> FloatArray:
        r"""Ridge penalty :math:`\Omega` (J x J) for :func:`fit_ridge_series`.

        Main effects of a spline get the second-order difference penalty of P-splines
        (Eilers and Marx, 1996) on their B-spline coefficients (with the constant
        reparametrisation the first coefficient is the reference, so the penalty acts on
        :math:`(0, \gamma_2, \dots, \gamma_K)`); dummies and interaction terms get an
        identity penalty; the constant is never penalised.

        Examples
        --------
        >>> import numpy as np
        >>> ref = np.linspace(0, 1, 11)[:, None]
        >>> b = BSplineBasis.build(2, ref, np.full(11, 1 / 11), np.zeros((2, 0)), (0,), (), ("x",))
        >>> bool(np.allclose(b.penalty()[0], 0))
        True
        """
        return self._penalty.copy()


def _difference_penalty(marginals: list[_Marginal], terms: list[tuple[int, ...]]) -> FloatArray:
    J = len(terms)
    pen = np.zeros((J, J))
    pos = {t: i for i, t in enumerate(terms)}
    for i, t in enumerate(terms):
        if sum(c > 0 for c in t) > 1 or (
            sum(c > 0 for c in t) == 1
            and marginals[int(np.argmax(np.array(t) > 0))].kind == "dummy"
        ):
            pen[i, i] = 1.0
    for g, m in enumerate(marginals):
        if m.kind != "spline" or m.size < 3:
            continue
        K = m.size
        D2 = np.diff(np.eye(K), n=2, axis=0)[:, 1:]  # acts on (gamma_2..gamma_K)
        block = D2.T @ D2
        idx = []
        for c in range(1, K):
            key = tuple(c if h == g else 0 for h in range(len(marginals)))
            idx.append(pos[key])
        pen[np.ix_(idx, idx)] += block
    return pen


def ridge_penalty(basis: object) -> FloatArray:
    r"""The ridge penalty :math:`\Omega` of a basis: its own, else identity off the constant.

    Examples
    --------
    >>> import numpy as np
    >>> from privinfer.nuisance import PolynomialBasis
    >>> b = PolynomialBasis.build(1, np.zeros((4, 1)) + np.arange(4.0)[:, None],
    ...                           np.full(4, 0.25), np.zeros((4, 0)), (0,), (), ("x",))
    >>> ridge_penalty(b).tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    if hasattr(basis, "penalty"):
        return np.asarray(basis.penalty(), dtype=float)
    names = tuple(basis.names)  # type: ignore[attr-defined]
    return np.diag([0.0 if nm == "1" else 1.0 for nm in names])


@dataclass(frozen=True)
class RidgeSeriesFit:
    r"""Coefficients of a ridge-penalised private series fit.

    Attributes
    ----------
    coef : ndarray of shape (J,)
        :math:`\beta`.
    ridge : float
        The relative ridge :math:`\lambda`.
    scale : float
        :math:`s = \mathrm{tr}\,G / \mathrm{tr}\,\Omega` (the penalty is
        :math:`\lambda s\Omega`).
    repair : GramRepair or None
        Eigenvalue repair of :math:`G + \lambda s\Omega` (``None`` when none).

    Examples
    --------
    >>> G = np.array([[1.0, 0.5], [0.5, 1.0]]); c = np.array([1.0, 0.0])
    >>> fit = fit_ridge_series(G, c, ridge=0.1)
    >>> fit.coef.round(3).tolist(), fit.ridge, fit.scale, fit.repair
    ([1.146, -0.521], 0.1, 1.0, None)

    A ridge shrinks the coefficients towards zero (the unpenalised fit is
    ``[1.333, -0.667]``):

    >>> bool(np.abs(fit.coef).sum() < np.abs(fit_ridge_series(G, c).coef).sum())
    True
    """

    coef: FloatArray
    ridge: float
    scale: float
    repair: GramRepair | None


def fit_ridge_series(
    G: FloatArray,
    c: FloatArray,
    *,
    ridge: float = 0.0,
    penalty: FloatArray | None = None,
    alpha: float = 1.0,
    n_obs: int | None = None,
    label: str = "ridge series",
) -> RidgeSeriesFit:
    r"""Solve :math:`(G + \lambda s\,\Omega)\beta = c` for a private series fit.

    ``G`` and ``c`` are the private Gram matrix and cross moment
    (:func:`privinfer.inversion.private_gram`, :func:`~privinfer.inversion.private_cross_moment`)
    of any public x private basis; :math:`s = \mathrm{tr}\,G/\mathrm{tr}\,\Omega` makes the
    ridge ``lambda`` scale-free. Below ``alpha = 1`` the penalised matrix can still be
    indefinite; its eigenvalues are then floored (:func:`~privinfer.nuisance.repair_gram`)
    with an :class:`~privinfer.exceptions.IndefiniteGramWarning`. At ``alpha = 1`` it is
    the ordinary (ridge) least-squares solution. Cost O(J^3).

    Parameters
    ----------
    G : ndarray of shape (J, J)
        Private Gram matrix.
    c : ndarray of shape (J,) or (J, k)
        Private cross moment(s) (several right-hand sides allowed, e.g. a Riesz ``M``).
    ridge : float, default=0.0
        Relative ridge :math:`\lambda \ge 0`.
    penalty : ndarray of shape (J, J), optional
        :math:`\Omega`; identity when omitted (use :func:`ridge_penalty`).
    alpha : float, default=1.0
        Keep probability (repairs happen only below 1, or for a singular matrix).
    n_obs : int, optional
        Rows behind ``G``; raises :class:`~privinfer.exceptions.BasisSizeError` if
        ``J >= n_obs``.
    label : str
        Names the fit in warnings.

    Returns
    -------
    RidgeSeriesFit

    Raises
    ------
    BasisSizeError
        If the basis has at least as many functions as rows.
    ValueError
        If ``ridge`` is negative.

    Notes
    -----
    The penalised private least-squares criterion is
    :math:`\beta'G\beta - 2\beta'c + \lambda s\,\beta'\Omega\beta`, the private risk
    :math:`E(Y - \beta'\varphi)^2 - EY^2` plus a penalty (Kormos and van der Vaart, 2026, sec. 6).

    Examples
    --------
    >>> import numpy as np
    >>> G = np.array([[1.0, 0.5], [0.5, 1.0]]); c = np.array([1.0, 0.0])
    >>> np.round(fit_ridge_series(G, c).coef, 3).tolist()
    [1.333, -0.667]
    """
    owner = "fit_ridge_series"
    ridge = check_in_interval(ridge, "ridge", owner, 0.0, np.inf)
    alpha = check_alpha(alpha, owner)
    G = 0.5 * (np.asarray(G, dtype=float) + np.asarray(G, dtype=float).T)
    J = G.shape[0]
    if n_obs is not None and n_obs <= J:
        raise BasisSizeError(
            f"{label}: the basis has {J} functions but only {n_obs} rows; lower the degree or "
            "the number of knots."
        )
    Om = np.eye(J) if penalty is None else np.asarray(penalty, dtype=float)
    tr_om = float(np.trace(Om))
    scale = float(np.trace(G)) / tr_om if tr_om > 0 else 0.0
    H = G + ridge * scale * Om
    repair = None
    if alpha < 1.0:
        H, repair = repair_gram(H, label)
        if repair is not None:
            warnings.warn(
                f"{label}: penalised Gram matrix had {repair.n_floored} eigenvalue(s) below the "
                f"floor {repair.floor:.3g}; they were floored.",
                IndefiniteGramWarning,
                stacklevel=2,
            )
    try:
        coef = np.linalg.solve(H, c)
    except np.linalg.LinAlgError:
        coef = np.linalg.lstsq(H, c, rcond=None)[0]
    return RidgeSeriesFit(coef, ridge, scale, repair)
