r"""Nuisances of the treatment-effect estimators, fitted per fold through :math:`Q_X^{-1}`.

Each nuisance is a frozen object that evaluates itself on a chunk of held-out rows as the
score elements of :mod:`privinfer.models.scores` (values and reference expectations):

* :class:`SeriesOutcome`: :math:`\mu(k, x) = \beta_k'\varphi`, :math:`\beta_k = G_k^{-1}c_k`;
* :class:`KernelOutcome`: a private Nadaraya-Watson fit, whose reference terms come from
  evaluating it at the reference points (Kormos and van der Vaart, 2026, Example 11);
* :class:`SeriesRiesz`: automatic Riesz representers :math:`\rho_k = 1\{d=k\}\theta_k'\varphi`,
  :math:`\theta_k = G_k^{-1}\frac1n\sum Q_X^{-1}[c_k\varphi]`, and the ATT's odds
  :math:`\theta_w = G_0^{-1}\frac1n\sum Q_X^{-1}[d\varphi]`;
* :class:`PropensityRiesz`: :math:`1\{d=k\}/\pi_k(x)` from a private logistic propensity,
  clipped, with single-index reference expectations.

:func:`choose_basis` picks the series basis (default rule, fixed degree or private CV).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import DataMismatchError
from privinfer.inversion import (
    ReferenceDesign,
    index_expectation,
    qbar_linear,
    qbar_quadratic,
)
from privinfer.models._inputs import TreatmentData
from privinfer.models._suffstats import FoldFit
from privinfer.models.scores import OutcomeElements, RieszElements
from privinfer.nuisance.basis import PolynomialBasis
from privinfer.nuisance.crossval import private_cv_kernel, private_cv_series
from privinfer.nuisance.kernel import KernelReference, private_kernel_regression
from privinfer.nuisance.logit import fit_private_logit

__all__ = [
    "KernelOutcome",
    "PropensityRiesz",
    "SeriesOutcome",
    "SeriesRiesz",
    "choose_basis",
    "kernel_outcome",
    "propensity_riesz",
    "series_outcome",
    "series_riesz",
]

#: Effective sample size n * alpha^2 from which the default series degree is 3.
_DEGREE3_EFFECTIVE_N = 8000
#: Rows of the smallest treatment arm required per basis function by the default degree.
_ROWS_PER_BASIS = 20
#: Grid size of single-index reference expectations (interpolation error reported).
_GRID = 129


# -- series basis ----------------------------------------------------------------------
def _default_degree(n_obs: int, alpha: float) -> int:
    """Default series degree: 3 when the effective sample size allows, else 2.

    Rate double robustness needs the basis to grow with ``n``; privatisation inflates the
    noise of deconvolved Gram matrices by about ``1/alpha``, so the rule looks at the
    effective sample size ``n alpha^2``: degree 3 from ``n alpha^2 >= 8000`` on, else 2.
    The basis is then shrunk until each treatment arm has at least
    ``_ROWS_PER_BASIS`` rows per basis function. Pass ``degree=`` to override.
    """
    return 3 if n_obs * alpha**2 >= _DEGREE3_EFFECTIVE_N else 2


def choose_basis(
    degree: int | str | None,
    inputs: TreatmentData,
    reference: ReferenceDesign,
    alpha: float,
    cv_folds: Callable[[], IntArray],
    n_folds: int,
    owner: str,
) -> PolynomialBasis:
    """The series basis: the default rule (``None``), a fixed degree, or private CV (``"cv"``).

    ``cv_folds`` draws the folds of the cross-validation (called only for ``"cv"``).

    Raises
    ------
    DataMismatchError
        The basis has at least half as many functions as the smallest arm has rows.
    """
    spec = inputs.spec

    def build(deg: int) -> PolynomialBasis:
        return PolynomialBasis.build(
            deg,
            reference.U,
            reference.weights,
            inputs.U_pub,
            spec.private_groups,
            spec.public_groups,
            spec.private_names + spec.public_names,
        )

    n_min = int(min(np.bincount(inputs.d)))
    if degree is None:
        basis = build(_default_degree(inputs.y.size, alpha))
        while basis.n_basis > n_min / _ROWS_PER_BASIS and basis.degree > 1:
            basis = build(basis.degree - 1)
    elif degree == "cv":
        candidates = [build(deg) for deg in (1, 2, 3)]
        basis = _degree_by_private_cv(
            candidates, inputs, reference, alpha, cv_folds(), n_folds, n_min
        )
    else:
        basis = build(int(degree))
    if basis.n_basis >= 0.5 * n_min:
        raise DataMismatchError(
            f"{owner}: the series basis has {basis.n_basis} functions but the smallest "
            f"treatment arm only {n_min} rows; lower degree={basis.degree}."
        )
    return basis


def _degree_by_private_cv(
    candidates: list[PolynomialBasis],
    inputs: TreatmentData,
    reference: ReferenceDesign,
    alpha: float,
    folds: IntArray,
    n_folds: int,
    n_min: int,
) -> PolynomialBasis:
    r"""Series degree (1 to 3) minimising the private out-of-fold outcome risk.

    The risk :math:`\sum_k E[1\{D=k\}(Y - \mu(k, X))^2]` is estimated through
    :math:`Q_X^{-1}` by :func:`privinfer.nuisance.private_cv_series` (unbiased for the
    true-data risk), summed over treatment levels; degrees whose basis would leave
    fewer than ``_ROWS_PER_BASIS`` rows per function in the smallest arm are skipped.
    """
    candidates = [b for b in candidates if b.degree == 1 or b.n_basis <= n_min / _ROWS_PER_BASIS]
    public = inputs.U_pub if inputs.U_pub.shape[1] else None
    total = np.zeros(len(candidates))
    for k in range(inputs.n_levels):
        arm = (inputs.d == k).astype(float)
        cv = private_cv_series(
            inputs.y,
            inputs.U_priv,
            public,
            alpha=alpha,
            ref_private=reference.U,
            ref_weights=reference.weights,
            bases=candidates,
            ridges=(0.0,),
            n_folds=n_folds,
            folds=folds,
            weights=arm if inputs.w is None else arm * inputs.w,
        )
        total += cv.table.sort_values("candidate")["risk"].to_numpy()
    return candidates[int(np.argmin(total))]


# -- outcome regression ------------------------------------------------------------------
@dataclass(frozen=True)
class SeriesOutcome:
    r"""Series outcome regressions :math:`\hat\mu_k = \beta_k'\varphi` of one fold."""

    betas: tuple[FloatArray, ...]
    mean: FloatArray
    outer: FloatArray

    def at(self, A: FloatArray | None, Phi: FloatArray, sl: slice) -> OutcomeElements:
        r"""Values, :math:`\bar Q\hat\mu_k = \beta_k'(a\circ m)` and :math:`\bar Q\hat\mu_k^2`."""
        return OutcomeElements(
            Phi @ np.column_stack(self.betas),
            tuple(qbar_linear(b, self.mean, A) for b in self.betas),
            tuple(qbar_quadratic(b, b, self.outer, A) for b in self.betas),
        )

    def cross(self, theta: FloatArray, k: int, A: FloatArray | None) -> FloatArray:
        r""":math:`\bar Q[(\theta'\varphi)\hat\mu_k]` per row."""
        return qbar_quadratic(theta, self.betas[k], self.outer, A)


def series_outcome(fit: FoldFit, mean: FloatArray, outer: FloatArray) -> SeriesOutcome:
    r""":math:`\beta_k = G_k^{-1}c_k` from a fold fit."""
    betas = tuple(np.linalg.solve(G, c) for G, c in zip(fit.G, fit.c, strict=True))
    return SeriesOutcome(betas, mean, outer)


@dataclass(frozen=True)
class KernelOutcome:
    r"""Kernel outcome regressions of one fold, at its held-out rows and the reference points."""

    at_rows: FloatArray
    at_ref: FloatArray
    P_ref: FloatArray
    weights: FloatArray

    def at(self, A: FloatArray | None, Phi: FloatArray, sl: slice) -> OutcomeElements:
        r"""Values; :math:`\bar Q\hat\mu_k`, :math:`\bar Q\hat\mu_k^2` from the reference points."""
        L = self.at_ref.shape[1]
        return OutcomeElements(
            self.at_rows[sl],
            tuple(np.asarray(self.weights @ self.at_ref[:, k]) for k in range(L)),
            tuple(np.asarray(self.weights @ self.at_ref[:, k] ** 2) for k in range(L)),
        )

    def cross(self, theta: FloatArray, k: int, A: FloatArray | None) -> FloatArray:
        r""":math:`\bar Q[(\theta'p)\hat\mu_k]` (private covariates only: equal for all rows)."""
        return np.asarray((self.P_ref @ theta * self.weights) @ self.at_ref[:, k])


def kernel_outcome(
    inputs: TreatmentData,
    train: IntArray,
    rows: IntArray,
    folds: IntArray,
    reference: ReferenceDesign,
    kernel_ref: KernelReference,
    P_ref: FloatArray,
    bandwidth: float | str,
    alpha: float,
) -> KernelOutcome:
    r"""Private Nadaraya–Watson fits of :math:`\mu(k, \cdot)` on the training rows.

    Fitted at the held-out ``rows`` and at the reference points; the latter give the
    reference terms :math:`E_{\bar Q}\hat\mu_k`, :math:`E_{\bar Q}\hat\mu_k^2` and
    :math:`E_{\bar Q}[p_j\hat\mu_k]` of the score. Bandwidth: a number, Scott's rule on
    the private spread, or private cross-validation over multiples of it, reusing the
    training rows' cross-fitting folds as CV folds.
    """
    L = inputs.n_levels
    x_eval = np.vstack([inputs.U_priv[rows], reference.U])
    at_rows = np.empty((rows.size, L))
    at_ref = np.empty((reference.n_points, L))
    for k in range(L):
        tr = train[inputs.d[train] == k]
        h: Any = bandwidth
        cv_folds = np.unique(folds[tr], return_inverse=True)[1]
        if h == "cv" and cv_folds.max() >= 1:
            h = private_cv_kernel(
                inputs.y[tr],
                inputs.U_priv[tr],
                alpha=alpha,
                reference=kernel_ref,
                n_folds=int(cv_folds.max()) + 1,
                folds=cv_folds,
            ).choice
        elif h == "cv":
            h = "scott"
        fit = private_kernel_regression(
            inputs.y[tr],
            inputs.U_priv[tr],
            alpha=alpha,
            reference=kernel_ref,
            x_eval=x_eval,
            bandwidth=h,
            warn=False,
        )
        at_rows[:, k] = fit.predictions[: rows.size]
        at_ref[:, k] = fit.predictions[rows.size :]
    return KernelOutcome(at_rows, at_ref, P_ref, reference.weights)


Outcome = SeriesOutcome | KernelOutcome


# -- Riesz representers ------------------------------------------------------------------
@dataclass(frozen=True)
class SeriesRiesz:
    r"""Automatic Riesz representers :math:`\theta_k` (one per level) and the ATT's odds."""

    thetas: tuple[FloatArray, ...]
    theta_w: FloatArray | None
    mean: FloatArray
    outer: FloatArray
    #: no interpolation: every reference expectation is exact in the moments
    interp_error: float = 0.0

    def _elements(
        self, theta: FloatArray, k: int, A: FloatArray | None, Phi: FloatArray, mu: Outcome
    ) -> RieszElements:
        return RieszElements(
            Phi @ theta,
            qbar_linear(theta, self.mean, A),
            mu.cross(theta, k, A),
            qbar_quadratic(theta, theta, self.outer, A),
        )

    def arm(
        self, k: int, A: FloatArray | None, Phi: FloatArray, sl: slice, mu: Outcome
    ) -> RieszElements:
        r"""Elements of :math:`\theta_k'\varphi`, the weight of arm ``k``."""
        return self._elements(self.thetas[k], k, A, Phi, mu)

    def odds(self, A: FloatArray | None, Phi: FloatArray, sl: slice, mu: Outcome) -> RieszElements:
        r"""Elements of the odds :math:`\theta_w'\varphi` (weights the control arm)."""
        assert self.theta_w is not None  # internal invariant: fitted for the ATT
        return self._elements(self.theta_w, 0, A, Phi, mu)

    def chunk(
        self,
        U_priv: FloatArray,
        A: FloatArray | None,
        Phi: FloatArray,
        sl: slice,
        mu: Outcome,
        odds: bool,
    ) -> tuple[list[RieszElements], RieszElements | None, int]:
        """Elements of every arm's weight (and the odds) on a chunk of held-out rows."""
        arms = [self.arm(k, A, Phi, sl, mu) for k in range(len(self.thetas))]
        return arms, self.odds(A, Phi, sl, mu) if odds else None, 0


