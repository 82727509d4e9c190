r"""Weak-instrument-robust private IV: first-stage strength and the Anderson-Rubin test.

Under local privacy the first stage weakens quickly as the keep probability falls: the
released values of a private instrument or endogenous regressor are reference noise for
a share :math:`1-\alpha` of the rows, so Wald intervals from :meth:`PrivateGMM.iv` can
under-cover and their standard errors become heavy-tailed. The Anderson and Rubin (1949)
test keeps its size whatever the first-stage strength: under
:math:`H_0: \beta = \beta_0` the transformed outcome :math:`\tilde y = y - x'\beta_0` does
not depend on the excluded instruments, which is tested by a *private* OLS of
:math:`\tilde y` on all instruments :math:`z = (w, z_{\mathrm{excl}})` and a robust
(or cluster-robust) Wald test that the excluded instruments' coefficients vanish,

.. math::

    AR(\beta_0) = \hat\pi(\beta_0)_{e}'\,\hat V(\beta_0)_{ee}^{-1}\,\hat\pi(\beta_0)_{e}
    \ \rightsquigarrow\ \chi^2_q,\qquad
    \hat\pi(\beta_0) = S_{zz}^{-1}(S_{zy} - S_{zx}\beta_0),

with private second moments :math:`S` and the sandwich covariance of the private moment
rows (Kormos and van der Vaart 2026, Proposition 2).

Everything is linear in :math:`\beta_0`: the private moment rows are
:math:`R_0 + \sum_e\beta_{0e}R_e`, so one chunked pass over the data collects the
covariance blocks :math:`\Phi_{ab} = \frac1n\sum R_aR_b'` and every later evaluation of
:math:`AR(\beta_0)` is closed form. The confidence set
:math:`\{\beta_0: AR(\beta_0)\le\chi^2_{q,1-a}\}` is found by inverting the test over the
whole real line (a grid in :math:`\arctan\beta_0` refined by root finding); it is
unbounded exactly when the first-stage Wald statistic, the limit of :math:`AR` at
:math:`\pm\infty`, does not reject, and it can be a union of disjoint intervals. The
first-stage partial F of each endogenous regressor (Wald / q, robust) comes from the
same blocks.

References
----------
Anderson, T. W. and Rubin, H. (1949). Estimation of the parameters of a single equation in
a complete system of stochastic equations. Annals of Mathematical Statistics 20(1).
Staiger, D. and Stock, J. H. (1997). Instrumental variables regression with weak
instruments. Econometrica 65(3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import chdtrc, gammaln, xlogy
from scipy.stats import chi2

from privinfer._repr import short_repr
from privinfer._typing import FloatArray, IntArray
from privinfer.models._gmm_design import LinearDesign
from privinfer.results import TestResult

__all__ = ["ConfidenceSet", "WeakIVStats", "clr_pvalue", "weak_iv_stats"]

#: First-stage partial F below which the instruments are flagged as weak (Staiger-Stock).
WEAK_F = 10.0
#: Grid points in arctan(beta0) used to bracket the roots of AR(beta0) = critical value.
_GRID = 4001


@dataclass(frozen=True)
class ConfidenceSet:
    r"""A confidence set for one coefficient: a union of (possibly unbounded) intervals.

    Attributes
    ----------
    name : str
        Coefficient.
    level : float
        Coverage, e.g. 0.95.
    intervals : tuple of (float, float)
        Disjoint closed intervals in increasing order; ``-inf``/``inf`` mark rays.

    Examples
    --------
    >>> cs = ConfidenceSet("x", 0.95, ((-np.inf, -1.0), (2.0, np.inf)))
    >>> cs.kind, cs.bounded, str(cs)
    ('disjoint', False, '(-inf, -1] U [2, inf)')
    """

    name: str
    level: float
    intervals: tuple[tuple[float, float], ...]

    @property
    def bounded(self) -> bool:
        """Whether every interval is finite."""
        return all(np.isfinite(lo) and np.isfinite(hi) for lo, hi in self.intervals)

    @property
    def kind(self) -> str:
        """``"bounded"``, ``"unbounded"`` (a ray or the line), ``"disjoint"`` or ``"empty"``."""
        if not self.intervals:
            return "empty"
        if len(self.intervals) > 1:
            return "disjoint"
        return "bounded" if self.bounded else "unbounded"

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the set."""
        return any(lo <= value <= hi for lo, hi in self.intervals)

    def __str__(self) -> str:
        if not self.intervals:
            return "empty"
        parts = []
        for lo, hi in self.intervals:
            left = "(-inf" if lo == -np.inf else f"[{lo:.4g}"
            right = "inf)" if hi == np.inf else f"{hi:.4g}]"
            parts.append(f"{left}, {right}")
        return " U ".join(parts)


