r"""Gaussian deconvolution of a DPOT release in the row space of the projection.

Private helpers of :func:`privinfer.transport.estimate_transport_cost` with
``estimator="deconvolution"``. With :math:`M = U S V'` (thin SVD, :math:`M` of shape
:math:`k\times\ell`, rank :math:`k < \ell`) the published rows
:math:`z_i = x_i M + \Delta_i` give

.. math:: \hat x_i = z_i V S^{-1} U' = x_i + e_i, \qquad
          e_i \sim N(0, \Sigma), \quad \Sigma = \sigma^2 (M M')^{-1},

a sufficient statistic for :math:`x_i` (the part of :math:`z_i` outside the row space of
:math:`M` is pure noise) with a *known* noise covariance, and no projection error. The
source points are modelled as draws from a Gaussian mixture
:math:`G = \sum_c \pi_c N(\mu_c, V_c)`, fitted to the :math:`\hat x_i` by the EM
algorithm of "extreme deconvolution" (Bovy, Hogg and Roweis, 2011), where each point's
marginal is :math:`\sum_c \pi_c N(\mu_c, V_c + \Sigma)`. The component covariances are
either full or spherical (:math:`V_c = v_c I`); the family and the number of components
are chosen together by AIC. Spherical components need :math:`k + 1` parameters each
instead of :math:`k + k(k+1)/2`, so AIC can afford the clusters of a source whose noisy
release does not pay for full covariances (on a benchmark of three clusters in 5-D,
150 points, the full family kept one component and overstated the cost twofold). The
posterior of :math:`x_i` given :math:`\hat x_i` is again a Gaussian mixture, and draws
from it feed the transport cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privinfer._typing import FloatArray

#: Largest number of mixture components tried.
MAX_COMPONENTS = 5
#: Covariance families of the components: unrestricted, or a multiple of the identity.
FAMILIES = ("full", "spherical")
#: Random restarts (k-means++ starts) per number of components above one.
N_INIT = 1
#: EM iterations at most, and the increase of the (weighted mean) log-likelihood per
#: iteration, in nats, that stops it. An increase is scale-free: rescaling the data by
#: ``c`` shifts every log-likelihood by ``-k log c`` and leaves differences unchanged (a
#: change relative to the log-likelihood itself would depend on the units).
MAX_ITER = 200
TOL = 1e-6
#: Eigenvalue floor of a component covariance, relative to the mean variance of the data.
_FLOOR = 1e-6


@dataclass(frozen=True)
class MixturePrior:
    """A fitted Gaussian-mixture prior of the source points (private helper record)."""

    weights: FloatArray  # (K,)
    means: FloatArray  # (K, k)
    covariances: FloatArray  # (K, k, k)
    loglik: float  # weighted mean log-likelihood of the x_hat
    aic: float
    family: str = "full"

    @property
    def n_components(self) -> int:
        return int(self.weights.shape[0])


def row_space(Z: FloatArray, M: FloatArray, sigma: float
              ) -> tuple[FloatArray, FloatArray] | None:
    r"""``(x_hat, Sigma)`` of the release, or None when :math:`M` has rank below ``k``
    or ``k >= ell`` (no signal-free directions: then :math:`\Sigma` is too ill-conditioned
    to be of use, and for ``k > ell`` the points are not identified).
    """
    k, ell = M.shape
    if k >= ell:
        return None
    U, S, Vt = np.linalg.svd(M, full_matrices=False)
    if S[-1] <= S[0] * max(M.shape) * np.finfo(float).eps:
        return None
    x_hat = ((Z @ Vt.T) / S) @ U.T
    Sigma = sigma**2 * (U / S**2) @ U.T
    return x_hat, 0.5 * (Sigma + Sigma.T)


def n_parameters(n_components: int, k: int, family: str = "full") -> int:
    """Free parameters of a mixture of ``n_components`` Gaussians in ``k`` dimensions
    with ``"full"`` or ``"spherical"`` covariances.
    """
    per_cov = k * (k + 1) // 2 if family == "full" else 1
    return n_components - 1 + n_components * (k + per_cov)


def _psd_floor(V: FloatArray, floor: float) -> FloatArray:
    """Symmetric matrices (stacked on axis 0) with eigenvalues raised to ``floor``."""
    w, Q = np.linalg.eigh(0.5 * (V + np.swapaxes(V, -1, -2)))
    return (Q * np.maximum(w, floor)[..., None, :]) @ np.swapaxes(Q, -1, -2)


def _log_densities(X: FloatArray, means: FloatArray, covs: FloatArray) -> FloatArray:
    """``(n, K)`` Gaussian log densities of the rows of ``X`` under each component."""
    L = np.linalg.cholesky(covs)  # (K, k, k)
    diff = X[None, :, :] - means[:, None, :]  # (K, n, k)
    sol = np.linalg.solve(L, np.swapaxes(diff, 1, 2))  # (K, k, n)
    half_logdet = np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)), axis=1)  # (K,)
    k = X.shape[1]
    return (-0.5 * np.sum(sol**2, axis=1) - half_logdet[:, None]
            - 0.5 * k * np.log(2.0 * np.pi)).T


def _responsibilities(X: FloatArray, prior_w: FloatArray, means: FloatArray,
                      covs: FloatArray, Sigma: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Posterior component probabilities ``(n, K)`` and the log marginal of each row."""
    with np.errstate(divide="ignore"):
        lp = np.log(prior_w)[None, :] + _log_densities(X, means, covs + Sigma[None])
    top = lp.max(axis=1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(lp - top).sum(axis=1))
    return np.exp(lp - lse[:, None]), lse


