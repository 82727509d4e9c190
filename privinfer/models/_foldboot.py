r"""Fold-block bootstrap: the variance that noisy nuisance fits add to the one-step estimate.

The influence-function standard error treats the cross-fitted nuisances as fixed. Below
``alpha = 1`` they are fitted from deconvolved Gram matrices whose privatisation noise is
of order :math:`\sqrt{J/(n\alpha^2)}`, and the private cross-validation that chooses each
fit's sieve and ridge reacts to that noise. At small effective sample sizes
:math:`n\alpha^2` the estimate then varies more than its influence values say: the
second-order remainder :math:`\sum_j(\hat\theta - \theta)_j(\hat\beta - \beta)_j\lambda_j`
has a standard deviation of order :math:`J/(n\alpha^2)`, comparable to the standard error
:math:`1/\sqrt{n\alpha^2}` when :math:`J` is comparable to :math:`\sqrt{n\alpha^2}`, and
a sieve chosen by noisy losses can jump between candidates from one sample to the next.

Every piece of the automatic (series) estimator is a function of the per-fold sufficient
statistics (:class:`~privinfer.models._suffstats.FoldStats`): the nuisance fits solve
systems in the training folds' sums and the estimate is the bilinear form
:math:`\hat\psi_k = \sum_f w_f(\hat\beta_k'M_f + \hat\theta_k'c_{kf} -
\hat\theta_k'G_{kf}\hat\beta_k)` in the held-out folds' sums. The first pass therefore sums
the statistics per fold *and* per random block of rows (``N_BLOCKS`` blocks per fold;
clusters stay within one block), and a bootstrap draw reweights the blocks of every fold
by multinomial counts, re-runs the whole nuisance stage (private CV of sieve and ridge
included) on the reweighted sums and re-evaluates the bilinear form. No row is touched
again; a draw costs one nuisance stage. The spread of the draws estimates the estimate's
total variance, nuisance noise and selection included (a bootstrap of independent blocks
of independent rows; Efron and Tibshirani, 1993), and the reported standard error is the
larger of it and the influence-function one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from privinfer._typing import FloatArray, IntArray
from privinfer.models._nuisances import SeriesFits
from privinfer.models._suffstats import FoldStats

__all__ = [
    "N_BLOCKS",
    "N_DRAWS",
    "BootstrapSE",
    "block_labels",
    "bootstrap_se",
    "collapse",
    "dominating_cov",
    "series_estimates",
]

#: Random blocks of rows per cross-fitting fold (the bootstrap's resampling units).
N_BLOCKS = 16
#: Bootstrap draws (each re-runs the nuisance stage on reweighted statistics).
N_DRAWS = 30
#: ``variance="auto"`` bootstraps up to this effective sample size :math:`n\alpha^2`: the
#: nuisance noise's share of the variance falls like :math:`1/(n\alpha^2)`, while a draw
#: costs a whole nuisance stage (``variance="bootstrap"`` forces it at any size).
MAX_EFFECTIVE_N = 20_000
#: Research option (not the default): a draw perturbs the statistics by this share of the
#: bootstrap's variance, :math:`w = 1 + \sqrt{s}(m - 1)` for multinomial counts ``m``, and
#: the draws' deviations from their mean are scaled back by :math:`1/\sqrt{s}`. A draw
#: perturbs statistics that already carry the sample's noise, so its refits see about
#: :math:`\sqrt{1 + s}` times that noise; a smaller share brings the draws' noise closer
#: to the estimate's own (the linear part of the variance is unchanged). Measured in
#: ``benchmarks/bootstrap_rules.py`` (rule ``half``).
_PERTURB_SHARE = 1.0


def block_labels(
    folds: IntArray, n_folds: int, cluster_codes: IntArray | None, rng: np.random.Generator
) -> IntArray:
    """Fine labels ``fold * N_BLOCKS + block``: rows (or whole clusters) to random blocks.

    Examples
    --------
    >>> lab = block_labels(np.array([0, 0, 1, 1]), 2, None, np.random.default_rng(0))
    >>> bool(np.all(lab // N_BLOCKS == [0, 0, 1, 1]))
    True
    """
    folds = np.asarray(folds, dtype=np.int64)
    if cluster_codes is None:
        block = rng.integers(0, N_BLOCKS, size=folds.size)
    else:
        _, inv = np.unique(np.asarray(cluster_codes), return_inverse=True)
        block = rng.integers(0, N_BLOCKS, size=int(inv.max()) + 1)[inv]
    return folds * N_BLOCKS + block


def collapse(fine: FoldStats, n_folds: int, weights: FloatArray | None = None) -> FoldStats:
    """Per-fold statistics from per-block ones: the (weighted) sum over each fold's blocks.

    Examples
    --------
    >>> import numpy as np
    >>> from privinfer.models._suffstats import FoldStats
    >>> z = np.zeros((2 * N_BLOCKS, 1))
    >>> st = FoldStats(np.zeros((2 * N_BLOCKS, 1, 1, 1)), z[:, :, None], z[:, :, None],
    ...                np.ones((2 * N_BLOCKS, 1)), z, None, None, None, z, z, z)
    >>> collapse(st, 2).cnt.ravel().tolist()
    [16.0, 16.0]
    """
    w = np.ones((n_folds, N_BLOCKS)) if weights is None else np.asarray(weights, dtype=float)
    out = {}
    for fl in fields(FoldStats):
        v = getattr(fine, fl.name)
        if v is None:
            out[fl.name] = None
            continue
        v = v.reshape(n_folds, N_BLOCKS, *v.shape[1:])
        out[fl.name] = np.einsum("fb,fb...->f...", w, v)
    return FoldStats(**out)


def series_estimates(fits: SeriesFits, st: FoldStats, odds: bool) -> FloatArray:
    r"""Arm means (and the ATT) from the held-out folds' statistics: the bilinear form.

    Returns an array of length ``L + 1``: :math:`\hat\psi_k` per arm, then the ATT
    :math:`\{\sum_f w_f(\overline{dy}_f - \hat\beta_0'E_f[d\varphi] - \hat\theta_w'c_{0f}
    + \hat\theta_w'G_{0f}\hat\beta_0)\}/p_1` (NaN without the odds fit).
    """
    L = len(fits.outcome)
    out = fits.fold_values("coefs").sum(axis=0)
    if odds and fits.odds is not None:
        total = float(st.cnt.sum())
        out[L] = (out[L] + float(st.sy[:, L - 1].sum()) / total) / (
            float(st.cnt[:, L - 1].sum()) / total
        )
    else:
        out[L] = np.nan
    return out


@dataclass(frozen=True)
class BootstrapSE:
    """Bootstrap standard errors of one split's estimates.

    Attributes
    ----------
    se : ndarray
        Standard deviation of the draws, per parameter.
    n_draws : int
        Draws that succeeded.
    cov : ndarray
        Covariance matrix of the draws (its diagonal is ``se**2``).
    draws : ndarray or None
        The draws themselves, shape ``(n_draws, P)``.
    counts : ndarray or None
        Each draw's multinomial block counts, shape ``(n_draws, n_folds * N_BLOCKS)``
        (fold-major): what an infinitesimal-jackknife reading of the draws needs.
    """

    se: FloatArray
    n_draws: int
    cov: FloatArray
    draws: FloatArray | None = None
    counts: FloatArray | None = None

    def robust_scale(self) -> FloatArray:
        r"""Per parameter, :math:`1.4826\,\mathrm{MAD}` of the draws: their standard
        deviation where they are normal, unmoved by a few wild draws.

        Examples
        --------
        >>> d = np.array([[0.0], [1.0], [2.0], [3.0], [100.0]])
        >>> b = BootstrapSE(d.std(axis=0, ddof=1), 5, np.cov(d.T)[None, None], d)
        >>> b.robust_scale().round(3).tolist()
        [1.483]
        """
        if self.draws is None:
            raise ValueError("robust_scale: these bootstrap results keep no draws.")
        med = np.median(self.draws, axis=0)
        return 1.4826 * np.median(np.abs(self.draws - med), axis=0)


def bootstrap_se(
    fine: FoldStats,
    n_folds: int,
    refit: Callable[[FoldStats], SeriesFits],
    params: Callable[[SeriesFits, FoldStats], FloatArray],
    rng: np.random.Generator,
    n_draws: int = N_DRAWS,
) -> BootstrapSE | None:
    """Multinomial reweighting of each fold's blocks; the spread of the refitted estimates.

    A draw whose nuisance stage fails (a fold x arm left without rows, a singular system)
    is skipped; with fewer than half the draws left the result is ``None``.
    """
    draws, counts = [], []
    share = float(_PERTURB_SHARE)
    for _ in range(n_draws):
        wts = rng.multinomial(N_BLOCKS, np.full(N_BLOCKS, 1.0 / N_BLOCKS), size=n_folds)
        w = wts.astype(float)
        if share != 1.0:
            w = 1.0 + np.sqrt(share) * (w - 1.0)
        st = collapse(fine, n_folds, w)
        if np.any(st.cnt == 0):
            continue
        try:
            fits = refit(st)
        except (ArithmeticError, ValueError, np.linalg.LinAlgError):
            continue
        draws.append(params(fits, st))
        counts.append(wts.ravel())
    if len(draws) < max(2, n_draws // 2):
        return None
    arr = np.asarray(draws)
    if share != 1.0:  # the deviations scaled back to the full bootstrap's variance
        centre = arr.mean(axis=0)
        arr = centre + (arr - centre) / np.sqrt(share)
    cov = np.atleast_2d(np.cov(arr, rowvar=False, ddof=1))
    return BootstrapSE(
        arr.std(axis=0, ddof=1), len(draws), cov, arr, np.asarray(counts, dtype=float)
    )


def dominating_cov(boot: FloatArray, influence: FloatArray) -> FloatArray:
    r"""A covariance at least as large as both the bootstrap's and the influence one.

    :math:`\Sigma = \Sigma_b + (\Sigma_\varphi - \Sigma_b)_+`, with :math:`(A)_+` the
    positive semi-definite part of a symmetric matrix (its negative eigenvalues set to
    zero). Because :math:`(A)_+ \succeq 0` and :math:`(A)_+ \succeq A`, every linear
    combination :math:`c'\hat\psi` of the estimates gets a variance :math:`c'\Sigma c`
    at least as large as both :math:`c'\Sigma_bc` and :math:`c'\Sigma_\varphi c`; for a
    single parameter it is the larger of the two variances. A contrast of arms (e.g.
    ``E[Y(1)] - E[Y(0)]`` of :class:`~privinfer.PrivatePOM`) then keeps the bootstrap's
    variance of the contrast, which the arms' separate standard errors do not determine.

    Examples
    --------
    >>> b = np.array([[2.0, 1.5], [1.5, 2.0]]); f = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> S = dominating_cov(b, f)
    >>> c = np.array([1.0, -1.0])
    >>> bool(c @ S @ c >= max(c @ b @ c, c @ f @ c)), bool(np.allclose(S, b))
    (True, False)
    >>> float(dominating_cov(np.array([[4.0]]), np.array([[9.0]]))[0, 0])
    9.0
    """
    boot = np.atleast_2d(np.asarray(boot, dtype=float))
    diff = np.atleast_2d(np.asarray(influence, dtype=float)) - boot
    lam, U = np.linalg.eigh(0.5 * (diff + diff.T))
    return boot + (U * np.maximum(lam, 0.0)) @ U.T