@dataclass(frozen=True)
class WeakIVStats:
    r"""Aggregates behind the private Anderson-Rubin test and the first-stage F.

    Holds private second moments and covariance blocks only (no row of the data).

    Attributes
    ----------
    endog : tuple of str
        Endogenous regressors (``p`` of them).
    n_obs : int
    excl : ndarray of int
        Positions of the excluded instruments among the instruments (``q`` of them).
    Szz_inv : ndarray (k, k)
        Inverse private Gram matrix of the instruments.
    pi0 : ndarray (k,)
        Private OLS coefficients of ``y`` on the instruments.
    Pi : ndarray (k, p)
        Private first-stage coefficients of the endogenous regressors.
    blocks : ndarray ((1 + p) k, (1 + p) k)
        Covariance of the stacked private moment rows ``[R_0, R_1, ..., R_p]``.
    """

    endog: tuple[str, ...]
    n_obs: int
    excl: IntArray
    Szz_inv: FloatArray
    pi0: FloatArray
    Pi: FloatArray
    blocks: FloatArray
    __repr__ = short_repr  # one line: arrays and tables by their shape

    @property
    def q(self) -> int:
        """Number of excluded instruments."""
        return int(self.excl.size)

    def _wald(self, c: FloatArray) -> float:
        k = self.pi0.size
        coef = self.pi0 * c[0] - self.Pi @ c[1:]
        C = np.kron(c[:, None], np.eye(k))  # (1+p)k x k: sum_ab c_a c_b Phi_ab
        Phi = C.T @ self.blocks @ C
        V = self.Szz_inv @ Phi @ self.Szz_inv / self.n_obs
        b = coef[self.excl]
        Ve = V[np.ix_(self.excl, self.excl)]
        try:
            return float(b @ np.linalg.solve(Ve, b))
        except np.linalg.LinAlgError:
            return float("inf")

    def ar_stat(self, beta0: FloatArray) -> float:
        """Anderson-Rubin Wald statistic at ``beta0`` (one value per endogenous regressor)."""
        b = np.atleast_1d(np.asarray(beta0, dtype=float))
        return self._wald(np.concatenate([[1.0], b]))

    def ar_test(self, beta0: FloatArray) -> TestResult:
        """The Anderson-Rubin test of ``H0: beta_endog = beta0`` (chi-squared, q df)."""
        b = np.atleast_1d(np.asarray(beta0, dtype=float))
        stat = self.ar_stat(b)
        null = ", ".join(f"{n} = {v:g}" for n, v in zip(self.endog, b, strict=True))
        return TestResult(
            "Anderson-Rubin test (private, weak-instrument robust)",
            stat,
            self.q,
            float(chi2.sf(stat, self.q)),
            null,
            f"chi2({self.q})",
        )

    def _cov_excl(self, c: FloatArray, d: FloatArray) -> FloatArray:
        """Covariance of the excluded coefficients fitted by rows ``sum_a c_a R_a``, ``d``."""
        k = self.pi0.size
        Cc, Cd = np.kron(c[:, None], np.eye(k)), np.kron(d[:, None], np.eye(k))
        M = self.Szz_inv @ (Cc.T @ self.blocks @ Cd) @ self.Szz_inv / self.n_obs
        return M[np.ix_(self.excl, self.excl)]

    def clr_test(self, beta0: float) -> TestResult:
        r"""Heteroskedasticity-robust conditional likelihood-ratio test (one endogenous regressor).

        Kleibergen's (2005) GMM version of Moreira's (2003) CLR test, on the private
        reduced-form coefficients of the excluded instruments:
        :math:`g = \hat\pi(\beta_0)_e` (the AR coefficients) and the first-stage
        coefficients :math:`b`, with their joint robust covariance from the private moment
        rows. With :math:`\tilde D = b - \Omega_{bg}\Omega_{gg}^{-1}g`,
        :math:`AR = g'\Omega_{gg}^{-1}g`, :math:`K = (g'\Omega_{gg}^{-1}\tilde D)^2 /
        \tilde D'\Omega_{gg}^{-1}\tilde D`, :math:`J = AR - K` and the rank statistic
        :math:`r = \tilde D'\Omega_{bb\cdot g}^{-1}\tilde D`,

        .. math:: CLR = \tfrac12\Big(AR - r + \sqrt{(AR + r)^2 - 4Jr}\Big),

        whose p-value is computed conditionally on :math:`r` (:math:`K\sim\chi^2_1`,
        :math:`J\sim\chi^2_{q-1}` independent): it is efficient under strong instruments
        (where it is the K test) and keeps its size under weak ones. With one excluded
        instrument it is the AR test.

        Raises
        ------
        ValueError
            More than one endogenous regressor.
        """
        if len(self.endog) != 1:
            raise ValueError(
                "The conditional likelihood-ratio test is implemented for one endogenous "
                f"regressor; this model has {len(self.endog)} ({list(self.endog)!r})."
            )
        c, e1 = np.array([1.0, float(beta0)]), np.array([0.0, 1.0])
        g = (self.pi0 - float(beta0) * self.Pi[:, 0])[self.excl]
        b = self.Pi[self.excl, 0]
        Ogg_inv = np.linalg.inv(self._cov_excl(c, c))
        Ogb = -self._cov_excl(c, e1)  # the influence of b is minus that of the rows R_1
        Dt = b - Ogb.T @ Ogg_inv @ g
        ar = float(g @ Ogg_inv @ g)
        k_stat = float((g @ Ogg_inv @ Dt) ** 2 / (Dt @ Ogg_inv @ Dt))
        j_stat = max(ar - k_stat, 0.0)
        rk = float(Dt @ np.linalg.solve(self._cov_excl(e1, e1) - Ogb.T @ Ogg_inv @ Ogb, Dt))
        clr = 0.5 * (ar - rk + np.sqrt(max((ar + rk) ** 2 - 4.0 * j_stat * rk, 0.0)))
        return TestResult(
            "Conditional likelihood-ratio test (private, robust, weak-instrument robust)",
            float(clr),
            self.q,
            clr_pvalue(float(clr), rk, self.q),
            f"{self.endog[0]} = {float(beta0):g}",
            f"CLR | rank stat {rk:.3g}",
        )

    def first_stage_wald(self, j: int) -> float:
        """Robust Wald statistic of the excluded instruments in the first stage of ``j``."""
        c = np.zeros(1 + len(self.endog))
        c[1 + j] = 1.0
        return self._wald(c)

    def first_stage(self) -> dict[str, TestResult]:
        """First-stage partial F (robust Wald / q) of every endogenous regressor."""
        out: dict[str, TestResult] = {}
        for j, name in enumerate(self.endog):
            wald = self.first_stage_wald(j)
            out[f"first_stage[{name}]"] = TestResult(
                f"First-stage partial F of {name!r} (robust Wald / q)",
                wald / self.q,
                self.q,
                float(chi2.sf(wald, self.q)),
                "excluded instruments have no effect",
                f"F({self.q}, inf)",
            )
        return out

    def _ar_curve(self, beta: FloatArray) -> FloatArray:
        """AR statistic at many values of the single endogenous coefficient (vectorised)."""
        k, e = self.pi0.size, self.excl
        B = self.blocks
        blk = [[B[a * k : (a + 1) * k, c * k : (c + 1) * k] for c in (0, 1)] for a in (0, 1)]
        sand = [
            (self.Szz_inv @ M @ self.Szz_inv)[np.ix_(e, e)] / self.n_obs
            for M in (blk[0][0], blk[0][1] + blk[1][0], blk[1][1])
        ]
        V = sand[0] + beta[:, None, None] * sand[1] + (beta**2)[:, None, None] * sand[2]
        coef = self.pi0[e][None, :] - beta[:, None] * self.Pi[e, 0][None, :]
        return np.einsum("gi,gi->g", coef, np.linalg.solve(V, coef[:, :, None])[:, :, 0])

    def conf_set(
        self, level: float = 0.95, *, center: float | None = None, scale: float | None = None
    ) -> ConfidenceSet:
        r"""Anderson-Rubin confidence set of the (single) endogenous coefficient.

        The real line is scanned through :math:`\beta_0 = c + s\tan t`,
        :math:`t \in (-\pi/2, \pi/2)` on a fine grid, and every crossing of the critical
        value is refined by Brent's method. ``center`` and ``scale`` (e.g. the Wald
        estimate and its standard error; default the just-identified estimate and its
        magnitude) only place the grid.

        Raises
        ------
        ValueError
            More than one endogenous regressor (the joint set is not an interval union).
        """
        if len(self.endog) != 1:
            raise ValueError(
                "The Anderson-Rubin confidence set is computed for one endogenous regressor; "
                f"this model has {len(self.endog)} ({list(self.endog)!r}). Use ar_test(beta0) "
                "for joint hypotheses."
            )
        crit = float(chi2.ppf(level, self.q))
        if center is None:  # the just-identified IV estimate of the first excluded instrument
            e0 = self.excl[0]
            ratio = self.pi0[e0] / self.Pi[e0, 0] if self.Pi[e0, 0] != 0 else 0.0
            center = float(ratio) if np.isfinite(ratio) else 0.0
        if scale is None:
            scale = max(abs(center), 1.0)
        scale = float(scale) if np.isfinite(scale) and scale > 0 else 1.0
        t = np.linspace(-np.pi / 2, np.pi / 2, _GRID)[1:-1]
        inside = self._ar_curve(center + scale * np.tan(t)) <= crit

        def excess(tt: float) -> float:
            return float(self._ar_curve(np.array([center + scale * np.tan(tt)]))[0]) - crit

        edges = [
            center + scale * float(np.tan(brentq(excess, t[i], t[i + 1], xtol=1e-15)))
            for i in np.flatnonzero(inside[1:] != inside[:-1])
        ]
        return ConfidenceSet(self.endog[0], level, _intervals(bool(inside[0]), edges))