def _conditionals(X: FloatArray, means: FloatArray, covs: FloatArray, Sigma: FloatArray
                  ) -> tuple[FloatArray, FloatArray]:
    r"""Per-component posterior means ``(K, n, k)`` and covariances ``(K, k, k)``.

    :math:`b_{ic} = \mu_c + V_c T_c^{-1}(\hat x_i - \mu_c)` and
    :math:`B_c = V_c - V_c T_c^{-1} V_c`, :math:`T_c = V_c + \Sigma`.
    """
    gain = np.swapaxes(np.linalg.solve(covs + Sigma[None], covs), 1, 2)  # V_c T_c^{-1}
    cond = means[:, None, :] + (X[None] - means[:, None]) @ np.swapaxes(gain, 1, 2)
    return cond, covs - gain @ covs


def _kmeanspp(X: FloatArray, a: FloatArray, K: int, rng: np.random.Generator) -> FloatArray:
    """k-means++ seeding (weighted by ``a``): ``K`` rows of ``X``."""
    centres = np.empty((K, X.shape[1]))
    centres[0] = X[rng.choice(X.shape[0], p=a)]
    d2 = np.sum((X - centres[0]) ** 2, axis=1)
    for c in range(1, K):
        p = a * d2
        total = p.sum()
        centres[c] = X[rng.choice(X.shape[0], p=p / total if total > 0 else a)]
        d2 = np.minimum(d2, np.sum((X - centres[c]) ** 2, axis=1))
    return centres