def series_riesz(
    fit: FoldFit, mean: FloatArray, outer: FloatArray, *, functional: bool, odds: bool
) -> SeriesRiesz:
    r""":math:`\theta_k = G_k^{-1}e` with :math:`e = \frac1n\sum Q_X^{-1}[\varphi]`.

    For a user functional :math:`e_k = \frac1n\sum Q_X^{-1}[c_k\varphi]`; with ``odds``
    also :math:`\theta_w = G_0^{-1}\frac1n\sum Q_X^{-1}[d\varphi]`.
    """
    if functional:
        assert fit.e_cphi is not None  # internal invariant: statistics of c_k accumulated
        thetas = tuple(np.linalg.solve(G, e) for G, e in zip(fit.G, fit.e_cphi, strict=True))
    else:
        thetas = tuple(np.linalg.solve(G, fit.e_phi) for G in fit.G)
    theta_w = np.linalg.solve(fit.G[0], fit.e_dphi) if odds else None
    return SeriesRiesz(thetas, theta_w, mean, outer)


def _propensity_links(clip: float) -> list[Callable[[FloatArray], FloatArray]]:
    """Weights of the propensity route as functions of the logistic index.

    ``1/(1-pi)``, ``1/pi`` and the odds ``pi/(1-pi)``, with ``pi`` clipped to
    ``[clip, 1 - clip]``.
    """

    def pi_c(e: FloatArray) -> FloatArray:
        return np.clip(expit(e), clip, 1 - clip)

    return [
        lambda e: 1.0 / (1.0 - pi_c(e)),
        lambda e: 1.0 / pi_c(e),
        lambda e: pi_c(e) / (1 - pi_c(e)),
    ]


