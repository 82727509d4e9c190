r"""Logit engine of private GMM, and average marginal effects with delta-method SEs.

The score :math:`\psi(d - \Lambda(\gamma'\psi))`, :math:`\Lambda = \mathrm{expit}`, is
inverted whole and solved by Newton steps with the exact deconvolved Jacobian
(:func:`privinfer.nuisance.logit.fit_private_logit`); reference expectations go through
the single index, O(n K^2 + T M K^2). Parameters are reported in formula order.

Covariance. The default is the sandwich of the private score rows (``"robust"``, HC0 at
``alpha = 1``). ``"nonrobust"`` is the inverse private information
:math:`(-\hat D)^{-1}/n`, statsmodels' default at ``alpha = 1``; below one it ignores the
privacy noise in the score rows and understates the standard errors.

Average marginal effects. For a regressor :math:`j`,
:math:`\mathrm{AME}_j = \gamma_j\,\frac1n\sum_i Q_X^{-1}[\Lambda'(\gamma'\psi)](V_i, Z_i)`,
an unbiased private version of statsmodels' ``get_margeff(at="overall")``; its
delta-method covariance :math:`J\hat V J'` with the exact private Jacobian
:math:`J_{jk} = \delta_{jk}\bar m + \gamma_j\frac1n\sum_i Q_X^{-1}[\Lambda''\psi_k]`
conditions on the covariates, as statsmodels does.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import norm

from privinfer._repr import short_repr
from privinfer._typing import FloatArray
from privinfer._validation import check_level
from privinfer.covariance import moment_covariance, sandwich
from privinfer.exceptions import PerfectSeparationWarning, SingularDesignError
from privinfer.inversion import index_expectation, invert, reference_design
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._gmm_common import (
    FitOptions,
    GMMEngine,
    GMMFit,
    check_nonsingular,
    j_statistic,
    weights_facts,
)
from privinfer.models._gmm_dask import OmittedInfluence, dask_logit_scores, dask_logit_solve
from privinfer.models._gmm_design import LinearDesign, new_regressors
from privinfer.nuisance.logit import fit_private_logit, private_logit_scores

__all__ = ["LogitEngine", "MarginalEffects"]

#: statsmodels' rule: a row is perfectly predicted when :math:`|d - \hat p| < 10^{-4}`,
#: and separation is suspected when more than a tenth of the rows are.
PREDICTED_TOL = 1e-4
SEPARATION_SHARE = 0.1


@dataclass(frozen=True)
class MarginalEffects:
    r"""Average marginal effects of a private logit, with delta-method covariance.

    Attributes
    ----------
    names : tuple of str
        Regressors (the intercept excluded), in formula order.
    effects : ndarray of shape (p,)
        :math:`\mathrm{AME}_j = \gamma_j\,\overline{\Lambda'}`.
    cov : ndarray of shape (p, p)
        :math:`J\hat VJ'`.

    Examples
    --------
    >>> me = MarginalEffects(("x",), np.array([0.2]), np.array([[0.0004]]))
    >>> me.summary_frame().round(3).to_numpy().tolist()[0][:3]
    [0.2, 0.02, 10.0]
    """

    names: tuple[str, ...]
    effects: FloatArray
    cov: FloatArray
    __repr__ = short_repr  # one line: arrays and tables by their shape

    @property
    def margeff(self) -> pd.Series:
        """Average marginal effects (statsmodels' name)."""
        return pd.Series(self.effects, index=list(self.names))

    @property
    def margeff_se(self) -> pd.Series:
        """Delta-method standard errors."""
        return pd.Series(np.sqrt(np.diag(self.cov)), index=list(self.names))

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Effects, standard errors, z, p-values and ``1 - alpha`` intervals."""
        alpha = check_level(alpha, "MarginalEffects.summary_frame")
        se = self.margeff_se.to_numpy()
        z = self.effects / se
        q = float(norm.ppf(1 - alpha / 2))
        return pd.DataFrame(
            {
                "dy/dx": self.effects,
                "std err": se,
                "z": z,
                "P>|z|": 2 * norm.sf(np.abs(z)),
                "lower": self.effects - q * se,
                "upper": self.effects + q * se,
            },
            index=list(self.names),
        )


@dataclass(frozen=True)
class _Reference:
    U: FloatArray
    w: FloatArray
    exact: bool
    n_points: int
    alpha: float


class LogitEngine(GMMEngine):
    """Logistic regression of a public 0/1 outcome on private and public regressors.

    Parameters
    ----------
    design : LinearDesign
        Columns ``[d, Intercept, public..., private...]``.
    mechanism : AlphaIdentity
    formula, dep_variable : str
    reference_size : int
    weights : str, optional
        Name of the public sampling-weights column (the design holds the weights).
    """

    def __init__(
        self,
        design: LinearDesign,
        mechanism: AlphaIdentity,
        formula: str,
        dep_variable: str,
        reference_size: int,
        weights: str | None = None,
    ) -> None:
        self.design = design
        self.weights = weights
        self.mechanism = mechanism
        self.kind = "logit"
        self.formula = formula
        self.dep_variable = dep_variable
        self.reference_size = reference_size
        #: coefficient k of the Newton solver belongs to design column k + 1
        self._order = np.asarray(design.x_idx, dtype=np.int64) - 1
        self.param_names = tuple(design.names[j] for j in design.x_idx)
        self.k_params = self.k_moms = int(design.x_idx.size)
        self.n_obs = design.n_obs

    def supports_nonrobust(self) -> bool:
        """The inverse information matrix is defined for the logit."""
        return True

    def _reference(self, rng: np.random.Generator) -> _Reference:
        d = self.design
        kp = d.n_private
        alpha = self.mechanism.alpha
        if alpha < 1.0 and kp:
            ref = reference_design(self.mechanism, d.spec, self.reference_size, rng)
            U: FloatArray = ref.U  # type: ignore[assignment]  # not None: a spec was given
            return _Reference(U, ref.weights, ref.exact, ref.n_points, alpha)
        return _Reference(np.zeros((1, kp)), np.ones(1), True, 0, 1.0)

    def _solve(self, ref: _Reference, o: FitOptions) -> tuple[FloatArray, int]:
        d = self.design
        tol = min(o.tol, 1e-11)
        try:
            if isinstance(d, LinearDesign):
                fit = fit_private_logit(
                    d.public[:, 0], d.public[:, 2:], d.private, ref.U, ref.w, ref.alpha,
                    label=o.owner, tol=tol, weights=d.w,
                )  # fmt: skip
            else:
                fit = dask_logit_solve(d, ref.U, ref.w, ref.alpha, tol=tol, label=o.owner)
        except SingularDesignError as err:
            raise SingularDesignError(
                f"{o.owner}: the private logistic moment equations have no root reached by "
                "Newton's method; the outcome may be (quasi-)separated by the covariates or "
                f"alpha too small for this design. ({err})"
            ) from err
        return fit.coef, fit.n_iter

    def fit(self, options: FitOptions, rng: np.random.Generator) -> GMMFit:
        """Private logit: Newton solve, sandwich (or inverse-information) covariance, AMEs."""
        o = options
        d = self.design
        ref = self._reference(rng)
        coef, n_iter = self._solve(ref, o)
        internal = [d.names[j + 1] for j in range(coef.size)]
        nonrobust = o.cov_type == "nonrobust"
        rows: FloatArray | None = None
        span = None
        if isinstance(d, LinearDesign):
            y, pub = d.public[:, 0], d.public[:, 2:]
            rows, jac, interp = private_logit_scores(
                coef, y, pub, d.private, ref.U, ref.w, ref.alpha, weights=d.w
            )
            check_nonsingular(-jac, internal, "logistic information matrix", o.owner)
            gbar = rows.mean(axis=0)
            Phi = None if nonrobust else moment_covariance(
                rows, o.codes, center=o.center, small_g=o.small_g
            )
        else:
            gbar, jac, Phi, interp, span = dask_logit_scores(
                d, coef, ref.U, ref.w, ref.alpha, o.codes,
                center=o.center, small_g=o.small_g, nonrobust=nonrobust,
            )  # fmt: skip
            check_nonsingular(-jac, internal, "logistic information matrix", o.owner)
        A = np.eye(jac.shape[0])
        if Phi is None:
            Phi = -jac  # information equality: the classical (statsmodels default) covariance
        cov, bread = sandwich(jac, A, Phi, d.n_obs)
        infl = OmittedInfluence((d.n_obs, coef.size)) if rows is None else rows @ bread.T
        tests = {"j_test": j_statistic(gbar, A, d.n_obs, A.shape[0], efficient=True)}
        notes = (f"Single-index interpolation error {interp:.2g}.",) if interp > 0 else ()
        separation = self._check_separation(coef, o.owner)
        notes += (separation,) if separation else ()
        facts = (
            ("Model:", "LOGIT"),
            ("Newton steps:", str(n_iter)),
            ("Covariance:", o.label),
            ("Moments / params:", f"{A.shape[0]} / {A.shape[0]}"),
            *weights_facts(self.weights, d.weights_n_eff, d.n_obs),
        )
        p = self._order
        cov_f = cov[np.ix_(p, p)]
        return GMMFit(
            params=coef[p],
            cov=cov_f,
            influence=infl[:, p],
            tests=tests,
            facts=facts,
            notes=notes,
            reference_points=ref.n_points,
            reference_exact=ref.exact,
            margeff=self._margeff(coef, cov, ref, span),
        )

    def _check_separation(self, coef: FloatArray, owner: str) -> str:
        r"""Warn when the fit predicts many released rows perfectly; return the note.

        A row counts as perfectly predicted when :math:`|d_i - \Lambda(\hat\gamma'\psi_i)|
        < 10^{-4}` on its released regressors, i.e. its index is beyond about 9.2 on the
        side of its outcome. All rows so predicted is complete separation, more than a
        tenth possible quasi-complete separation (statsmodels' ``Logit`` rules): the
        likelihood, and the private score equations, then have no root and the
        coefficients only stop growing at the solver's tolerance.
        """
        d = self.design
        func = partial(_predicted_count, coef=coef)
        hits = func(d) if isinstance(d, LinearDesign) else d.sums(func)
        share = hits / d.n_obs
        if share <= SEPARATION_SHARE:
            return ""
        kind = ("Complete separation" if hits == d.n_obs
                else "Possibly quasi-complete separation")
        names = [d.names[k + 1] for k in range(coef.size)]
        largest = names[int(np.argmax(np.abs(coef[1:]))) + 1] if coef.size > 1 else names[0]
        note = (
            f"{kind}: {share:.0%} of the released rows are predicted to within "
            f"{PREDICTED_TOL:g} of their outcome {self.dep_variable!r}. The logit's "
            "coefficients are not identified (they drift to infinity; the largest is "
            f"{largest!r}) and their standard errors are meaningless."
        )
        warnings.warn(
            f"{owner}: {note} Drop or merge the covariate that separates the outcome, or "
            "use a penalised model.",
            PerfectSeparationWarning,
            stacklevel=4,
        )
        return note

    def _margeff(
        self, coef: FloatArray, cov: FloatArray, ref: _Reference, span: Any
    ) -> MarginalEffects:
        """Average marginal effects and their delta-method covariance (internal order in)."""
        d = self.design
        func = partial(_margeff_sums, coef=coef, ref=ref, span=span)
        s_d1, s_dm, s_f1, s_wf2, s_f2 = (
            func(d) if isinstance(d, LinearDesign) else d.sums(func)
        )
        n = d.n_obs
        m_raw = s_d1 / n
        dm_raw = s_dm / n
        if ref.alpha < 1.0:
            m = float(invert(m_raw, s_f1 / n, ref.alpha))
            dm_ref = np.concatenate([s_wf2 / n, s_f2 / n])
            dm = invert(dm_raw, dm_ref, ref.alpha)
        else:
            m, dm = float(m_raw), dm_raw
        K = coef.size
        J = m * np.eye(K) + np.outer(coef, dm)
        keep = [k for k in self._order if k != 0]  # formula order, intercept dropped
        Jk = J[keep]
        return MarginalEffects(
            names=tuple(d.names[k + 1] for k in keep),
            effects=coef[keep] * m,
            cov=Jk @ cov @ Jk.T,
        )

    # -- prediction ----------------------------------------------------------------------
    def regressors(self, data: Any = None) -> FloatArray:
        """Regressor matrix (formula order) of the released rows or of a new frame."""
        d = self.design
        if data is None:
            return np.hstack([d.public, d.private])[:, d.x_idx]
        return new_regressors(d, True, self.mechanism, data)

    def outcome(self) -> FloatArray:
        """Released (public) 0/1 outcome."""
        return self.design.public[:, 0]


def _predicted_count(d: LinearDesign, *, coef: FloatArray) -> int:
    """Released rows whose fitted probability is within ``PREDICTED_TOL`` of the outcome."""
    W = np.column_stack([np.ones(d.n_obs), d.public[:, 2:]])
    p_hat = expit(W @ coef[: W.shape[1]] + d.private @ coef[W.shape[1]:])
    return int(np.sum(np.abs(d.public[:, 0] - p_hat) < PREDICTED_TOL))


def _margeff_sums(
    d: LinearDesign, *, coef: FloatArray, ref: _Reference, span: Any
) -> tuple[Any, ...]:
    r"""Row sums behind the marginal effects: :math:`\Lambda'`, :math:`\Lambda''\psi` and
    their reference expectations (of the whole design, or of one Dask partition).
    """
    W = np.column_stack([np.ones(d.n_obs), d.public[:, 2:]])
    kw = W.shape[1]
    t = W @ coef[:kw]
    eta = t + d.private @ coef[kw:]
    lam = expit(eta)
    d1 = lam * (1 - lam)
    d2 = d1 * (1 - 2 * lam)
    Psi = np.column_stack([W, d.private])
    kx = d.private.shape[1]
    w = np.ones(d.n_obs) if d.w is None else d.w
    if d.w is not None:  # sampling weights weight every row's contribution
        d1, d2 = d1 * w, d2 * w
    if ref.alpha == 1.0:
        return d1.sum(), Psi.T @ d2, 0.0, np.zeros(kw), np.zeros(kx)
    eta_ref = ref.U @ coef[kw:]
    f1 = np.column_stack([np.ones(ref.U.shape[0]), ref.U])
    F1, _ = index_expectation(t, eta_ref, f1[:, :1], ref.w, _d1, span=span)
    F2, _ = index_expectation(t, eta_ref, f1, ref.w, _d2, span=span)
    if d.w is not None:
        F1, F2 = F1 * w[:, None], F2 * w[:, None]
    return d1.sum(), Psi.T @ d2, F1[:, 0].sum(), W.T @ F2[:, 0], F2[:, 1:].sum(axis=0)


def _d1(x: FloatArray) -> FloatArray:
    p = expit(x)
    return p * (1.0 - p)


def _d2(x: FloatArray) -> FloatArray:
    p = expit(x)
    return p * (1.0 - p) * (1.0 - 2.0 * p)