def fit_mixture(X: FloatArray, a: FloatArray, Sigma: FloatArray, n_components: int,
                rng: np.random.Generator, family: str = "full") -> MixturePrior:
    r"""One EM run of extreme deconvolution with a common noise covariance.

    E-step: responsibilities :math:`r_{ic} \propto \pi_c N(\hat x_i; \mu_c, T_c)`,
    :math:`T_c = V_c + \Sigma`, conditional means
    :math:`b_{ic} = \mu_c + V_c T_c^{-1}(\hat x_i - \mu_c)` and covariance
    :math:`B_c = V_c - V_c T_c^{-1} V_c`. M-step (row weights :math:`a_i`):
    :math:`\pi_c = \sum_i a_i r_{ic}`, :math:`\mu_c = \sum_i a_i r_{ic} b_{ic}/\pi_c`,
    :math:`S_c = \sum_i a_i r_{ic}[(b_{ic} - \mu_c)(b_{ic} - \mu_c)' + B_c]/\pi_c` and
    :math:`V_c = S_c` (``family="full"``) or :math:`V_c = (\operatorname{tr}S_c/k)\,I`
    (``"spherical"``: the maximiser of the expected complete-data log-likelihood over
    multiples of the identity). Each step does not decrease the likelihood (Bovy, Hogg
    and Roweis, 2011). It stops after :data:`MAX_ITER` steps or once a step raises the
    weighted mean log-likelihood :math:`\sum_i a_i \log p(\hat x_i)` by at most
    :data:`TOL` nats; every step is equivariant (the fit on :math:`c\hat x` with noise
    covariance :math:`c^2\Sigma` is the fit on :math:`\hat x` with means times
    :math:`c` and covariances times :math:`c^2`), and so is the stopping rule.
    """
    k = X.shape[1]
    K = n_components
    mean_all = a @ X
    cov_all = ((X - mean_all).T * a) @ (X - mean_all)
    floor = _FLOOR * max(float(np.trace(cov_all)) / k, 1e-300)
    means = _kmeanspp(X, a, K, rng) if K > 1 else mean_all[None, :]
    covs = _psd_floor(np.repeat(((cov_all - Sigma) / K)[None], K, axis=0), floor)
    weights = np.full(K, 1.0 / K)
    previous = -np.inf
    loglik = -np.inf
    for _ in range(MAX_ITER):
        R, lse = _responsibilities(X, weights, means, covs, Sigma)
        loglik = float(a @ lse)
        cond, B = _conditionals(X, means, covs, Sigma)
        wr = (a[:, None] * R).T  # (K, n)
        weights = np.maximum(wr.sum(axis=1), 1e-300)
        means = np.einsum("cn,cnj->cj", wr, cond) / weights[:, None]
        dev = cond - means[:, None, :]
        S = np.swapaxes(dev * wr[:, :, None], 1, 2) @ dev / weights[:, None, None] + B
        if family == "spherical":
            S = (np.trace(S, axis1=1, axis2=2) / k)[:, None, None] * np.eye(k)
        covs = _psd_floor(S, floor)
        weights = weights / weights.sum()
        if loglik - previous <= TOL:
            break
        previous = loglik
    n_eff = 1.0 / float(np.sum(a**2))
    aic = -2.0 * n_eff * loglik + 2.0 * n_parameters(K, k, family)
    return MixturePrior(weights, means, covs, loglik, aic, family)


def select_mixture(X: FloatArray, a: FloatArray, Sigma: FloatArray, max_components: int,
                   rng: np.random.Generator) -> MixturePrior:
    """The fit of smallest AIC over the :data:`FAMILIES` and 1..``max_components``
    components (restarts above 1), among those with fewer parameters than the effective
    number of rows ``1 / sum(a**2)`` (``a`` sums to one).
    """
    n_eff = 1.0 / float(np.sum(a**2))
    k = X.shape[1]
    best: MixturePrior | None = None
    for family in FAMILIES:
        for K in range(1, max_components + 1):
            if n_parameters(K, k, family) >= n_eff:
                break
            for _ in range(1 if K == 1 else N_INIT):
                fit = fit_mixture(X, a, Sigma, K, rng, family)
                if np.isfinite(fit.aic) and (best is None or fit.aic < best.aic):
                    best = fit
    assert best is not None
    return best


def posterior_draws(X: FloatArray, Sigma: FloatArray, prior: MixturePrior, n_draws: int,
                    rng: np.random.Generator) -> FloatArray:
    r"""``(n_draws, n, k)`` draws of the source points from their posterior.

    Given :math:`\hat x_i`, :math:`x_i` has the mixture posterior
    :math:`\sum_c r_{ic} N(b_{ic}, B_c)` (see :func:`fit_mixture`).
    """
    n, k = X.shape
    R, _ = _responsibilities(X, prior.weights, prior.means, prior.covariances, Sigma)
    cond, B = _conditionals(X, prior.means, prior.covariances, Sigma)
    chol = np.linalg.cholesky(_psd_floor(B, 1e-12 * max(float(np.abs(B).max()), 1e-300)))
    cum = np.cumsum(R, axis=1)
    comp = np.minimum((cum[None] < rng.random((n_draws, n, 1))).sum(axis=2),
                      prior.n_components - 1)  # (D, n)
    noise = rng.standard_normal((n_draws, n, k))
    rows = np.arange(n)[None, :]
    return cond[comp, rows] + np.einsum("dnij,dnj->dni", chol[comp], noise)