def _intervals(start_inside: bool, edges: list[float]) -> tuple[tuple[float, float], ...]:
    """Intervals from the crossings met left to right (a ray at each open end)."""
    out: list[tuple[float, float]] = []
    lo: float | None = -np.inf if start_inside else None
    for e in edges:
        if lo is None:
            lo = e
        else:
            out.append((lo, e))
            lo = None
    if lo is not None:
        out.append((lo, np.inf))
    return tuple(out)


def weak_iv_stats(
    design: LinearDesign,
    S: FloatArray,
    table: FloatArray,
    alpha: float,
    codes: IntArray | None,
    small_g: bool,
) -> WeakIVStats:
    """One chunked pass: covariance blocks of the stacked AR / first-stage moment rows."""
    z = design.z_idx
    K = len(design.names)
    Szz_inv = np.linalg.inv(S[np.ix_(z, z)])
    pi0 = Szz_inv @ S[z, 0]
    Pi = Szz_inv @ S[np.ix_(z, design.endog_idx)]
    W = np.zeros((K, 1 + design.endog_idx.size))
    W[0, 0] = 1.0
    W[z, 0] = -pi0
    for j, e in enumerate(design.endog_idx):
        W[e, 1 + j] = -1.0
        W[z, 1 + j] = Pi[:, j]
    blocks, _ = design.moment_outer(W, z, table, alpha, codes, small_g)
    excl = np.array([list(z).index(j) for j in design.instr_idx], dtype=np.int64)
    return WeakIVStats(
        endog=tuple(design.names[e] for e in design.endog_idx),
        n_obs=design.n_obs,
        excl=excl,
        Szz_inv=Szz_inv,
        pi0=pi0,
        Pi=Pi,
        blocks=blocks,
    )