@dataclass(frozen=True)
class PropensityRiesz:
    r"""Inverse propensity weights of one fold from a private logistic fit, clipped.

    ``t`` is the public part of the index at the held-out rows; ``E_link[j]`` (None at
    ``alpha = 1``) holds, per held-out row, :math:`\bar Q g_j`, :math:`\bar Q[g_j p]` and
    :math:`\bar Q g_j^2` for the links :math:`g_j` of :func:`_propensity_links`.
    """

    t: FloatArray
    g_priv: FloatArray
    clip: float
    betas: tuple[FloatArray, ...]
    E_link: tuple[FloatArray, ...] | None
    interp_error: float

    def propensity(self, U_priv: FloatArray, sl: slice) -> FloatArray:
        r"""Clipped propensity :math:`\pi(x)` of the held-out rows in ``sl``."""
        return np.clip(expit(self.t[sl] + U_priv @ self.g_priv), self.clip, 1 - self.clip)

    def _elements(
        self, j: int, k: int, r: FloatArray, A: FloatArray | None, sl: slice
    ) -> RieszElements:
        if self.E_link is None:
            return RieszElements(r, 0.0, 0.0, 0.0)
        E = self.E_link[j][sl]
        eb = (E[:, 1:-1] * (A if A is not None else 1.0)) @ self.betas[k]
        return RieszElements(r, E[:, 0], eb, E[:, -1])

    def arm(self, k: int, pi: FloatArray, A: FloatArray | None, sl: slice) -> RieszElements:
        r"""Elements of :math:`1/\pi` (``k = 1``) or :math:`1/(1-\pi)` (``k = 0``)."""
        return self._elements(k, k, 1 / pi if k == 1 else 1 / (1 - pi), A, sl)

    def odds(self, pi: FloatArray, A: FloatArray | None, sl: slice) -> RieszElements:
        r"""Elements of the odds :math:`\pi/(1-\pi)` (weights the control arm)."""
        return self._elements(2, 0, pi / (1 - pi), A, sl)

    def chunk(
        self,
        U_priv: FloatArray,
        A: FloatArray | None,
        Phi: FloatArray,
        sl: slice,
        mu: Outcome,
        odds: bool,
    ) -> tuple[list[RieszElements], RieszElements | None, int]:
        """Elements of both arms' weights (and the odds), and the number of clipped rows."""
        pi = self.propensity(U_priv, sl)
        n_clipped = int(np.sum((pi <= self.clip) | (pi >= 1 - self.clip)))
        arms = [self.arm(k, pi, A, sl) for k in (0, 1)]
        return arms, self.odds(pi, A, sl) if odds else None, n_clipped


