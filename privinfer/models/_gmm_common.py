r"""Pieces shared by every private GMM engine: moment covariance, sandwich, J-test.

All of them act on the *private* moment rows
:math:`\bar\phi_i = (Q_X^{-1}\phi_{\hat\theta})(V_i, Z_i)`, which are i.i.d. under
:math:`P_{VZ}` with mean zero at :math:`\theta_0` (seed 003, Proposition 2). Their
covariance is therefore the plain outer-product average of the *inverted values*,

.. math:: \hat{\bar\Phi} = \frac1n\sum_i \bar\phi_i\bar\phi_i',

which estimates :math:`\bar\Phi = P_{VZ}\bar\phi\bar\phi'` of Proposition 2. This is a
variance of released-data averages, not a true-data expectation: applying
:math:`Q_X^{-1}` to the product :math:`\phi\phi'` would estimate
:math:`P_{VX}\phi\phi'`, the *non-private* variance, and understate the standard errors
by a factor of about :math:`\alpha` (DESIGN.md §5 uses the same rule:
``SE = sd(phi_i)/sqrt(n)`` of the transformed influence values).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import chi2

from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import DataMismatchError, SingularDesignError
from privinfer.results import TestResult

__all__ = [
    "check_nonsingular",
    "cluster_codes",
    "j_statistic",
    "moment_covariance",
    "sandwich",
]

#: Relative eigenvalue below which a scaled Gram / Jacobian product counts as singular.
_SINGULAR_TOL = 1e-10


def cluster_codes(clusters: object, n_obs: int, owner: str) -> IntArray:
    """Integer codes ``0..G-1`` of public cluster labels, validated."""
    arr = np.asarray(clusters)
    if arr.ndim != 1 or arr.shape[0] != n_obs:
        raise DataMismatchError(
            f"{owner}: clusters must be a one-dimensional array with one label per row "
            f"({n_obs}); got shape {arr.shape}."
        )
    codes, uniques = pd.factorize(pd.Series(arr), use_na_sentinel=True)
    if np.any(codes < 0):
        raise DataMismatchError(f"{owner}: clusters hold missing labels.")
    if uniques.size < 2:
        raise DataMismatchError(f"{owner}: cluster-robust covariance needs at least 2 clusters.")
    return np.asarray(codes, dtype=np.int64)


def moment_covariance(
    phibar: FloatArray, clusters: IntArray | None = None, *, center: bool = False
) -> FloatArray:
    r"""Covariance of the mean private moment, :math:`n\,\mathrm{Var}(\bar g)`.

    Parameters
    ----------
    phibar : ndarray of shape (n, k_moms)
        Private moment rows :math:`\bar\phi_i` (products of inverted values are the right
        thing here: see the module docstring).
    clusters : ndarray of shape (n,), optional
        Integer cluster codes; sums within clusters are used (one-way cluster-robust).
    center : bool, default=False
        Subtract the mean moment first (linearmodels' ``center``).

    Returns
    -------
    ndarray of shape (k_moms, k_moms)
        :math:`\frac1n\sum_i\bar\phi_i\bar\phi_i'` or
        :math:`\frac1n\sum_g s_g s_g'` with :math:`s_g = \sum_{i\in g}\bar\phi_i`.
    """
    n = phibar.shape[0]
    g = phibar - phibar.mean(axis=0) if center else phibar
    if clusters is None:
        return g.T @ g / n
    n_groups = int(clusters.max()) + 1
    sums = np.column_stack(
        [np.bincount(clusters, weights=g[:, j], minlength=n_groups) for j in range(g.shape[1])]
    )
    return sums.T @ sums / n


def check_nonsingular(M: FloatArray, names: Sequence[str], what: str, owner: str) -> None:
    """Raise :class:`SingularDesignError` naming the columns in a near-null direction."""
    d = np.sqrt(np.abs(np.diag(M)))
    zero = d == 0
    if np.any(zero):
        bad = [names[j] for j in np.flatnonzero(zero)]
        raise SingularDesignError(
            f"{owner}: the private {what} is singular: column(s) {bad!r} are identically zero "
            "after deconvolution."
        )
    scaled = M / np.outer(d, d)
    sym = 0.5 * (scaled + scaled.T)
    sv = np.linalg.svd(sym, compute_uv=False)
    if sv.min() > _SINGULAR_TOL * sv.max():
        return
    _, vec = np.linalg.eigh(sym)
    lam = np.linalg.eigvalsh(sym)
    null = vec[:, np.abs(lam) <= _SINGULAR_TOL * sv.max()]
    if null.shape[1] == 0:
        null = vec[:, [int(np.argmin(np.abs(lam)))]]
    weight = np.abs(null).max(axis=1)
    bad = [names[j] for j in np.flatnonzero(weight > 0.05)]
    raise SingularDesignError(
        f"{owner}: the private {what} is singular (condition number "
        f"{sv.max() / max(sv.min(), 1e-300):.3g}); the columns {bad!r} are collinear "
        "in the deconvolved moments. Drop one of them or check the formula."
    )


def sandwich(
    D: FloatArray, A: FloatArray, Phi: FloatArray, n_obs: int
) -> tuple[FloatArray, FloatArray]:
    r"""GMM sandwich :math:`(D'AD)^{-1}D'A\Phi AD(D'AD)^{-1}/n` and the influence map.

    Returns
    -------
    cov : ndarray of shape (k_params, k_params)
    bread : ndarray of shape (k_params, k_moms)
        :math:`B = -(D'AD)^{-1}D'A`; the influence value of row ``i`` is
        :math:`B\bar\phi_i`.
    """
    DA = D.T @ A
    H = DA @ D
    bread = -np.linalg.solve(H, DA)
    cov = bread @ Phi @ bread.T / n_obs
    return 0.5 * (cov + cov.T), bread


def j_statistic(
    gbar: FloatArray, weight: FloatArray, n_obs: int, k_params: int, *, efficient: bool
) -> TestResult:
    r"""Hansen's J, :math:`n\,\bar g'\,\hat W\,\bar g \sim \chi^2_{m-p}` (efficient weighting)."""
    name = "Hansen J-test of overidentifying restrictions"
    null = "all moment conditions hold"
    df = gbar.size - k_params
    if df <= 0:
        return TestResult(
            name,
            float("nan"),
            0,
            float("nan"),
            null,
            reason="the model is exactly identified (no overidentifying restriction)",
        )
    if not efficient:
        return TestResult(
            name,
            float("nan"),
            df,
            float("nan"),
            null,
            reason="one-step weighting is not efficient; fit with weighting='two-step'"
            " or 'iterated'",
        )
    stat = float(n_obs * gbar @ weight @ gbar)
    return TestResult(name, stat, df, float(chi2.sf(stat, df)), null, f"chi2({df})")