def clr_pvalue(clr: float, rk: float, q: int) -> float:
    r"""P-value of the CLR statistic given the rank statistic ``rk`` (``q`` instruments).

    Under the null :math:`CLR = \tfrac12(K + J - r + \sqrt{(K + J + r)^2 - 4Jr})` with
    :math:`K\sim\chi^2_1`, :math:`J\sim\chi^2_{q-1}` independent. :math:`CLR > c` exactly
    when :math:`K > c(r + c - J)/(r + c)`, so

    .. math:: P(CLR > c \mid r) = \int_0^{r+c} \bar F_1\Big(\frac{c(r+c-s)}{r+c}\Big)
              f_{q-1}(s)\,ds + \bar F_{q-1}(r + c),

    one quadrature (Andrews, Moreira and Stock 2007 give the same conditional law).

    Examples
    --------
    >>> round(clr_pvalue(3.841458820694124, 5.0, 1), 6)  # q = 1: the chi2(1) tail
    0.05
    """
    if not np.isfinite(clr):
        return float("nan")
    if q == 1 or clr <= 0:
        return float(chi2.sf(max(clr, 0.0), 1))
    top = rk + clr
    if top <= 0:
        return float(chi2.sf(clr, q))

    # chi2.sf(., 1) * chi2.pdf(s, q - 1) in scipy.stats' own formulas, without the
    # per-call argument checks of its distribution objects (a hundred times slower here)
    half = (q - 1) / 2.0
    log_gamma, log_two = gammaln(half), np.log(2) * float(q - 1) / 2.0

    def integrand(s: float) -> float:
        pdf = np.exp(xlogy(half - 1.0, s) - s / 2.0 - log_gamma - log_two)
        return float(chdtrc(1, clr * (top - s) / top) * pdf)

    body, _ = quad(integrand, 0.0, top, limit=200)
    return float(min(1.0, body + chi2.sf(top, q - 1)))
