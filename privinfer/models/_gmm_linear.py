r"""Separable engine of linear private GMM: OLS and IV through private second moments.

Linear moments :math:`\phi_\theta(v, x) = z\,(y - x'\theta)` are sums of products of two
design columns, each a function of public or of private variables only
(:mod:`privinfer.models._gmm_design`). With the private second moments
:math:`S = \frac1n\sum_i Q_X^{-1}[c\,c']` the estimate is a closed form,

.. math:: \hat\theta = (S_{xz}AS_{zx})^{-1}S_{xz}AS_{zy},

with :math:`A = S_{zz}^{-1}` (OLS, 2SLS) or :math:`A = \hat{\bar\Phi}^{-1}` (efficient
two-step and iterated GMM), and the sandwich covariance uses the private moment rows,
visited in chunks: O(n K^2 + M K^2), never O(n M).

The *non-robust* covariance replaces :math:`\bar\Phi` by :math:`\hat\sigma^2S_{zz}` with
the private residual variance :math:`\hat\sigma^2 = w'Sw`, :math:`w = (1, -\theta)`; it
ignores the extra variance that the privacy noise puts into the moment rows, so it is the
classical (statsmodels ``nonrobust``, linearmodels ``unadjusted``) covariance at
``alpha = 1`` only. The private :math:`R^2 = 1 - w'Sw / (S_{yy} - \bar y^2)` uses the
same deconvolved moments.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from privinfer._typing import FloatArray
from privinfer.covariance import sandwich
from privinfer.exceptions import IndefiniteGramWarning
from privinfer.inversion import ReferenceMoments, reference_design
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._gmm_common import (
    FitOptions,
    GMMEngine,
    GMMFit,
    check_nonsingular,
    inv_cov,
    j_statistic,
    weights_facts,
)
from privinfer.models._gmm_design import LinearDesign, new_regressors
from privinfer.models._weakiv import WeakIVStats, weak_iv_stats
from privinfer.nuisance.series import GramRepair, repair_gram

__all__ = ["LinearEngine"]


@dataclass(frozen=True)
class _Moments:
    """Private second moments of all design columns and what produced them."""

    S: FloatArray
    table: FloatArray
    raw: FloatArray
    pub_mean: FloatArray
    ref: ReferenceMoments | None
    exact: bool
    alpha: float


@dataclass(frozen=True)
class _Estimate:
    """Weighted estimate, its weight and the weighting history."""

    theta: FloatArray
    A: FloatArray
    n_steps: int
    repairs: tuple[GramRepair, ...]
    notes: tuple[str, ...]


class LinearEngine(GMMEngine):
    """OLS and IV with private and public regressors and instruments.

    Parameters
    ----------
    design : LinearDesign
        Released design (:func:`~privinfer.models._gmm_design.build_linear_design`).
    mechanism : AlphaIdentity
    kind : {"ols", "iv"}
    formula, dep_variable : str
    reference_size : int
    intercept : bool
        Whether the model has an intercept (centred :math:`R^2`).
    weights : str, optional
        Name of the public sampling-weights column (the design holds the weights).
    """

    def __init__(
        self,
        design: LinearDesign,
        mechanism: AlphaIdentity,
        kind: str,
        formula: str,
        dep_variable: str,
        reference_size: int,
        intercept: bool,
        weights: str | None = None,
    ) -> None:
        self.design = design
        self.weights = weights
        self.mechanism = mechanism
        self.kind = kind
        self.formula = formula
        self.dep_variable = dep_variable
        self.reference_size = reference_size
        self.intercept = intercept
        self.param_names = tuple(design.names[j] for j in design.x_idx)
        self.k_params = int(design.x_idx.size)
        self.k_moms = int(design.z_idx.size)
        self.n_obs = design.n_obs

    def supports_nonrobust(self) -> bool:
        """Linear models have the classical homoskedastic covariance."""
        return True

    # -- stages --------------------------------------------------------------------------
    def _moments(self, rng: np.random.Generator) -> _Moments:
        d = self.design
        raw, pub_mean = d.raw_moments()
        kp = d.n_private
        alpha = self.mechanism.alpha
        if alpha < 1.0 and kp:
            points = reference_design(self.mechanism, d.spec, self.reference_size, rng)
            ref, exact = points.moments(), points.exact
            mean, outer = ref.mean, ref.outer
        else:
            ref, exact = None, True
            mean, outer = np.zeros(kp), np.zeros((kp, kp))
        eff_alpha = alpha if kp else 1.0
        S = d.private_second_moments(raw, pub_mean, mean, outer, eff_alpha)
        return _Moments(S, d.reference_table(mean, outer), raw, pub_mean, ref, exact, eff_alpha)

    def _one_step_weight(
        self, Szz: FloatArray, o: FitOptions
    ) -> tuple[FloatArray, tuple[GramRepair, ...], tuple[str, ...]]:
        if o.initial_weight is not None:
            return o.initial_weight, (), ()
        if np.linalg.eigvalsh(0.5 * (Szz + Szz.T)).min() > 0.0:
            return np.linalg.inv(Szz), (), ()
        # only an indefinite Gram is repaired: the weight must be positive definite
        fixed, info = repair_gram(Szz, "instrument Gram (one-step weight)")
        if info is None:
            return np.linalg.inv(fixed), (), ()
        zn = [self.design.names[j] for j in self.design.z_idx]
        msg = (
            f"The deconvolved Gram matrix of {zn!r} is indefinite (smallest eigenvalue "
            f"{info.min_eigenvalue:.3g}); its eigenvalues were floored for the one-step "
            "weight only."
        )
        warnings.warn(msg, IndefiniteGramWarning, stacklevel=5)
        return np.linalg.inv(fixed), (info,), (msg,)

    def _coef(self, theta: FloatArray) -> FloatArray:
        w = np.zeros(len(self.design.names))
        w[0] = 1.0
        w[self.design.x_idx] -= theta
        return w

    def _phi(
        self, m: _Moments, theta: FloatArray, o: FitOptions, bread: FloatArray | None = None
    ) -> tuple[FloatArray, FloatArray | None]:
        """Moment covariance at ``theta`` (and influence ``rows @ bread'``), one chunked pass."""
        d = self.design
        z, x = d.z_idx, d.x_idx
        w = self._coef(theta)
        if o.cov_type == "nonrobust" and bread is None:
            return float(w @ m.S @ w) * m.S[np.ix_(z, z)], None
        gbar = m.S[z, 0] - m.S[np.ix_(z, x)] @ theta
        mu = gbar if o.center else None
        Phi, infl = d.moment_outer(
            w[:, None], z, m.table, m.alpha, o.codes, o.small_g, mu=mu, bread=bread
        )
        if o.cov_type == "nonrobust":
            Phi = float(w @ m.S @ w) * m.S[np.ix_(z, z)]
        return Phi, infl

    def _estimate(self, m: _Moments, o: FitOptions) -> _Estimate:
        d = self.design
        z, x = d.z_idx, d.x_idx
        zn = [d.names[j] for j in z]
        Szz, Szx, Szy = m.S[np.ix_(z, z)], m.S[np.ix_(z, x)], m.S[z, 0]
        what = "instruments" if self.kind == "iv" else "regressors"
        check_nonsingular(Szz, zn, f"Gram matrix of the {what}", o.owner)
        A, repairs, notes = self._one_step_weight(Szz, o)

        def solve(W: FloatArray) -> FloatArray:
            return np.linalg.solve(Szx.T @ W @ Szx, Szx.T @ W @ Szy)

        check_nonsingular(Szx.T @ A @ Szx, list(self.param_names), "moment Jacobian D'AD", o.owner)
        theta = solve(A)
        n_steps = 1
        if o.weighting != "one-step" and z.size != x.size:
            for _ in range(1 if o.weighting == "two-step" else o.max_iter):
                A = inv_cov(self._phi(m, theta, o)[0], zn, o.owner)
                new = solve(A)
                n_steps += 1
                done = np.max(np.abs(new - theta)) <= o.tol * (1 + np.max(np.abs(theta)))
                theta = new
                if done:
                    break
        return _Estimate(theta, A, n_steps, repairs, notes)

    def _reference_error(self, m: _Moments, A: FloatArray) -> dict[str, float]:
        if m.ref is None or m.exact:
            return {}
        d = self.design
        z, x = d.z_idx, d.x_idx

        def theta_at(j: int) -> Callable[[FloatArray, FloatArray], float]:
            def f(mean: FloatArray, outer: FloatArray) -> float:
                Sr = d.private_second_moments(m.raw, m.pub_mean, mean, outer, m.alpha)
                Szx = Sr[np.ix_(z, x)]
                return float(np.linalg.solve(Szx.T @ A @ Szx, Szx.T @ A @ Sr[z, 0])[j])

            return f

        return {name: m.ref.error(theta_at(j)) for j, name in enumerate(self.param_names)}

    def _rsquared(self, m: _Moments, theta: FloatArray) -> float:
        w = self._coef(theta)
        ssr = float(w @ m.S @ w)
        tss = m.S[0, 0] - (m.pub_mean[0] ** 2 if self.intercept else 0.0)
        return 1.0 - ssr / tss

    def _facts(self, o: FitOptions, exactly: bool) -> list[tuple[str, str]]:
        weighting = o.weighting
        if self.kind == "iv" and o.weighting == "one-step" and o.initial_weight is None:
            weighting = "2SLS (one-step)"
        if self.kind == "ols":
            weighting = "OLS (exactly identified)"
        elif exactly:
            weighting = "IV (exactly identified)"
        facts = [
            ("Model:", self.kind.upper()),
            ("Weighting:", weighting),
            ("Covariance:", o.label),
            ("Moments / params:", f"{self.k_moms} / {self.k_params}"),
        ]
        facts += weights_facts(self.weights, self.design.weights_n_eff, self.n_obs)
        return facts

    # -- fit -----------------------------------------------------------------------------
    def fit(self, options: FitOptions, rng: np.random.Generator) -> GMMFit:
        """Closed-form private OLS / IV / GMM with sandwich covariance and diagnostics."""
        o = options
        d = self.design
        m = self._moments(rng)
        est = self._estimate(m, o)
        theta, A = est.theta, est.A
        D = -m.S[np.ix_(d.z_idx, d.x_idx)]
        bread = -np.linalg.solve(D.T @ A @ D, D.T @ A)
        Phi, infl = self._phi(m, theta, o, bread=bread)
        assert infl is not None
        cov, _ = sandwich(D, A, Phi, d.n_obs)
        gbar = m.S[d.z_idx, 0] - m.S[np.ix_(d.z_idx, d.x_idx)] @ theta
        efficient = o.weighting != "one-step"
        tests: dict[str, Any] = {
            "j_test": j_statistic(gbar, A, d.n_obs, self.k_params, efficient=efficient)
        }
        weak = None
        if self.kind == "iv":
            weak = weak_iv_stats(d, m.S, m.table, m.alpha, o.codes, o.small_g)
            tests.update(weak.first_stage())
        return GMMFit(
            params=theta,
            cov=cov,
            influence=infl,
            tests=tests,
            facts=tuple(self._facts(o, d.z_idx.size == d.x_idx.size)),
            repairs=est.repairs,
            notes=est.notes,
            reference_error=self._reference_error(m, A),
            reference_points=0 if m.ref is None else m.ref.n_points,
            reference_exact=m.exact,
            n_steps=est.n_steps,
            rsquared=self._rsquared(m, theta),
            weak_iv=weak,
        )

    def weak_iv(self, options: FitOptions, rng: np.random.Generator) -> WeakIVStats:
        """Anderson-Rubin / first-stage aggregates without the (possibly undefined) estimate."""
        m = self._moments(rng)
        return weak_iv_stats(self.design, m.S, m.table, m.alpha, options.codes, options.small_g)

    # -- prediction ----------------------------------------------------------------------
    def regressors(self, data: Any = None) -> FloatArray:
        """Regressor matrix of the released rows (``data=None``) or of a new frame."""
        d = self.design
        if data is None:
            full = np.hstack([d.public, d.private])
            return full[:, d.x_idx]
        return new_regressors(d, self.intercept, self.mechanism, data)

    def outcome(self) -> FloatArray:
        """Released (public) dependent variable."""
        return self.design.public[:, 0]
