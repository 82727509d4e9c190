r"""Regularisation chosen for the estimator: spectral ridge paths and private CV.

Every private series fit solves a linear system in a deconvolved Gram matrix ``G``:
the outcome regression :math:`G\beta = c` and the automatic Riesz representer
:math:`G\theta = M`. With the eigendecomposition :math:`G = \sum_j\lambda_j u_ju_j'`, the
ridge fit with penalty :math:`\lambda` is

.. math:: \beta(\lambda) = \sum_j \frac{u_j'c}{\lambda_j + \lambda}\,u_j,

so the whole path over :math:`\lambda` costs one eigendecomposition. Its shrink factor
in direction ``j`` is :math:`s_j = \lambda_j / (\lambda_j + \lambda)`.

Each fit gets its **own** penalty (and its own sieve), chosen by its **own** private
cross-validation loss, both separable and unbiased under :math:`Q_X^{-1}`
(Kormos and van der Vaart, 2026):

* outcome: :math:`E(Y - \beta'\varphi)^2 - EY^2 = \beta'G_f\beta - 2\beta'c_f` on a
  held-out fold ``f``;
* Riesz: :math:`E[\rho^2 - 2m(\rho)] = \theta'G_f\theta - 2\theta'M_f`.

With separate shrinkage the one-step estimator's regularisation bias is
:math:`-\sum_j (e_jc_j/\lambda_j)(1 - s^\mu_j)(1 - s^\rho_j)`, a product of the two fits'
shrinkages; a common floor on both fits makes it :math:`(1 - s_j)^2`, first order where
the floor dominates (Kormos and van der Vaart, 2026). A floor survives only as a last
resort for eigenvalues that stay non-positive after the penalty, and it is counted.

:func:`bias_aware_critical_value` gives the critical value of the bias-aware interval of
Armstrong and Kolesár (2020).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from privinfer._critical import bias_aware_critical_value
from privinfer._repr import short_repr
from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import DataMismatchError

__all__ = [
    "DEFAULT_RIDGE_GRID",
    "CrossFitFits",
    "SpectraCache",
    "SpectralChoice",
    "bias_aware_critical_value",
    "cv_spectral",
    "fit_crossfit",
    "gram_noise",
    "guard_lift",
    "guarded_of",
    "loosest_plausible",
    "next_richer",
    "noise_guard",
    "orthonormalizer",
    "plausible_candidates",
    "ridge_path",
    "spectral_solve",
    "train_average",
]

#: Relative ridges tried by default: 0 and ``10^{-k/2}`` times the mean eigenvalue,
#: k = 0..16 (1 down to 1e-8).
DEFAULT_RIDGE_GRID: tuple[float, ...] = (0.0, *(10.0 ** (-k / 2) for k in range(16, -1, -1)))
#: The choice may minimise the CV loss plus this many fold standard errors of it (a guard
#: against fits whose heavy-tailed held-out loss is low by chance). Measured: 1.0 chose
#: heavier ridges whose product bias lowered coverage, so the default is the plain minimum.
SE_PENALTY = 0.0
#: The "looser" comparison fit behind the bias bound has a ridge at most this factor below
#: the chosen one (:func:`loosest_plausible`; a fixed ridge is divided by it).
LOOSEN = 100.0
#: With a fixed ridge heavier than the relative ridge the private CV would choose, the
#: comparison fit behind the bias bound is that CV choice (its sieve and ridge, chosen
#: as for a CV fit), not the full basis at the ridge divided by ``LOOSEN``, which
#: inverts every function of the sieve nearly unpenalised. Measured with ``ridge=1.0``
#: at ``alpha = 1``, ``n = 1000``, limited overlap (biased by 4.3 SE): the bound
#: vanished in 9 of 30 fits and elsewhere reached 6 times the error before; with the CV
#: choice it was 0.54 to 2.2 times the error (``benchmarks/fixed_ridge.py``;
#: regularisation page of the user guide).
FIXED_COMPARE_CV = True
#: Research option (default False): where no richer sieve comes within one fold standard
#: error of the chosen fit's CV loss, the comparison fit behind the bias bound is the
#: smallest later candidate that contains the chosen one's functions, at its CV-best ridge
#: (:func:`next_richer`), instead of the chosen sieve at a looser ridge. The bound then
#: reads the truncation bias of a sieve the CV stopped at because every richer one was
#: noisier, which the plausible comparison cannot show. Measured with
#: ``benchmarks/validate.py --compare-next`` on the held-out ``dollar_scale``'s ATT at
#: alpha = 0.7 (n = 4000, 40 releases; validation page of the user guide), whose
#: releases with a linear odds fit are biased by 2 standard errors: six of the 40
#: intervals moved (by at most 9%) and the coverage did not, since the biased releases'
#: comparison fits were already richer (a 14-function odds fit at a hundredth of the
#: ridge moved the worst estimate by 67 against an error of 8500). Not the default.
COMPARE_NEXT = False
#: Fold standard errors within which :func:`plausible_candidates` keeps a sub-base. Used
#: by the bootstrap's refits only when ``privinfer.models._nuisances._REFIT_MARGIN`` is
#: set (default: every sub-base is refitted; see that constant for the measurements).
REFIT_MARGIN = 2.0
#: Multiple of the estimated Gram noise that the smallest eigenvalue of the penalised
#: matrix must reach (:func:`noise_guard`).
NOISE_GUARD = 1.0
#: Exponent of the noise guard's per-function weights (a research option; default 0, one
#: guard for every function of a fit). With :math:`\gamma > 0` the guard lifts function
#: ``k`` by :math:`g\,d_k^\gamma`, where :math:`d_k` is the size of the privatisation
#: noise of that function's row of the Gram matrix (:func:`noise_guard`). Measured with
#: :math:`\gamma` = 1 and 0.5 (``benchmarks/validate.py --guard-weights``; validation
#: page): it removes the guard's bias on rare cells of two private factors but multiplies
#: the error of a censored-earnings design by up to 3.8 (4.1 on the outcome fits alone,
#: 5.8 with ten folds) and of a many-level factor by up to 2, so it is not the default.
GUARD_WEIGHTS = 0.0
#: Whether the noise guard lifts each eigen-direction of the guarded block by its own
#: noise (a research option; default off: one guard for every direction). With it, the
#: guard of a fit is the matrix :math:`V\mathrm{diag}(g)V'` on the guarded functions,
#: :math:`g_j = \max(0, 2 s\,\bar s_j - \lambda_j)`, where :math:`(\lambda_j, v_j)` are
#: the eigenpairs of the guarded block's innovations and :math:`\bar s_j` the size of
#: the privatisation noise applied to :math:`v_j`, :math:`\lVert Ev_j\rVert`
#: (:func:`_direction_guards`): isotropic noise gives every direction the common guard,
#: and a direction the noise leaves alone is not shrunk at all. Measured
#: (``benchmarks/validate.py --guard-directions``; validation page): it removes the
#: guard's bias on rare cells of two private factors (7 of 8 cells pass at n = 16000,
#: 1 before), but gives up the variance the common guard saves elsewhere (intervals a
#: median 1.3 times as long on the main designs at n = 4000, and single wild releases of
#: a censored-earnings design), so it is not the default.
GUARD_DIRECTIONS = False
#: With ``GUARD_DIRECTIONS``: whether the private CV that chooses the sieve and the ridge
#: sees the per-direction guard too (``True``), or chooses them under the common guard
#: and only the fits take the per-direction guard (``False``: no wild releases, errors
#: a median 0.72 times as large on the rare cells, but intervals up to 2.2 times as long
#: on designs with limited overlap or a top-coded covariate).
GUARD_DIRECTIONS_CV = True
#: CV criteria within this relative distance of the minimum count as tied; the first tied
#: pair in (candidate, grid) order wins. Pairs whose ridges all sit below the noise guard
#: are the same fit, and their losses differ only in the last bits, which depend on the
#: CPU's BLAS kernels: a plain argmin would pick among them by round-off.
TIE_RTOL = 1e-9
#: Largest ridge-to-fit energy ratio :math:`\kappa` (:func:`_penalty_share`) of a trusted
#: fit. A larger ratio means the fit lives in directions that the training rows barely
#: determine (or, below ``alpha = 1``, that the privatisation noise swamps), e.g. a Riesz
#: fit that extrapolates to where a treatment arm has no rows. Measured at ``alpha = 1``:
#: CV-chosen fits of all eight validation designs have :math:`\kappa \le 0.06` at
#: n = 4000; the wild Riesz fit of ``overlap_s`` at n = 1000 (estimate off by 8 standard
#: errors) has :math:`\kappa` from 4 to 12 in every fold.
EXTRAPOLATION_LIMIT = 1.0
#: Smallest *support share* of a trusted Riesz fit (:func:`_support_share`): the fit
#: energy on the arm's rows over its energy on all rows, :math:`\theta'G_k\theta /
#: \theta'G\theta`, an energy-weighted propensity of the arm along the fit. The true
#: representer of :math:`E[\mu(k, X)]` has :math:`E[1/\pi_k]/E[1/\pi_k^2] \ge
#: \min\pi_k`, so only fits that extrapolate to propensities below 0.1% (a weight above
#: 1,000) fall under it: fits in directions where the arm has (almost) no row of the
#: *whole sample*, which every held-out fold shares, so that the held-out Riesz loss
#: rewards them on every fold. Observed at ``alpha = 1`` on Card's NLS covariates
#: (integer parents' schooling) with four schooling levels, n = 4000: in 4 of 50 fits the
#: CV chose a 59-function Riesz fit at relative ridge 1e-8 with held-out losses from
#: -3,500 to -1,000 on every fold (sensible fits: -11), support share 3e-6, a Riesz second
#: moment of 1,470 against a true 11.6, and a standard error 10 times the others'.
SUPPORT_FLOOR = 1e-3
#: Last-resort floor of ``lambda_j + lambda``, relative to the mean absolute eigenvalue.
_LAST_RESORT = 1e-10
#: Relative cut-off of the pseudo-inverse of the unguarded block (:func:`noise_guard`).
_PINV_RCOND = 1e-10


def _check_sym(G: FloatArray, owner: str) -> FloatArray:
    G = np.asarray(G, dtype=float)
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise DataMismatchError(f"{owner}: G must be a square matrix; got shape {G.shape}.")
    return 0.5 * (G + G.T)


def ridge_path(
    G: FloatArray, rhs: FloatArray, ridges: Sequence[float], *, free_first: bool = True
) -> tuple[FloatArray, IntArray]:
    r"""Spectral ridge fits for every ``lambda`` at once, the constant left unpenalised.

    Minimises :math:`\theta'G\theta - 2\theta'r + \lambda\|D\theta\|^2` with
    :math:`D = I` minus the first coordinate (the constant basis function) when
    ``free_first``. Profiling out the constant leaves the Schur complement
    :math:`S = G_{11} - g_{10}g_{01}/g_{00}` and :math:`b(\lambda) = (S + \lambda I)^{-1}
    (r_1 - g_{10}r_0/g_{00})`, :math:`a = (r_0 - g_{01}b)/g_{00}`; one eigendecomposition of
    ``S`` gives the path. Shrinking the constant would bias the level of both the outcome
    and the Riesz fit, the leading term of the product bias of the one-step estimator.

    Parameters
    ----------
    G : ndarray of shape (J, J)
        Symmetric (possibly indefinite) deconvolved Gram matrix.
    rhs : ndarray of shape (J,)
        Right-hand side (outcome moments ``c`` or Riesz moments ``M``).
    ridges : sequence of float
        Absolute penalties :math:`\lambda \ge 0`.
    free_first : bool, default=True
        Leave the first coefficient (the constant) unpenalised; needs ``G[0, 0] > 0``.

    Returns
    -------
    coefs : ndarray of shape (len(ridges), J)
        The fits.
    n_floored : ndarray of shape (len(ridges),)
        Directions in which :math:`\lambda_j + \lambda` was at or below the last-resort
        floor (``1e-10`` times the mean absolute eigenvalue) and was raised to it.

    Examples
    --------
    >>> G = np.array([[2.0, 0.5], [0.5, 1.0]]); r = np.array([1.0, -1.0])
    >>> coefs, floored = ridge_path(G, r, [0.0, 0.3], free_first=False)
    >>> bool(np.allclose(coefs[1], np.linalg.solve(G + 0.3 * np.eye(2), r)))
    True
    >>> coefs, _ = ridge_path(G, r, [0.3])  # constant unpenalised
    >>> bool(np.allclose(coefs[0], np.linalg.solve(G + np.diag([0.0, 0.3]), r)))
    True
    >>> floored.tolist()
    [0, 0]
    """
    G = _check_sym(G, "ridge_path")
    r_all = np.asarray(rhs, dtype=float)
    lam_r = np.asarray(list(ridges), dtype=float)
    J = G.shape[0]
    free = free_first and J > 1 and G[0, 0] > 0
    if free:
        g00, g10 = G[0, 0], G[1:, 0]
        S = G[1:, 1:] - np.outer(g10, g10) / g00
        rr = r_all[1:] - g10 * r_all[0] / g00
    else:
        S, rr = G, r_all
    lam, U = np.linalg.eigh(S)
    z = U.T @ rr
    eps = _LAST_RESORT * max(float(np.mean(np.abs(lam))), np.finfo(float).tiny)
    den = lam[None, :] + lam_r[:, None]
    floored = (den <= eps).sum(axis=1)
    den = np.maximum(den, eps)
    b = (z[None, :] / den) @ U.T
    if not free:
        return b, floored.astype(np.int64)
    a = (r_all[0] - b @ g10) / g00
    return np.column_stack([a, b]), floored.astype(np.int64)


def gram_noise(G_folds: FloatArray, n_rows: FloatArray, idx: IntArray, mask: np.ndarray) -> float:
    r"""Operator-norm size of the sampling noise of the training Gram matrix (sub-basis ``idx``).

    From the folds themselves (see :func:`noise_guard`): :math:`\nu = 2\sigma\sqrt J` with
    :math:`\sigma^2 = \frac{F}{F-1}\frac{\bar n}{n_{tr}}\sum_g w_g\|D_g\|_F^2/J^2`.

    Examples
    --------
    >>> G = np.stack([np.eye(2) * (1 + e) for e in (0.1, -0.1, 0.1, -0.1)])
    >>> round(gram_noise(G, np.full(4, 10.0), np.arange(2), np.ones(4, bool)), 4)
    0.1155
    """
    n_rows = np.asarray(n_rows, dtype=float)
    n_tr = float(np.sum(np.where(mask, n_rows, 0.0)))
    return float(_noise_norm(G_folds[:, idx][:, :, idx], n_rows, n_tr))


def _noise_norm(sub: FloatArray, n_rows: FloatArray, n_tr: float | FloatArray) -> FloatArray:
    r""":func:`gram_noise`'s :math:`\nu` from the folds' blocks ``sub`` (F, J, J), for
    training sets of ``n_tr`` rows (a number, or one per training set).
    """
    F, J = n_rows.size, sub.shape[1]
    w = n_rows / n_rows.sum()
    D = sub - np.tensordot(w, sub, 1)
    var = F / max(F - 1, 1) * float(np.mean(n_rows)) / n_tr * float(w @ (D**2).sum(axis=(1, 2)))
    return 2.0 * np.sqrt(var / J)


def _guard_weights(sub: FloatArray, n_rows: FloatArray) -> FloatArray | None:
    r"""Per-function weights :math:`d_k^\gamma` of the noise guard (``GUARD_WEIGHTS``
    :math:`= \gamma`), or ``None`` for one common guard (:math:`\gamma = 0`).

    :math:`d_k^2 = \sum_l \sum_g w_g D_{g,kl}^2` is, up to a common factor, the summed
    entry variance of row ``k`` of the noise of the folds' blocks ``sub`` (F, j, j)
    (:func:`_noise_norm`'s deviations).
    """
    if GUARD_WEIGHTS <= 0:
        return None
    w = n_rows / n_rows.sum()
    D = sub - np.tensordot(w, sub, 1)
    d = np.sqrt(np.tensordot(w, D**2, 1).sum(axis=1))
    d = np.maximum(d, 1e-12 * max(float(d.max()), np.finfo(float).tiny))
    return d**GUARD_WEIGHTS


def _shaped_guard() -> bool:
    """Whether a research option shapes the guard (``GUARD_WEIGHTS`` or
    ``GUARD_DIRECTIONS``): then every function but the constant is guarded on its own.
    """
    return GUARD_WEIGHTS > 0 or GUARD_DIRECTIONS


def _guard_key() -> tuple[float, bool]:
    """The research options that shape the guard, for the caches' keys."""
    return float(GUARD_WEIGHTS), bool(GUARD_DIRECTIONS)


def _direction_guards(
    inno_train: FloatArray,
    inno_folds: FloatArray,
    n_rows: FloatArray,
    n_tr: FloatArray,
    level: float,
) -> FloatArray:
    r"""``GUARD_DIRECTIONS``' lift matrices :math:`V\mathrm{diag}(g)V'`, one per training
    set.

    ``inno_train`` (T, j, j) are the training sets' innovation blocks of the guarded
    functions (:func:`_innovations`), ``inno_folds`` (F, j, j) the folds' own, and
    ``n_tr`` (T,) the training sets' rows. With :math:`D_f` a fold's deviation from the
    row-weighted mean, the noise :math:`E` of a training average applied to a unit vector
    :math:`v` has squared norm about
    :math:`\bar s(v)^2 = \frac{F}{F-1}\frac{\bar n}{n_{tr}}\sum_f w_f\lVert D_fv\rVert^2`.
    Each eigen-direction :math:`v_k` of a training block is lifted to
    :math:`\max(\lambda_k, 2\,\mathrm{level}\,\bar s(v_k))`: a symmetric perturbation
    moves an eigenvalue by at most :math:`\lVert Ev\rVert` along a unit eigenvector (the
    residual bound), so a direction above it is resolved by the data. For isotropic noise
    of entry variance :math:`\sigma^2`, :math:`\bar s^2 = \sigma^2 j` and
    :math:`2\bar s = 2\sigma\sqrt j`: :func:`noise_guard`'s semicircle edge.
    """
    F = n_rows.size
    w = n_rows / n_rows.sum()
    D = inno_folds - np.tensordot(w, inno_folds, 1)
    lam, V = np.linalg.eigh(inno_train)  # (T, j), (T, j, j)
    DV = D[None] @ V[:, None]  # (T, F, j, j): column k is D_f v_k
    norm2 = np.tensordot(w, (DV**2).sum(axis=2), axes=([0], [1]))  # (T, j)
    factor = F / max(F - 1, 1) * float(np.mean(n_rows)) / np.asarray(n_tr, dtype=float)
    s = np.sqrt(factor[:, None] * norm2)
    g = np.maximum(0.0, 2.0 * level * s - lam)
    return (V * g[:, None, :]) @ V.transpose(0, 2, 1)


@contextmanager
def guard_directions(on: bool, cv: bool | None = None) -> Iterator[None]:
    """``GUARD_DIRECTIONS`` set to ``on`` for the block (and ``GUARD_DIRECTIONS_CV`` to
    ``cv`` unless None), restored after it: the CV of ``GUARD_DIRECTIONS_CV = False``
    runs under ``guard_directions(False)``, the refit of the models' per-fit guard
    switch (:data:`privinfer.models._onestep._GUARD_SWITCH`) under
    ``guard_directions(True, cv=True)``.
    """
    global GUARD_DIRECTIONS, GUARD_DIRECTIONS_CV
    before = GUARD_DIRECTIONS, GUARD_DIRECTIONS_CV
    GUARD_DIRECTIONS = on
    if cv is not None:
        GUARD_DIRECTIONS_CV = cv
    try:
        yield
    finally:
        GUARD_DIRECTIONS, GUARD_DIRECTIONS_CV = before


def _whiten(M: FloatArray, d: FloatArray) -> FloatArray:
    r""":math:`\Lambda^{-1/2} M \Lambda^{-1/2}` with :math:`\Lambda = \mathrm{diag}(d)`
    (``M`` of shape (..., j, j)).
    """
    r = 1.0 / np.sqrt(d)
    return M * r[:, None] * r[None, :]


def _all_but_constant(idx: IntArray) -> np.ndarray | None:
    """Every function of sub-basis ``idx`` but the constant, as a ``guarded`` mask."""
    if len(idx) < 2:
        return None
    g = np.ones(len(idx), dtype=bool)
    g[0] = False
    return g


def noise_guard(
    G_folds: FloatArray,
    n_rows: FloatArray,
    idx: IntArray,
    mask: np.ndarray,
    G_train: FloatArray,
    share: float = 1.0,
    guarded: np.ndarray | None = None,
) -> float | FloatArray:
    r"""Smallest ridge that lifts the training Gram matrix above its own sampling noise.

    The noise is measured from the folds themselves: with :math:`D_g` the deviation of
    fold ``g``'s Gram matrix (sub-basis ``idx``) from the row-weighted mean, the entries of
    the training average over :math:`n_{tr}` rows have variance about
    :math:`\sigma^2 = \frac{F}{F-1}\frac{\bar n}{n_{tr}}\sum_g w_g\|D_g\|_F^2/J^2`, and
    a symmetric noise matrix of that entry variance has operator norm about
    :math:`\nu = 2\sigma\sqrt J` (semicircle edge). Eigen-directions of the penalised block
    (Schur complement of the constant) below :math:`\nu` cannot be learned from these
    data, so the ridge must be at least :math:`\max(0, s\nu - \lambda_{\min})`. Without
    it the held-out loss, unbiased but unbounded below, can pick a wild fit by chance.
    ``share`` (:math:`s`) is the part of the noise to guard against: the models pass the
    privatisation's share :math:`1 - \alpha` (at ``alpha = 1`` the Gram matrix is an
    ordinary positive semi-definite one and sampling noise needs no guard).

    With ``guarded`` (a mask over ``idx``: the functions that carry privatisation noise,
    e.g. not the constant and purely public functions) the guard is an *extra* penalty on
    those functions alone: the noise :math:`\nu` is measured on the constant and the
    guarded functions, and the smallest eigenvalue is that of the guarded block's Schur
    complement given the others (their innovations), so that :math:`G + g\,D_{guarded}`
    clears the noise in every direction that has a guarded part
    (:func:`guard_lift`). With ``GUARD_WEIGHTS`` :math:`= \gamma > 0` (a research option)
    the guard is a vector over the guarded functions, :math:`g\,d_k^\gamma`
    (:func:`_guard_weights`), with :math:`g` computed as above after whitening the folds'
    blocks and the innovations by :math:`\Lambda = \mathrm{diag}(d^\gamma)`: then
    :math:`G + g\Lambda` clears the noise :math:`s\tilde\nu\Lambda`, and a function
    whose own noise is small is lifted less.

    Examples
    --------
    >>> G = np.stack([np.eye(2) * (1 + e) for e in (0.1, -0.1, 0.05, -0.05)])
    >>> noise_guard(G, np.full(4, 100.0), np.arange(2), np.array([0, 1, 1, 1], bool),
    ...             np.eye(2))
    0.0
    """
    if guarded is not None:
        gpos = np.flatnonzero(guarded)
        sel = idx[np.r_[0, gpos]]
        S = _innovation_block(_check_sym(G_train[np.ix_(idx, idx)], "noise_guard"), guarded)
        sub, rows = G_folds[:, sel][:, :, sel], np.asarray(n_rows, dtype=float)
        if GUARD_DIRECTIONS:
            n_tr = float(np.sum(np.where(mask, rows, 0.0)))
            inno_f = _fold_innovations(G_folds, idx, guarded)
            return _direction_guards(S[None], inno_f, rows, np.array([n_tr]),
                                     NOISE_GUARD * share)[0]  # fmt: skip
        d = _guard_weights(sub, rows)
        if d is not None:
            n_tr = float(np.sum(np.where(mask, rows, 0.0)))
            nu = float(_noise_norm(_whiten(sub, d), rows, n_tr))
            lam_min = float(np.linalg.eigvalsh(_whiten(S, d[1:]))[0])
            return max(0.0, NOISE_GUARD * share * nu - lam_min) * d[1:]
        nu = gram_noise(G_folds, n_rows, sel, mask)
        lam_min = float(np.linalg.eigvalsh(S)[0])
        return max(0.0, NOISE_GUARD * share * nu - lam_min)
    nu = gram_noise(G_folds, n_rows, idx, mask)
    lam_min = float(np.linalg.eigvalsh(_penalised_block(G_train[np.ix_(idx, idx)]))[0])
    return max(0.0, NOISE_GUARD * share * nu - lam_min)


def _innovation_block(G: FloatArray, guarded: np.ndarray) -> FloatArray:
    """Schur complement of the unguarded block of ``G`` on the guarded positions (with
    its pseudo-inverse: a public function without rows of a treatment arm leaves a zero
    direction there).
    """
    g = np.asarray(guarded, dtype=bool)
    return _innovations(G[None], g)[0]


def _fold_innovations(G_folds: FloatArray, idx: IntArray, guarded: np.ndarray) -> FloatArray:
    """Every fold's :func:`_innovation_block` of sub-basis ``idx`` (symmetrised first)."""
    full = G_folds[:, idx][:, :, idx]
    return _innovations(0.5 * (full + full.transpose(0, 2, 1)), np.asarray(guarded, bool))


def _innovations(Gs: FloatArray, guarded: np.ndarray) -> FloatArray:
    """:func:`_innovation_block` of every matrix of a stack (F, j, j)."""
    u = ~guarded
    Guu = Gs[:, u][:, :, u]
    Gug = Gs[:, u][:, :, guarded]
    try:  # Cholesky where every unguarded block is positive definite (the usual case)
        K = np.linalg.solve(np.linalg.cholesky(Guu), Gug)
        S = Gs[:, guarded][:, :, guarded] - K.transpose(0, 2, 1) @ K
    except np.linalg.LinAlgError:
        S = Gs[:, guarded][:, :, guarded] - Gug.transpose(0, 2, 1) @ (
            np.linalg.pinv(Guu, rcond=_PINV_RCOND, hermitian=True) @ Gug
        )
    return 0.5 * (S + S.transpose(0, 2, 1))


def guard_lift(
    G: FloatArray, guard: float | FloatArray, guarded: np.ndarray | None
) -> FloatArray:
    r"""``G`` with the noise guard added to the diagonal of the guarded functions.

    The fits then solve :math:`(G + g D_{guarded} + \lambda D)\theta = r`: the guard
    :math:`g` (:func:`noise_guard` with ``guarded``) penalises only the functions that
    carry privatisation noise, and the CV ridge :math:`\lambda` all but the constant.
    Without ``guarded``, ``G`` itself (the guard is then a floor on :math:`\lambda`).

    Examples
    --------
    >>> guard_lift(np.eye(3), 0.5, np.array([False, False, True])).diagonal().tolist()
    [1.0, 1.0, 1.5]
    """
    if guarded is None or np.all(np.asarray(guard) <= 0):
        return G
    out = np.array(G, dtype=float, copy=True)
    pos = np.flatnonzero(guarded)
    if np.ndim(guard) == 2:  # GUARD_DIRECTIONS: a matrix on the guarded block
        out[np.ix_(pos, pos)] += guard
    else:
        out[pos, pos] += guard
    return out


def orthonormalizer(G: FloatArray, shift: float = 0.0) -> FloatArray:
    r"""Upper-triangular :math:`T` with :math:`T'GT = I` (Gram-Schmidt in index order).

    In the basis :math:`\tilde\varphi = T'\varphi` every function is the innovation of
    :math:`\varphi_j` over :math:`\varphi_1, \dots, \varphi_{j-1}` with unit norm, so an
    identity ridge penalises each function's *new* contribution, whatever the raw basis's
    scale or collinearity (truncated powers are nearly collinear with the polynomials
    below them), and index prefixes still span the same nested spaces. ``G`` is the
    pooled private Gram matrix; an indefinite or singular one is shifted up first
    (:math:`G + \tau I`, :math:`\tau = \max(0, -\lambda_{\min}) + 10^{-8}\bar\lambda`):
    any invertible :math:`T` gives a valid basis, the shift only sets the penalty's
    geometry in directions the data do not resolve. ``shift`` raises :math:`\tau` to at
    least that value (the models pass the estimated privatisation noise of ``G``, so that
    unresolved directions are not blown up to unit norm).

    Examples
    --------
    >>> G = np.array([[1.0, 0.9], [0.9, 1.0]])
    >>> T = orthonormalizer(G)
    >>> bool(np.allclose(T.T @ G @ T, np.eye(2), atol=1e-6)), bool(T[1, 0] == 0.0)
    (True, True)
    """
    G = _check_sym(G, "orthonormalizer")
    lam = np.linalg.eigvalsh(G)
    tau = max(0.0, -float(lam[0])) + max(
        float(shift), 1e-8 * max(float(np.mean(np.abs(lam))), 1e-300)
    )
    for _ in range(20):
        try:
            U = np.linalg.cholesky(G + tau * np.eye(G.shape[0])).T  # G + tau I = U'U
            break
        except np.linalg.LinAlgError:
            tau *= 10.0
    return np.linalg.solve(U, np.eye(G.shape[0]))


def _penalised_block(G: FloatArray) -> FloatArray:
    """The penalised block: Schur complement of the (unpenalised) constant, if any."""
    if G.shape[0] > 1 and G[0, 0] > 0:
        return G[1:, 1:] - np.outer(G[1:, 0], G[1:, 0]) / G[0, 0]
    return G


def _penalised_scale(G: FloatArray) -> float:
    """Mean eigenvalue of the penalised block."""
    S = _penalised_block(G)
    return max(float(np.trace(S)) / S.shape[0], np.finfo(float).tiny)


def spectral_solve(
    G: FloatArray, rhs: FloatArray, ridge: float, subset: IntArray | None = None
) -> tuple[FloatArray, int]:
    r"""One ridge fit on a sub-basis, padded with zeros to the full basis.

    Parameters
    ----------
    G : ndarray of shape (J, J)
        Gram matrix of the full basis.
    rhs : ndarray of shape (J,)
        Moments of the full basis.
    ridge : float
        Absolute penalty.
    subset : ndarray of int, optional
        Indices of the sub-basis (default: all).

    Returns
    -------
    coef : ndarray of shape (J,)
        Zero outside ``subset``.
    n_floored : int
        Directions raised to the last-resort floor.

    Examples
    --------
    >>> G = np.diag([1.0, 2.0, 4.0]); r = np.ones(3)
    >>> coef, k = spectral_solve(G, r, 0.0, np.array([0, 2]))
    >>> coef.tolist(), k
    ([1.0, 0.0, 0.25], 0)
    """
    G = np.asarray(G, dtype=float)
    idx = np.arange(G.shape[0]) if subset is None else np.asarray(subset, dtype=np.int64)
    coefs, floored = ridge_path(G[np.ix_(idx, idx)], np.asarray(rhs, dtype=float)[idx], [ridge])
    out = np.zeros(G.shape[0])
    out[idx] = coefs[0]
    return out, int(floored[0])


def train_average(
    G_folds: FloatArray, rhs_folds: FloatArray, n_rows: FloatArray, mask: np.ndarray
) -> tuple[FloatArray, FloatArray]:
    """Row-weighted average of per-fold means over the folds in ``mask``.

    Examples
    --------
    >>> G = np.stack([np.eye(1), 3 * np.eye(1)]); r = np.array([[1.0], [3.0]])
    >>> Gt, rt = train_average(G, r, np.array([1.0, 3.0]), np.array([True, True]))
    >>> Gt.tolist(), rt.tolist()
    ([[2.5]], [2.5])
    """
    w = np.where(mask, np.asarray(n_rows, dtype=float), 0.0)
    w = w / w.sum()
    return np.tensordot(w, G_folds, 1), w @ rhs_folds


@dataclass(frozen=True)
class SpectralChoice:
    r"""A sieve and a ridge chosen by private K-fold cross-validation.

    Attributes
    ----------
    candidate : int
        Index of the chosen sub-basis among the candidates.
    subset : ndarray of int
        Its basis functions (indices into the full basis).
    ridge : float
        Chosen absolute penalty :math:`\lambda`.
    relative_ridge : float
        :math:`\lambda` over the mean eigenvalue of the training Gram matrices.
    loss : float
        Private CV loss at the choice (row-weighted mean over folds).
    columns : mapping of str to array
        ``candidate``, ``n_basis``, ``relative_ridge``, ``ridge``, ``loss``, ``fold_se``,
        ``n_floored``, ``penalty_share`` (ridge over fit energy of the training fits) and
        ``tame`` (not carried by its ridge, see :func:`cv_spectral`) of every
        (candidate, ridge) pair, as plain arrays (a DataFrame is accepted too).
    mean_shrink : float
        Mean shrink factor :math:`\bar s = J^{-1}\sum_j s_j` of the chosen fit over the
        eigen-directions of the average training Gram matrix (1: no shrinkage).
    table : DataFrame
        ``columns`` as a DataFrame, built on first access: every bootstrap draw runs the
        CV again and reads a few columns only.
    """

    candidate: int
    subset: IntArray
    ridge: float
    relative_ridge: float
    loss: float
    columns: Mapping[str, FloatArray]
    mean_shrink: float
    __repr__ = short_repr  # one line: arrays and tables by their shape

    @cached_property
    def table(self) -> pd.DataFrame:
        """The (candidate, ridge) pairs as a DataFrame (see ``columns``)."""
        return pd.DataFrame({k: np.asarray(v) for k, v in self.columns.items()})


def _cv_losses_loop(
    G_folds: FloatArray,
    rhs_folds: FloatArray,
    n_rows: FloatArray,
    idx: IntArray,
    rel: FloatArray,
    const: FloatArray,
    min_ridge: float,
    noise_share: float,
    guarded: np.ndarray | None = None,
    support_train: FloatArray | None = None,
) -> tuple[FloatArray, IntArray, FloatArray, FloatArray, FloatArray]:
    """Held-out losses (ridges x folds) of one candidate, fold by fold.

    Also the :func:`_penalty_share` and, with ``support_train``, the
    :func:`_support_share` of each ridge's training fits (``inf`` without it).
    """
    F = n_rows.size
    losses = np.zeros((rel.size, F))
    fit_energy = np.zeros((rel.size, F))
    penalty_energy = np.zeros((rel.size, F))
    support_energy = np.zeros((rel.size, F))
    scale = np.zeros(F)
    floored = np.zeros(rel.size, dtype=np.int64)
    for f in range(F):
        Gt, rt = train_average(G_folds, rhs_folds, n_rows, np.arange(F) != f)
        Gs = Gt[np.ix_(idx, idx)]
        scale[f] = _penalised_scale(Gs)
        guard = min_ridge
        if noise_share > 0:
            g = noise_guard(G_folds, n_rows, idx, np.arange(F) != f, Gt, noise_share, guarded)
            guard = max(guard, g) if guarded is None else guard
        Gfit = Gs if guarded is None or noise_share <= 0 else guard_lift(Gs, g, guarded)
        coefs, fl = ridge_path(Gfit, rt[idx], np.maximum(rel * scale[f], guard))
        floored += fl
        Gf = G_folds[f][np.ix_(idx, idx)]
        rf = rhs_folds[f][idx]
        losses[:, f] = const[f] + np.einsum("rj,jk,rk->r", coefs, Gf, coefs) - 2 * coefs @ rf
        fit_energy[:, f] = np.einsum("rj,jk,rk->r", coefs, Gs, coefs)
        penalty_energy[:, f] = coefs @ rt[idx] - fit_energy[:, f]
        if support_train is not None:
            S = support_train[f][np.ix_(idx, idx)]
            support_energy[:, f] = np.einsum("rj,jk,rk->r", coefs, S, coefs)
    support = (
        _support_share(fit_energy, support_energy, n_rows)
        if support_train is not None
        else np.full(rel.size, np.inf)
    )
    return losses, floored, scale, _penalty_share(fit_energy, penalty_energy, n_rows), support


@dataclass(frozen=True)
class _FoldSpectra:
    """The part of :func:`_cv_losses_batched` that does not depend on the right-hand side.

    Eigendecompositions of the training folds' penalised blocks of one sub-basis, their
    scales and noise guards: the outcome and Riesz fits of one arm share the Gram
    matrices, so :func:`cv_spectral` can compute these once for both (``spectra_cache``).
    """

    g00: FloatArray
    g10: FloatArray
    lam: FloatArray
    U: FloatArray
    scale: FloatArray
    guard: FloatArray
    G_held: FloatArray
    #: with ``guarded``: each fold's guard on the penalised coefficients (F, j - 1), added
    #: to the Gram matrix (:func:`guard_lift`) instead of flooring the ridge; with
    #: ``GUARD_DIRECTIONS`` a matrix per fold (F, j - 1, j - 1)
    lift: FloatArray | None = None


@dataclass
class SpectraCache:
    """What the fits of one set of per-fold Gram matrices can share (``spectra_cache``).

    The outcome and Riesz fits of one arm solve systems in the same Gram matrices with
    different right-hand sides: :func:`cv_spectral` keeps each sub-basis's training-fold
    spectra in ``spectra`` (key: sub-basis, smallest ridge, noise share, guarded
    functions, the guard's research options) and :func:`fit_crossfit` each fold's noise guard in
    ``guards`` (key: sub-basis, training mask, noise share, smallest ridge, guarded
    functions, the guard's research options). Valid for one ``G_folds`` and ``n_rows`` only.
    """

    spectra: dict[tuple[bytes, float, float, bytes, tuple[float, bool]], _FoldSpectra | None] = (
        field(default_factory=dict)
    )
    guards: dict[
        tuple[bytes, bytes, float, float, bytes, tuple[float, bool]], float | FloatArray
    ] = field(
        default_factory=dict
    )


def _fold_spectra(
    G_folds: FloatArray,
    n_rows: FloatArray,
    G_train: FloatArray,
    idx: IntArray,
    min_ridge: float,
    noise_share: float,
    guarded: np.ndarray | None = None,
) -> _FoldSpectra | None:
    """Every training fold's spectrum of sub-basis ``idx`` in one batched
    eigendecomposition (the constant profiled out of each training Gram matrix, the
    :func:`noise_guard` from the same eigenvalues); ``None`` when some training matrix
    has no positive constant entry (:func:`_cv_losses_loop` handles that case). With
    ``guarded`` the guard lifts the guarded functions' diagonal first (:func:`guard_lift`).
    """
    F, j = n_rows.size, idx.size
    At = G_train[:, idx][:, :, idx]
    Gs = 0.5 * (At + At.transpose(0, 2, 1))
    if j < 2 or np.any(Gs[:, 0, 0] <= 0):
        return None
    lift = None
    if guarded is not None and noise_share > 0:
        gpos = np.flatnonzero(guarded)
        inno = _innovations(Gs, np.asarray(guarded, dtype=bool))
        sub_g = G_folds[:, idx[np.r_[0, gpos]]][:, :, idx[np.r_[0, gpos]]]
        d = _guard_weights(sub_g, n_rows)
        weight = np.asarray(guarded, dtype=float)
        if GUARD_DIRECTIONS:  # a matrix per training fold on the guarded block
            inno_f = _fold_innovations(G_folds, idx, guarded)
            L = _direction_guards(inno, inno_f, n_rows, n_rows.sum() - n_rows,
                                  NOISE_GUARD * noise_share)  # fmt: skip
            lift = np.zeros((F, j - 1, j - 1))
            pg = gpos - 1
            lift[:, pg[:, None], pg[None, :]] = L
        elif d is not None:  # GUARD_WEIGHTS: whitened, then each function lifted by its own
            inno, sub_g = _whiten(inno, d[1:]), _whiten(sub_g, d)
            weight[gpos] = d[1:]
        if lift is None:
            lam_g = np.linalg.eigvalsh(inno)[:, 0]
            nu = _noise_norm(sub_g, n_rows, n_rows.sum() - n_rows)
            g = np.maximum(0.0, NOISE_GUARD * noise_share * nu - lam_g)
            lift = g[:, None] * weight[None, 1:]
    g00, g10 = Gs[:, 0, 0], Gs[:, 1:, 0]
    S = Gs[:, 1:, 1:] - g10[:, :, None] * g10[:, None, :] / g00[:, None, None]
    S = 0.5 * (S + S.transpose(0, 2, 1))
    scale = np.maximum(np.trace(S, axis1=1, axis2=2) / (j - 1), np.finfo(float).tiny)
    if lift is not None and lift.ndim == 3:  # GUARD_DIRECTIONS
        S = S + lift
    elif lift is not None:  # the constant's Schur complement of the lifted matrix
        diag = np.arange(j - 1)
        S[:, diag, diag] += lift
    lam, U = np.linalg.eigh(S)
    guard = np.full(F, float(min_ridge))
    sub = G_folds[:, idx][:, :, idx]
    if lift is not None:
        return _FoldSpectra(g00, g10, lam, U, scale, guard, sub, lift)
    if noise_share > 0:
        nu = _noise_norm(sub, n_rows, n_rows.sum() - n_rows)  # leave-one-fold-out sets
        guard = np.maximum(guard, np.maximum(0.0, NOISE_GUARD * noise_share * nu - lam[:, 0]))
    return _FoldSpectra(g00, g10, lam, U, scale, guard, sub)


def _cv_losses_batched(
    sp: _FoldSpectra,
    rhs_folds: FloatArray,
    n_rows: FloatArray,
    r_train: FloatArray,
    idx: IntArray,
    rel: FloatArray,
    const: FloatArray,
    support_train: FloatArray | None = None,
) -> tuple[FloatArray, IntArray, FloatArray, FloatArray, FloatArray]:
    """:func:`_cv_losses_loop` with every fold at once, on the spectra of
    :func:`_fold_spectra` (the same arithmetic: the spectral ridge path).
    """
    g00, g10, lam, U, scale = sp.g00, sp.g10, sp.lam, sp.U, sp.scale
    rt = r_train[:, idx]
    rr = rt[:, 1:] - g10 * (rt[:, 0] / g00)[:, None]
    ridges = np.maximum(rel[None, :] * scale[:, None], sp.guard[:, None])  # (F, R)
    # batched matrix products throughout (einsum's own loops cost twice as much here)
    Ut = U.transpose(0, 2, 1)
    z = (Ut @ rr[:, :, None])[:, :, 0]
    eps = _LAST_RESORT * np.maximum(np.mean(np.abs(lam), axis=1), np.finfo(float).tiny)
    den = lam[:, None, :] + ridges[:, :, None]
    floored = (den <= eps[:, None, None]).sum(axis=(0, 2)).astype(np.int64)
    den = np.maximum(den, eps[:, None, None])
    b = (z[:, None, :] / den) @ Ut  # (F, R, j - 1)
    a = (rt[:, 0][:, None] - (b @ g10[:, :, None])[:, :, 0]) / g00[:, None]
    coefs = np.concatenate([a[:, :, None], b], axis=2)  # (F, R, j)
    rf = rhs_folds[:, idx]
    quad = ((coefs @ sp.G_held) * coefs).sum(axis=2)
    losses = (const[:, None] + quad - 2 * (coefs @ rf[:, :, None])[:, :, 0]).T
    # G theta = r - lambda (0, b): the ridge energy is lambda |b|^2 and the fit energy the rest
    penalty_energy = (ridges * (b * b).sum(axis=2)).T
    if sp.lift is not None and sp.lift.ndim == 3:  # GUARD_DIRECTIONS: b' L b
        penalty_energy = penalty_energy + ((b @ sp.lift) * b).sum(axis=2).T
    elif sp.lift is not None:  # the guard's energy on the guarded coefficients
        penalty_energy = penalty_energy + ((b * b) @ sp.lift[:, :, None])[:, :, 0].T
    fit_energy = (coefs @ rt[:, :, None])[:, :, 0].T - penalty_energy
    kappa = _penalty_share(fit_energy, penalty_energy, n_rows)
    if support_train is None:
        return losses, floored, scale, kappa, np.full(rel.size, np.inf)
    S = support_train[:, idx][:, :, idx]
    support_energy = ((coefs @ S) * coefs).sum(axis=2).T
    return losses, floored, scale, kappa, _support_share(fit_energy, support_energy, n_rows)


def _support_share(
    fit_energy: FloatArray, support_energy: FloatArray, n_rows: FloatArray
) -> FloatArray:
    r"""Arm energy over all-rows energy of the training fits, row-weighted over folds.

    For a Riesz fit :math:`\theta` of arm ``k`` (Gram matrix :math:`G_k`, the mean of
    :math:`1\{d = k\}\varphi\varphi'`) and the all-rows Gram matrix :math:`G`:
    :math:`\sum_f w_f\theta_{-f}'G_{k,-f}\theta_{-f} / \sum_f
    w_f\theta_{-f}'G_{-f}\theta_{-f}`, the arm's propensity averaged along the fit with
    weights :math:`\rho^2` (see :data:`SUPPORT_FLOOR`). ``inf`` where either energy is
    not positive (an indefinite deconvolved matrix: the noise guard's business).
    """
    w = n_rows / n_rows.sum()
    fit = fit_energy @ w
    sup = support_energy @ w
    ok = (fit > 0) & (sup > 0)
    return np.where(ok, fit / np.where(ok, sup, 1.0), np.inf)


def _penalty_share(
    fit_energy: FloatArray, penalty_energy: FloatArray, n_rows: FloatArray
) -> FloatArray:
    r"""Ridge energy over fit energy of the training fits, row-weighted over folds.

    A ridge fit :math:`\theta = (G + \lambda P)^{-1}r` has
    :math:`\theta'r = \theta'G\theta + \lambda\theta'P\theta`: the returned
    :math:`\kappa = \sum_f w_f\lambda\theta_{-f}'P\theta_{-f} /
    \sum_f w_f\theta_{-f}'G_{-f}\theta_{-f}`, with :math:`\theta_{-f}` fitted on the
    training Gram matrix :math:`G_{-f}` of held-out fold ``f`` (``inf`` where the fit
    energy is not positive). See :data:`EXTRAPOLATION_LIMIT`.
    """
    w = n_rows / n_rows.sum()
    fit = fit_energy @ w
    pen = penalty_energy @ w
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # inf is the answer
        return np.where(fit > 0, pen / np.where(fit > 0, fit, 1.0), np.inf)


def cv_spectral(
    G_folds: FloatArray,
    rhs_folds: FloatArray,
    n_rows: FloatArray,
    *,
    candidates: Sequence[IntArray] | None = None,
    ridges: Sequence[float] = DEFAULT_RIDGE_GRID,
    const_folds: FloatArray | None = None,
    min_ridge: float = 0.0,
    se_penalty: float = SE_PENALTY,
    noise_share: float = 1.0,
    extrapolation_limit: float = EXTRAPOLATION_LIMIT,
    spectra_cache: SpectraCache | None = None,
    margins: Sequence[float] | None = None,
    noiseless: np.ndarray | None = None,
    spare: Sequence[bool] | None = None,
    support_folds: FloatArray | None = None,
    support_floor: float = SUPPORT_FLOOR,
) -> SpectralChoice:
    r"""Choose a sub-basis and a ridge by the private held-out loss.

    The loss of a fit :math:`\theta` on held-out fold ``f`` is
    :math:`\theta'G_f\theta - 2\theta'r_f`.

    For every fold ``f``, candidate sub-basis and relative ridge, the fit
    :math:`\theta_{-f} = (G_{-f} + \lambda I)^{-1}r_{-f}` on the other folds (their
    row-weighted average) is scored on fold ``f``. Outcome fits (``r = c``) give the private
    out-of-fold squared error minus :math:`EY^2`; Riesz fits (``r = M``) the Riesz loss
    :math:`E[\rho^2 - 2m(\rho)]`. Both are unbiased for the true-data losses given the fit
    because ``G_f`` and ``r_f`` are, and independent of the fit's noise
    because fold ``f`` is held out. One eigendecomposition per (fold, candidate) gives
    the whole ridge path.

    Parameters
    ----------
    G_folds : ndarray of shape (F, J, J)
        Per-fold private Gram matrices (means over each fold's rows).
    rhs_folds : ndarray of shape (F, J)
        Per-fold private moments ``c`` or ``M``.
    n_rows : ndarray of shape (F,)
        Rows (or total weight) behind each fold.
    candidates : sequence of int arrays, optional
        Sub-bases (indices into the ``J`` functions); default: the full basis only.
    ridges : sequence of float
        Ridges relative to the mean eigenvalue of each training Gram matrix.
    const_folds : ndarray of shape (F,), optional
        Constant added to each fold's loss (:math:`\overline{y^2}` for outcomes); it
        does not change the choice.
    min_ridge : float, default=0.0
        Smallest admissible *absolute* ridge, e.g. the estimated sampling noise of the
        private Gram matrix (:func:`~privinfer.nuisance.series.gram_noise_level`):
        directions below the noise cannot be learned, and an unbounded inverse makes the
        held-out loss (unbiased but unbounded below) pick fits by chance. Grid points below
        it are raised to it. Pairs whose fit needed the last-resort floor in some fold are
        never chosen.
    extrapolation_limit : float, default=EXTRAPOLATION_LIMIT
        The largest ratio of ridge energy to fit energy of a trusted fit (see Notes).
    spectra_cache : SpectraCache, optional
        Keeps each sub-basis's training-fold spectra for the next call with the *same*
        ``G_folds`` and ``n_rows`` (another right-hand side: the outcome and Riesz fits
        of one arm); the caller owns it and must not share it across Gram matrices.
    margins : sequence of float, optional
        One number per candidate. A candidate with margin ``m > 0`` is chosen only where
        its pair beats the best pair of the candidates with margin 0 by ``m`` fold
        standard errors of the *paired* difference of their held-out losses (a family
        of richer sub-bases that must improve on every fold, not on average by chance).
        Default: no margins.
    noiseless : ndarray of bool, shape (J,), optional
        Basis functions whose Gram entries carry no privatisation noise (the models pass
        the purely public sieve functions below ``alpha = 1``). The :func:`noise_guard`
        then penalises only the others, on top of the CV ridge (:func:`guard_lift`),
        instead of flooring the ridge of every function. Default: every function is
        guarded.
    spare : sequence of bool, optional
        One flag per candidate: whether ``noiseless`` applies to it (the models spare the
        public functions of the candidates whose public columns lead, and keep the common
        guard for the others). Default: every candidate.
    support_folds : ndarray of shape (F, J, J), optional
        For a Riesz fit of one treatment arm: the per-fold Gram matrices of *all* rows
        (``G_folds`` holds the arm's). Pairs whose training fits have a
        :func:`_support_share` below ``support_floor`` are not trusted (Notes).
    support_floor : float, default=SUPPORT_FLOOR
        See ``support_folds``.

    Returns
    -------
    SpectralChoice

    Raises
    ------
    DataMismatchError
        If the shapes disagree.

    Notes
    -----
    **Every held-out fold must prefer the fit to no fit.** The zero fit :math:`\theta = 0`
    has held-out loss ``const_f`` on fold ``f`` (zero for Riesz fits). Pairs whose loss
    exceeds it on some fold are chosen only when no pair beats the zero fit on every
    fold. The held-out loss is unbiased but unbounded below: a rich sieve at a tiny ridge
    can put huge coefficients on directions that the training folds barely determine, and
    its fold losses then swing between large positive and large negative values whose
    mean can be the lowest of the grid by chance. Observed at ``alpha = 1`` on NSW
    covariates resampled to n = 4000 (about 1 fit in 100): a Riesz fit with 97 functions
    at ridge 1e-8 had fold losses from -54,000 to +69,000 against about -2.3 for sensible
    fits, a Riesz second moment of 373 where the truth is 2.4, and ``E[Y(1)]`` off by
    1.7 (9 standard errors of a sensible fit). A fit that loses to zero on a held-out fold
    is not trusted to extrapolate, whatever its average.

    **Nor is a fit carried by its ridge.** A ridge fit satisfies
    :math:`\theta'r = \theta'G\theta + \lambda\theta'P\theta`, and the ratio
    :math:`\kappa` of the two energies on the right (column ``penalty_share``) is small
    for a fit the training rows determine. It is large when the fit sits in directions
    where :math:`G` is nearly zero but :math:`r` is not. For a Riesz fit of a treatment
    arm, :math:`G` weights the arm's rows and :math:`r` all rows, so those are the
    directions without overlap in the sample. There the held-out loss is heavy-tailed: a
    held-out fold usually has no arm row where the fit is huge, so it sees only the
    :math:`-2m(\rho)` reward. Observed at ``alpha = 1`` on ``overlap_s`` (propensity in
    [0.03, 0.97], n = 1000): a 37-function Riesz fit at relative ridge 3e-4 had held-out
    loss -614 (fold SE 82) against -6.8 for sensible fits, :math:`\kappa` from 4 to 12 in
    every fold, a Riesz second moment of 276 and an ATE off by 1.2 (8 SEs). Pairs with
    :math:`\kappa` above ``extrapolation_limit`` are not trusted either. Below
    ``alpha = 1`` the deconvolved Gram matrix is indefinite and :math:`\theta'G\theta`
    estimates the fit energy with noise; a fit that the noise guard lifts into the noise
    level has a small or even negative estimated energy (:math:`\kappa = \infty`), and
    is not trusted either. The bootstrap's refits, which see the privatisation noise
    twice, took such fits far more often than the estimator: on ``nsw_censored`` at
    n = 4000 the rule halved the interval lengths (SE / MC sd of the ATE 2.9 to 1.5 at
    ``alpha = 0.5``), and the estimates it changed moved closer to the truth in every
    validation design.

    **Nor is a Riesz fit that lives where the arm has no rows.** At a tiny ridge the
    ridge energy is negligible however wild the fit, so :math:`\kappa` cannot see a fit
    whose directions the arm's rows of the *whole sample* barely touch: every held-out
    fold shares that emptiness, sees only the :math:`-2m(\rho)` reward there, and
    prefers the fit on every fold. With ``support_folds``, pairs whose fits put their
    energy where the arm's share of the rows is below ``support_floor``
    (:data:`SUPPORT_FLOOR`, column ``support_share``) are not trusted either.

    **Ties are broken by order, not by round-off.** Criteria within a relative
    ``TIE_RTOL`` (1e-9) of the minimum count as tied and the first tied pair in
    (candidate, grid) order wins. Ridges below the noise guard all give the same fit, so
    their losses differ only in the last bits, which depend on the CPU's BLAS kernels;
    a plain argmin chose among them differently after a 1e-13 change of the data.

    Examples
    --------
    Outcome regression at ``alpha = 1`` with a useless third basis function: the
    candidate without it wins and almost no ridge is needed.

    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(3000), rng.normal(size=(3000, 2))])
    >>> y = X[:, 0] + X[:, 1] + rng.normal(size=3000)
    >>> folds = np.arange(3000) % 5
    >>> G = np.stack([X[folds == f].T @ X[folds == f] / 600 for f in range(5)])
    >>> c = np.stack([X[folds == f].T @ y[folds == f] / 600 for f in range(5)])
    >>> ch = cv_spectral(G, c, np.full(5, 600.0), candidates=[np.array([0, 1]), np.arange(3)])
    >>> ch.candidate, bool(ch.relative_ridge < 0.05)
    (0, True)
    """
    owner = "cv_spectral"
    G_folds = np.asarray(G_folds, dtype=float)
    rhs_folds = np.asarray(rhs_folds, dtype=float)
    n_rows = np.asarray(n_rows, dtype=float)
    F = n_rows.size
    if G_folds.ndim != 3 or G_folds.shape[0] != F or rhs_folds.shape != G_folds.shape[:2]:
        raise DataMismatchError(
            f"{owner}: G_folds (F, J, J), rhs_folds (F, J) and n_rows (F,) disagree: "
            f"{G_folds.shape}, {rhs_folds.shape}, {n_rows.shape}."
        )
    if F < 2:
        raise DataMismatchError(f"{owner}: cross-validation needs at least 2 folds; got {F}.")
    J = G_folds.shape[1]
    cands = [np.arange(J)] if candidates is None else [np.asarray(c, np.int64) for c in candidates]
    rel = np.asarray(list(ridges), dtype=float)
    if rel.size == 0 or np.any(~np.isfinite(rel)) or np.any(rel < 0):
        raise ValueError(f"{owner}: ridges must be non-negative numbers; got {list(ridges)!r}.")
    const = np.zeros(F) if const_folds is None else np.asarray(const_folds, dtype=float)
    wf = n_rows / n_rows.sum()
    # training averages of every fold at once: row weights of the other folds
    W = np.where(np.eye(F, dtype=bool), 0.0, n_rows[None, :])
    W = W / W.sum(axis=1, keepdims=True)
    G_train = np.einsum("fg,gij->fij", W, G_folds)
    r_train = W @ rhs_folds
    S_train = None
    if support_folds is not None:
        support_folds = np.asarray(support_folds, dtype=float)
        if support_folds.shape != G_folds.shape:
            raise DataMismatchError(
                f"{owner}: support_folds must have the shape of G_folds {G_folds.shape}; "
                f"got {support_folds.shape}."
            )
        S_train = np.einsum("fg,gij->fij", W, support_folds)
    per: list[tuple[FloatArray, IntArray, FloatArray, FloatArray, FloatArray]] = []
    for c, idx in enumerate(cands):
        gm = guarded_of(idx, noiseless if spare is None or spare[c] else None)
        if gm is None and _shaped_guard() and noise_share > 0:
            gm = _all_but_constant(idx)
        key = (idx.tobytes(), float(min_ridge), float(noise_share), _mask_key(gm),
               _guard_key())  # fmt: skip
        if spectra_cache is not None and key in spectra_cache.spectra:
            sp = spectra_cache.spectra[key]
        else:
            sp = _fold_spectra(G_folds, n_rows, G_train, idx, min_ridge, noise_share, gm)
            if spectra_cache is not None:
                spectra_cache.spectra[key] = sp
        if sp is not None:
            per.append(
                _cv_losses_batched(sp, rhs_folds, n_rows, r_train, idx, rel, const, S_train)
            )
        else:
            per.append(_cv_losses_loop(
                G_folds, rhs_folds, n_rows, idx, rel, const, min_ridge, noise_share, gm,
                S_train,
            ))  # fmt: skip
    # every candidate's (ridge x fold) losses at once: shape (C, R, F)
    losses = np.stack([p[0] for p in per])
    floored = np.stack([p[1] for p in per])
    kappa = np.stack([p[3] for p in per])
    support = np.stack([p[4] for p in per])
    # a fit carried by its ridge is not trusted either, nor one where the arm has no
    # rows (Notes)
    tame = (kappa <= extrapolation_limit) & (support >= support_floor)
    mean = losses @ wf
    se = np.sqrt(np.maximum((losses - mean[..., None]) ** 2 @ wf, 0.0) / max(F - 1, 1))
    crit = mean + se_penalty * se
    crit = np.where((floored == 0) & np.isfinite(crit), crit, np.inf)
    # a fit worse than the zero fit on some held-out fold is unstable, however low
    # its mean loss: held-out losses are unbounded below
    beats = (losses <= const).all(axis=2)
    # first minimum in (candidate, grid) order, among the trusted pairs if there are any,
    # else among those that beat the zero fit on every fold; ties up to TIE_RTOL, so that
    # round-off cannot choose
    grid = next(
        (g for g in (np.where(beats & tame, crit, np.inf), np.where(beats, crit, np.inf))
         if np.isfinite(g).any()),
        crit,
    )  # fmt: skip
    if margins is not None:
        grid = _paired_margins(grid, losses, wf, margins, owner)
    low = float(grid.min())
    tied = grid <= low + TIE_RTOL * abs(low)  # all True when every pair is infinite
    ci, r = divmod(int(np.argmax(tied)), rel.size)
    C = len(cands)
    columns = {
        "candidate": np.repeat(np.arange(C), rel.size),
        "n_basis": np.repeat([idx.size for idx in cands], rel.size),
        "relative_ridge": np.tile(rel, C),
        "ridge": np.concatenate(
            [np.maximum(rel * float(p[2].mean()), min_ridge) for p in per]
        ),
        "loss": mean.ravel(), "fold_se": se.ravel(), "n_floored": floored.ravel(),
        "penalty_share": kappa.ravel(), "support_share": support.ravel(),
        "tame": tame.ravel(),
    }  # fmt: skip
    if not np.isfinite(grid[ci, r]):  # every pair needed the floor: the most regularised one
        ci, r = 0, int(np.argmax(rel))
    loss = float(columns["loss"][ci * rel.size + r])
    idx = cands[ci]
    Gall, _ = train_average(G_folds, rhs_folds, n_rows, np.ones(F, dtype=bool))
    Gsub = Gall[np.ix_(idx, idx)]
    scale_all = _penalised_scale(Gsub)
    lam_all = np.linalg.eigvalsh(_penalised_block(Gsub))
    ridge = float(max(rel[r] * scale_all, min_ridge))
    pos = np.maximum(lam_all, 0.0)
    shrink = float(np.mean(pos / np.maximum(pos + ridge, np.finfo(float).tiny)))
    return SpectralChoice(ci, idx, ridge, float(rel[r]), loss, columns, shrink)


def guarded_of(idx: IntArray, noiseless: np.ndarray | None) -> np.ndarray | None:
    """Which functions of sub-basis ``idx`` the noise guard penalises (a mask over its
    positions), or ``None`` for the common guard: no ``noiseless`` mask, or none or all of
    the sub-basis's non-constant functions guarded.

    Examples
    --------
    >>> guarded_of(np.array([0, 1, 3]), np.array([True, False, True, True])).tolist()
    [False, True, False]
    >>> guarded_of(np.array([0, 1]), np.array([True, False, True, True])) is None
    True
    """
    if noiseless is None:
        return None
    g = ~np.asarray(noiseless, dtype=bool)[np.asarray(idx, dtype=np.int64)]
    g[0] = False  # the constant is never penalised
    if not g.any() or g[1:].all():
        return None
    return g


def _mask_key(mask: np.ndarray | None) -> bytes:
    return b"" if mask is None else mask.tobytes()


def _paired_margins(
    grid: FloatArray, losses: FloatArray, wf: FloatArray, margins: Sequence[float], owner: str
) -> FloatArray:
    r"""``grid`` (candidates x ridges) with each margin candidate's criterion raised.

    The base pair is the best of the candidates with margin 0; a pair of a candidate with
    margin :math:`m` gets :math:`m\,\mathrm{se}(d)` added, :math:`d_f` its held-out loss
    minus the base pair's on fold ``f`` and :math:`\mathrm{se}(d)` the fold standard
    error of their mean (:func:`cv_spectral`'s ``margins``).
    """
    mg = np.asarray(margins, dtype=float)
    if mg.shape != (grid.shape[0],) or np.any(~np.isfinite(mg)) or np.any(mg < 0):
        raise DataMismatchError(
            f"{owner}: margins needs one non-negative number per candidate "
            f"({grid.shape[0]}); got {list(np.ravel(mg))!r}."
        )
    base = mg == 0
    at_base = np.where(base[:, None], grid, np.inf)
    if base.all() or not np.isfinite(at_base).any():
        return grid
    cb, rb = np.unravel_index(int(np.argmin(at_base)), grid.shape)
    d = losses - losses[cb, rb][None, None, :]
    dm = d @ wf
    se_d = np.sqrt(np.maximum((d - dm[..., None]) ** 2 @ wf, 0.0) / max(wf.size - 1, 1))
    return grid + mg[:, None] * se_d


def loosest_plausible(choice: SpectralChoice, loosen: float = LOOSEN) -> tuple[int, float]:
    r"""The least regularised fit the CV cannot tell from the chosen one.

    Returns ``(candidate, relative_ridge)``. The pairs considered have a sieve at least as
    rich as the chosen one (a later candidate), a relative ridge between
    :math:`\hat\lambda/` ``loosen`` and :math:`\hat\lambda`, never needed the
    last-resort floor and are not carried by their ridge (``tame``); of those whose CV
    loss is within one fold standard error of the chosen fit's, the richest sieve at its
    smallest ridge. Regularisation biases a fit in two ways, through the ridge and
    through the sieve's truncation, and this comparison fit is looser in both as far as
    the data still find it as good. Loosening further only reaches fits the held-out
    loss already rejects as noise, whose estimates move by noise rather than by the bias
    that regularisation left (:func:`fit_crossfit`'s comparison fit). ``(candidate,
    relative_ridge)`` of the choice itself when nothing qualifies.

    The ladder's candidates are not all nested ("level 4" lacks the interactions of
    "level 3 + interactions"), so a later candidate may drop functions the chosen fit
    uses. Keeping to candidates that contain the chosen one was measured and not
    adopted: at ``alpha = 1``, :math:`n = 1000` on a limited-overlap design it raised
    the false alarms of the bound (fits widened for a bias the estimate does not have)
    from 2 to 5 of 16 after the bootstrap check (validation page of the user guide).

    Examples
    --------
    >>> t = pd.DataFrame({"candidate": [0, 0, 0, 1, 1, 1],
    ...                   "relative_ridge": [0.001, 0.01, 0.1] * 2,
    ...                   "loss": [5.0, 1.05, 1.0, 9.0, 1.08, 1.02], "fold_se": 0.1,
    ...                   "n_floored": 0, "tame": True})
    >>> ch = SpectralChoice(0, np.arange(2), 0.1, 0.1, 1.0, t, 0.5)
    >>> loosest_plausible(ch)
    (1, 0.01)
    """
    t = choice.columns
    cand = np.asarray(t["candidate"])
    rel = np.asarray(t["relative_ridge"], dtype=float)
    loss = np.asarray(t["loss"], dtype=float)
    fold_se = np.asarray(t["fold_se"], dtype=float)
    floored = np.asarray(t["n_floored"])
    # a fit carried by its ridge is no plausible comparison (cv_spectral's Notes)
    tame = np.asarray(t["tame"], dtype=bool) if "tame" in t else np.ones(rel.size, bool)
    at = np.flatnonzero((cand == choice.candidate) & (rel == choice.relative_ridge))
    if at.size == 0:
        return choice.candidate, choice.relative_ridge / loosen
    bound = float(loss[at[0]] + fold_se[at[0]])
    ok = (
        (cand >= choice.candidate)
        & (rel <= choice.relative_ridge)
        & (rel >= choice.relative_ridge / loosen)
        & (floored == 0)
        & (loss <= bound)
        & tame
    )
    if not ok.any():
        return choice.candidate, choice.relative_ridge
    richest = int(cand[ok].max())
    return richest, float(rel[ok & (cand == richest)].min())


def next_richer(
    choice: SpectralChoice, candidates: Sequence[IntArray], loosen: float = LOOSEN
) -> tuple[int, float] | None:
    r"""The smallest later sieve that nests the chosen one, at its CV-best ridge.

    Of the candidates after ``choice.candidate`` whose functions strictly contain the
    chosen sub-basis's, the one with the fewest functions (the first on ties) that has a
    (candidate, ridge) pair which never needed the last-resort floor and is ``tame``;
    its ridge is the pair of least CV loss among those, capped at the chosen relative
    ridge and at least the chosen one over ``loosen``. None when no candidate
    qualifies. The comparison fit of :data:`COMPARE_NEXT`.

    Examples
    --------
    >>> t = pd.DataFrame({"candidate": [0, 0, 1, 1, 2, 2],
    ...                   "relative_ridge": [0.01, 0.1] * 3,
    ...                   "loss": [1.0, 1.1, 1.5, 1.4, 2.0, 2.1], "fold_se": 0.05,
    ...                   "n_floored": 0, "tame": True})
    >>> ch = SpectralChoice(0, np.arange(2), 0.01, 0.01, 1.0, t, 0.5)
    >>> next_richer(ch, [np.arange(2), np.arange(4), np.arange(3)])
    (2, 0.01)
    """
    t = choice.columns
    cand = np.asarray(t["candidate"])
    rel = np.asarray(t["relative_ridge"], dtype=float)
    loss = np.asarray(t["loss"], dtype=float)
    ok = np.asarray(t["n_floored"]) == 0
    if "tame" in t:
        ok &= np.asarray(t["tame"], dtype=bool)
    chosen = set(np.asarray(candidates[choice.candidate]).tolist())
    nests = [
        c
        for c in range(choice.candidate + 1, len(candidates))
        if chosen < set(np.asarray(candidates[c]).tolist()) and np.any(ok & (cand == c))
    ]
    if not nests:
        return None
    c = min(nests, key=lambda k: (len(candidates[k]), k))
    rows = np.flatnonzero(ok & (cand == c))
    best = float(rel[rows[int(np.argmin(loss[rows]))]])
    return c, float(min(max(best, choice.relative_ridge / loosen), choice.relative_ridge))


def plausible_candidates(choice: SpectralChoice, margin: float = REFIT_MARGIN) -> list[int]:
    r"""The sub-bases whose CV loss comes within ``margin`` fold SEs of the best one's.

    Each candidate is scored at its best ridge among the pairs that never needed the
    last-resort floor; a candidate is kept when that loss is at most the best candidate's
    loss plus ``margin`` times the best candidate's fold standard error. All candidates
    when no pair qualifies. A research option of the fold-block bootstrap
    (:mod:`privinfer.models._foldboot`): its draws can refit over these sub-bases only, so
    that a draw still sees the selection noise between sieves the estimate's own CV could
    not tell apart but no longer picks one that CV ruled out. Measured, that trims the
    bootstrap standard error where it is far too large, but also where its width covered
    the estimator's own wild draws, so it is not the default.

    Examples
    --------
    >>> t = pd.DataFrame({"candidate": [0, 0, 1, 1, 2, 2],
    ...                   "relative_ridge": [0.01, 0.1] * 3,
    ...                   "loss": [1.3, 1.08, 1.0, 1.05, 1.5, 1.6], "fold_se": 0.05,
    ...                   "n_floored": 0, "tame": True})
    >>> ch = SpectralChoice(1, np.arange(2), 0.01, 0.01, 1.0, t, 0.5)
    >>> plausible_candidates(ch)
    [0, 1]
    """
    t = choice.columns  # every bootstrap draw asks: plain arrays, no pandas
    cand = np.asarray(t["candidate"])
    loss = np.asarray(t["loss"], dtype=float)
    ok = (np.asarray(t["n_floored"]) == 0) & np.isfinite(loss)
    if not ok.any():
        return np.unique(cand).astype(int).tolist()
    top = np.flatnonzero(ok)[np.argmin(loss[ok])]  # the best pair: its candidate's best too
    bound = loss[top] + margin * float(np.asarray(t["fold_se"], dtype=float)[top])
    return np.unique(cand[ok & (loss <= bound)]).astype(int).tolist()


@dataclass(frozen=True)
class CrossFitFits:
    r"""Cross-fitted coefficients of one nuisance with CV-chosen sieve and ridge.

    Attributes
    ----------
    coefs : ndarray of shape (F, J)
        Fit used for estimation fold ``f`` (trained on ``train_masks[f]``), zero outside
        the chosen sub-basis.
    loose : ndarray of shape (F, J)
        The comparison fits behind the estimated regularisation bias: with a CV choice,
        the :func:`loosest_plausible` sieve and ridge; with a fixed ridge heavier than
        the CV's choice, that choice (:data:`FIXED_COMPARE_CV`); with a lighter fixed
        ridge, the same fits with the ridge divided by ``LOOSEN`` (100).
    choice : SpectralChoice or None
        The cross-validation choice (``None`` when the ridge was fixed).
    relative_ridge : float
        Ridge relative to the mean eigenvalue of each training Gram matrix.
    n_floored : int
        Directions raised to the last-resort floor over all folds.
    ridge_needed : float
        With a fixed ridge that leaves some training Gram matrix below its own
        privatisation noise (:func:`noise_guard`, ``noise_share > 0``): the smallest
        relative ridge that would lift them all above it; ``0.0`` otherwise. Such a fit
        inverts noise, and the models refuse it.
    """

    coefs: FloatArray
    loose: FloatArray
    choice: SpectralChoice | None
    relative_ridge: float
    n_floored: int
    ridge_needed: float = 0.0


def fit_crossfit(
    G_folds: FloatArray,
    rhs_folds: FloatArray,
    n_rows: FloatArray,
    train_masks: np.ndarray,
    *,
    candidates: Sequence[IntArray] | None = None,
    ridges: Sequence[float] = DEFAULT_RIDGE_GRID,
    const_folds: FloatArray | None = None,
    fixed_ridge: float | None = None,
    min_ridge: float = 0.0,
    loosen: float = LOOSEN,
    se_penalty: float = SE_PENALTY,
    noise_share: float = 1.0,
    with_loose: bool = True,
    spectra_cache: SpectraCache | None = None,
    margins: Sequence[float] | None = None,
    noiseless: np.ndarray | None = None,
    spare: Sequence[bool] | None = None,
    support_folds: FloatArray | None = None,
    undersmooth: float = 1.0,
    energy_budget: float | None = None,
) -> CrossFitFits:
    r"""Choose sieve and ridge of one nuisance by private CV, then fit it for every fold.

    The choice is made once by :func:`cv_spectral` over all folds; the fit for
    estimation fold ``f`` then uses the training folds ``train_masks[f]`` (all other folds,
    or half of them when the outcome and Riesz fits are split) with the chosen sub-basis
    and the chosen relative ridge. Everything comes from the per-fold sufficient
    statistics: nothing is refitted from rows.

    Parameters
    ----------
    G_folds, rhs_folds, n_rows
        As in :func:`cv_spectral`.
    train_masks : ndarray of bool, shape (F, F)
        ``train_masks[f, g]``: fold ``g`` is in the training set of estimation fold ``f``.
    candidates, ridges, const_folds
        As in :func:`cv_spectral`.
    fixed_ridge : float, optional
        Skip cross-validation: the full basis with this relative ridge (``0``: the
        ordinary least-squares solution, e.g. at ``alpha = 1`` with a user-chosen basis).
        The :func:`noise_guard` only floors it: a fixed ridge below it is recorded in
        ``ridge_needed`` (the models refuse such fits), so the floor moves no accepted
        fit, only bootstrap draws whose reweighted statistics dip below the noise. With
        ``with_loose`` the CV still runs, for the comparison fit only
        (:data:`FIXED_COMPARE_CV`).
    min_ridge : float, default=0.0
        Smallest absolute ridge (see :func:`cv_spectral`); also the smallest ridge of the
        looser comparison fit.
    with_loose : bool, default=True
        Also fit the looser comparison fits (zeros otherwise, e.g. in bootstrap refits).
    spectra_cache : SpectraCache, optional
        Passed to :func:`cv_spectral`; also keeps each fold's noise guard.
    margins : sequence of float, optional
        As in :func:`cv_spectral`.
    noiseless, spare, support_folds : optional
        As in :func:`cv_spectral` (used with a CV choice only).
    undersmooth : float, default=1.0
        The fits use the CV-chosen relative ridge divided by this factor (at least 1; the
        models' Riesz fits at ``alpha = 1``); the comparison fit's ridge is kept at most
        the fits' own.
    energy_budget : float, optional
        With ``undersmooth``: the factor is the largest of :math:`1, \sqrt{10}, 10,
        \ldots` (up to ``undersmooth``) at which the fits' energy on their estimation
        folds, :math:`\sum_f (n_f/n)\,\hat\theta_{-f}'G_f\hat\theta_{-f}` (for a Riesz
        fit of an arm, its held-out second moment in the arm, the leading term of the
        one-step estimate's variance), is at most ``energy_budget`` times that at the
        CV's ridge, and so is every smaller factor's. Held out, not on the training folds:
        the training energy of a less-penalised fit understates what it costs where few
        rows carry a direction (a 12-level factor with 80% of the rows on two levels, at
        ``alpha = 1``, ``n = 4000``: 1.2-1.4 times the root mean squared error with a
        budget of 1.25 read on the training folds, at most 1.08 times with the models'
        1.5 read held out).

    Returns
    -------
    CrossFitFits

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> X = np.column_stack([np.ones(2000), rng.normal(size=2000)])
    >>> y = 1 + X[:, 1] + rng.normal(size=2000)
    >>> folds = np.arange(2000) % 4
    >>> G = np.stack([X[folds == f].T @ X[folds == f] / 500 for f in range(4)])
    >>> c = np.stack([X[folds == f].T @ y[folds == f] / 500 for f in range(4)])
    >>> masks = ~np.eye(4, dtype=bool)
    >>> fits = fit_crossfit(G, c, np.full(4, 500.0), masks, fixed_ridge=0.0)
    >>> ols = np.linalg.lstsq(X[folds != 0], y[folds != 0], rcond=None)[0]
    >>> bool(np.allclose(fits.coefs[0], ols))
    True
    """
    G_folds = np.asarray(G_folds, dtype=float)
    rhs_folds = np.asarray(rhs_folds, dtype=float)
    F, J = rhs_folds.shape
    if not undersmooth >= 1.0:
        raise ValueError(f"fit_crossfit: undersmooth must be at least 1; got {undersmooth!r}.")

    def private_cv() -> SpectralChoice:
        """The private CV's choice of sub-basis and ridge (:func:`cv_spectral`)."""
        common_cv = GUARD_DIRECTIONS and not GUARD_DIRECTIONS_CV
        with guard_directions(False) if common_cv else nullcontext():
            return cv_spectral(
                G_folds, rhs_folds, n_rows, candidates=candidates, ridges=ridges,
                const_folds=const_folds, min_ridge=min_ridge, se_penalty=se_penalty,
                noise_share=noise_share, spectra_cache=spectra_cache, margins=margins,
                noiseless=noiseless, spare=spare, support_folds=support_folds,
            )  # fmt: skip

    choice = None
    if fixed_ridge is None:
        choice = private_cv()
        subset, rel = choice.subset, choice.relative_ridge / undersmooth
    else:
        subset, rel = np.arange(J), float(fixed_ridge)
    # a fixed ridge heavier than the CV's own choice is compared with that choice
    # (FIXED_COMPARE_CV), made on the same statistics
    compare = None
    if choice is None and with_loose and FIXED_COMPARE_CV and rel > 0:
        compare = private_cv()
        if not compare.relative_ridge < rel:
            compare = None
    loose_pair = None if choice is None or not with_loose else loosest_plausible(choice, loosen)
    if (
        COMPARE_NEXT
        and loose_pair is not None
        and candidates is not None
        and loose_pair[0] == choice.candidate  # type: ignore[union-attr]
    ):
        loose_pair = next_richer(choice, candidates, loosen) or loose_pair  # type: ignore[arg-type]
    richer = loose_pair is not None and candidates is not None and loose_pair[0] != choice.candidate
    loose_subset = np.asarray(candidates[loose_pair[0]]) if richer else subset
    if compare is not None:  # its own sub-basis, scale and noise guard, as a richer sieve's
        loose_pair, richer = (compare.candidate, compare.relative_ridge), True
        loose_subset = np.asarray(compare.subset)
    coefs = np.zeros((F, J))
    loose = np.zeros((F, J))
    n_floored = 0
    needed = 0.0

    def spared(c: int) -> np.ndarray | None:
        """The ``noiseless`` mask where candidate ``c`` spares its public functions."""
        if choice is None or (spare is not None and not spare[c]):
            return None
        return noiseless

    nl = spared(choice.candidate) if choice is not None else None
    # the comparison fit is never guarded more than the chosen one: where the chosen
    # candidate spares its public functions from the noise guard, a richer candidate
    # without that variant does too (guarding them again made the comparison fit the
    # biased one: with a public confounder, shifts of 2-3 SE and intervals widened 1.85
    # times for a bias of 0.2 SE)
    nl_loose = (nl if nl is not None else spared(loose_pair[0])) if richer else nl
    if compare is not None:
        nl_loose = noiseless if spare is None or spare[compare.candidate] else None

    def guard_of(
        idx: IntArray, mask: np.ndarray, Gt: FloatArray, nl: np.ndarray | None
    ) -> tuple[float, float | FloatArray, np.ndarray | None]:
        """Smallest ridge of a fit on ``idx`` (its noise guard, at least ``min_ridge``),
        the guard added to its guarded functions instead (:func:`guard_lift`; 0.0
        without ``noiseless``) and those functions (:func:`guarded_of`).
        """
        gm = guarded_of(idx, nl)
        if gm is None and _shaped_guard() and noise_share > 0 and choice is not None:
            gm = _all_but_constant(idx)
        if noise_share <= 0:
            return min_ridge, 0.0, gm
        key = (
            np.asarray(idx, np.int64).tobytes(), mask.tobytes(), noise_share, min_ridge,
            _mask_key(gm), _guard_key(),
        )  # fmt: skip
        if spectra_cache is not None and key in spectra_cache.guards:
            g = spectra_cache.guards[key]
        else:
            g = noise_guard(G_folds, n_rows, idx, mask, Gt, noise_share, gm)
            if spectra_cache is not None:
                spectra_cache.guards[key] = g
        return (max(min_ridge, g), 0.0, gm) if gm is None else (min_ridge, g, gm)

    def fold_system(f: int) -> tuple[
        np.ndarray, FloatArray, FloatArray, FloatArray, float, float, float | FloatArray,
        np.ndarray | None,
    ]:  # fmt: skip
        """Estimation fold ``f``'s training mask, averages ``Gt`` and ``rt``, the chosen
        sub-basis's block ``Gs``, its penalty scale and :func:`guard_of`'s three parts.
        """
        mask = np.asarray(train_masks[f], bool)
        Gt, rt = train_average(G_folds, rhs_folds, n_rows, mask)
        Gs = Gt[np.ix_(subset, subset)]
        return (mask, Gt, rt, Gs, _penalised_scale(Gs), *guard_of(subset, mask, Gt, nl))

    # each fold's training system, built once for the energy budget and the fits
    systems = [fold_system(f) for f in range(F)]

    def energies(rels: FloatArray) -> FloatArray:
        """Row-weighted mean over the folds of the fits' energy on their estimation fold
        at each relative ridge.
        """
        w = n_rows / n_rows.sum()
        out = np.zeros(rels.size)
        for f in range(F):
            _, _, rt, Gs, scale, guard, lift, gm = systems[f]
            lams = np.maximum(rels * scale, guard)
            path, _ = ridge_path(guard_lift(Gs, lift, gm), rt[subset], lams)
            Gf = G_folds[f][np.ix_(subset, subset)]
            out += w[f] * np.einsum("ri,ij,rj->r", path, Gf, path)
        return out

    if choice is not None and undersmooth > 1.0 and energy_budget is not None and rel > 0:
        steps = 10.0 ** (np.arange(int(np.floor(2 * np.log10(undersmooth) + 1e-9)) + 1) / 2)
        rels = choice.relative_ridge / steps
        e = energies(rels)
        ok = np.cumprod((e > 0) & (e <= energy_budget * e[0])).astype(bool)
        rel = float(rels[int(np.flatnonzero(ok)[-1])]) if ok.any() else choice.relative_ridge
    if loose_pair is not None and choice is not None and rel < choice.relative_ridge:
        loose_pair = (loose_pair[0], min(loose_pair[1], rel))  # never tighter than the fits
    for f in range(F):
        mask, Gt, rt, Gs, scale, guard, lift, gm = systems[f]
        if noise_share > 0 and choice is None and rel * scale < guard:
            needed = max(needed, guard / scale)
        # a fixed ridge is the user's: recorded when it sits below the noise (the models
        # then refuse the fit), and otherwise used as given. The guard floors it all the
        # same: that changes no fit the models accept, but a bootstrap draw's reweighted
        # statistics can dip below the noise the estimate's own fits cleared (a ridge
        # just above the one needed: standard errors of 1e17 before this floor)
        lam = max(rel * scale, guard)
        lams = [lam]
        if loose_pair is None and with_loose:
            lams.append(max(lam / loosen, guard))
        elif loose_pair is not None and not richer:
            lams.append(max(loose_pair[1] * scale, guard))
        Gfit = guard_lift(Gs, lift, gm)
        path, fl = ridge_path(Gfit, rt[subset], lams)
        coefs[f, subset] = path[0]
        n_floored += int(fl[0])
        if len(lams) == 2:
            loose[f, subset] = path[1]
        elif richer:  # its own scale and noise guard
            Gl = Gt[np.ix_(loose_subset, loose_subset)]
            guard_l, lift_l, gm_l = guard_of(loose_subset, mask, Gt, nl_loose)
            lam_l = max(loose_pair[1] * _penalised_scale(Gl), guard_l)
            Gl = guard_lift(Gl, lift_l, gm_l)
            loose[f, loose_subset] = ridge_path(Gl, rt[loose_subset], [lam_l])[0][0]
    return CrossFitFits(coefs, loose, choice, rel, n_floored, needed)