def propensity_riesz(
    inputs: TreatmentData,
    train: IntArray,
    rows: IntArray,
    reference: ReferenceDesign,
    P_ref: FloatArray,
    betas: tuple[FloatArray, ...],
    clip: float,
    alpha: float,
    fold: int,
) -> PropensityRiesz:
    """Private logistic propensity on the training rows, with its reference expectations."""
    U_ref = reference.U
    fit = fit_private_logit(
        (inputs.d[train] == 1).astype(float),
        inputs.U_pub[train],
        inputs.U_priv[train],
        U_ref,
        reference.weights,
        alpha,
        label=f"private logistic propensity, fold {fold}",
    )
    err = fit.interp_error
    g_pub, g_priv = fit.split(inputs.U_pub.shape[1])
    t = np.column_stack([np.ones(rows.size), inputs.U_pub[rows]]) @ g_pub
    E_link = None
    if alpha < 1.0:
        eta_ref = U_ref @ g_priv
        P_ref1 = np.column_stack([np.ones(U_ref.shape[0]), P_ref])
        blocks = []
        for link in _propensity_links(clip):
            E, e = index_expectation(t, eta_ref, P_ref1, reference.weights, link, grid_size=_GRID)
            E2, e2 = index_expectation(
                t,
                eta_ref,
                P_ref1[:, :1],
                reference.weights,
                lambda v, g=link: g(v) ** 2,
                grid_size=_GRID,
            )
            blocks.append(np.column_stack([E, E2]))
            err = max(err, e, e2)
        E_link = tuple(blocks)
    return PropensityRiesz(t, g_priv, clip, betas, E_link, err)
