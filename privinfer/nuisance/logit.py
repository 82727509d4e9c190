r"""Private logistic regression by the private method of moments.

Kormos and van der Vaart (2026), Prop. 2.

The logistic score :math:`\phi_\gamma(v, x) = (d - \mathrm{expit}(\gamma'\psi(w, x)))\,\psi(w, x)`
with a linear basis :math:`\psi = (1, w, x)` is inverted whole:
:math:`\frac1n\sum_i (Q_X^{-1}\phi_\gamma)(V_i, Z_i) = 0` is solved by damped Newton steps.
The index :math:`\gamma'\psi = t(w) + \eta(x)` adds a public and a private part, so every
reference expectation is a function of the scalar ``t`` only
(:func:`privinfer.inversion.index_expectation`): O(n K^2 + T M K^2), never O(n M).
At ``alpha = 1`` this is the logistic maximum-likelihood estimator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from privinfer._typing import FloatArray
from privinfer.exceptions import SingularDesignError
from privinfer.inversion import index_expectation, invert

__all__ = ["PrivateLogitFit", "fit_private_logit", "newton_logit", "private_logit_scores"]


def _dexpit(x: FloatArray) -> FloatArray:
    p = expit(x)
    return p * (1.0 - p)


@dataclass(frozen=True)
class PrivateLogitFit:
    """Coefficients of a private logit on ``(1, public, private)`` columns.

    Attributes
    ----------
    coef : ndarray of shape (1 + K_public + K_private,)
    n_iter : int
    moment_norm : float
        Max-norm of the private moment at the solution (in the standardised columns the
        solver works with).
    interp_error : float
        Largest index-expectation interpolation error met.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> v, x = rng.normal(size=2000), rng.uniform(-1, 1, 2000)
    >>> d = (rng.random(2000) < expit(0.5 * v + x)).astype(float)
    >>> z = np.where(rng.random(2000) < 0.6, x, rng.uniform(-1, 1, 2000))  # alpha = 0.6
    >>> ref = np.linspace(-1, 1, 201)[:, None]
    >>> fit = fit_private_logit(d, v[:, None], z[:, None], ref, np.full(201, 1 / 201), 0.6)
    >>> public_coef, private_coef = fit.split(n_public=1)  # (intercept, v) and (x,)
    >>> public_coef.shape, private_coef.shape, bool(fit.moment_norm < 1e-8)
    ((2,), (1,), True)
    >>> bool(abs(private_coef[0] - 1.0) < 0.3)  # true coefficient of x: 1
    True
    """

    coef: FloatArray
    n_iter: int
    moment_norm: float
    interp_error: float

    def split(self, n_public: int) -> tuple[FloatArray, FloatArray]:
        """Coefficients of ``(1, public)`` and of the private columns."""
        return self.coef[: 1 + n_public], self.coef[1 + n_public :]


def _logit_moments(
    g: FloatArray,
    d: FloatArray,
    W: FloatArray,
    private: FloatArray,
    private_ref: FloatArray,
    ref_weights: FloatArray,
    alpha: float,
    *,
    with_jac: bool,
    with_rows: bool,
    grid_size: int,
    span: tuple[float, float, bool] | None = None,
    weights: FloatArray | None = None,
    Psi: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray | None, FloatArray | None, float]:
    r"""Mean private logistic moment, its Jacobian and (optionally) the private rows.

    With public sampling ``weights`` (mean one) every row's contribution is weighted;
    weights commute with :math:`Q_X^{-1}`.

    The single implementation behind :func:`fit_private_logit` and
    :func:`private_logit_scores`. With :math:`t = w'\gamma_w` and
    :math:`\eta(x) = x'\gamma_x`, the reference term of row ``i`` is
    :math:`\bar Q[\psi(d - \mathrm{expit}(t + \eta))](v_i) =
    (w_i(d_i - F_{i0}),\ d_i E_{\bar Q}x - F_{i,1:})` with
    :math:`F_i = E_{\bar Q}[(1, x)\,\mathrm{expit}(t_i + \eta(X))]`.
    """
    n = d.size

    def _w(v: FloatArray) -> FloatArray:  # weight the rows of v (nothing without weights)
        if weights is None:
            return v
        return v * weights.reshape(-1, *([1] * (v.ndim - 1)))

    if Psi is None:  # (1, public, private), passed in by a caller that evaluates many g
        Psi = np.column_stack([W, private])
    kw = W.shape[1]
    kx = private.shape[1]
    t = W @ g[:kw]
    eta = t + private @ g[kw:]
    p = expit(eta)
    raw_rows = Psi * (d - p)[:, None] if with_rows else None
    raw = Psi.T @ _w(d - p) / n
    jac_raw = -(Psi * _w(p * (1.0 - p))[:, None]).T @ Psi / n if with_jac else None
    if alpha == 1.0:
        return raw, jac_raw, None if raw_rows is None else _w(raw_rows), 0.0
    x_ref_1 = np.column_stack([np.ones(private_ref.shape[0]), private_ref])
    eta_ref = private_ref @ g[kw:]
    F, e1 = index_expectation(
        t, eta_ref, x_ref_1, ref_weights, expit, grid_size=grid_size, span=span
    )
    mean_x = ref_weights @ private_ref
    ref_mean = np.concatenate(
        [W.T @ _w(d) / n - W.T @ _w(F[:, 0]) / n, _w(d).mean() * mean_x - _w(F[:, 1:]).mean(axis=0)]
    )
    m = invert(raw, ref_mean, alpha)
    rows = None
    if with_rows:
        qbar_rows = np.column_stack([W * (d - F[:, 0])[:, None], d[:, None] * mean_x - F[:, 1:]])
        rows = _w(invert(raw_rows, qbar_rows, alpha))
    jac = None
    e2 = 0.0
    if with_jac:
        iu = np.triu_indices(kx + 1)
        xx_ref = (x_ref_1[:, :, None] * x_ref_1[:, None, :])[:, iu[0], iu[1]]
        # S(t) = E_Qbar[(1, x)(1, x)' dexpit(t + eta)] (upper triangle) at the distinct t
        # only: the rows need its first row (the public blocks), the private block only
        # its (weighted) mean over rows (no n x K^2 array)
        tu, inv = np.unique(t, return_inverse=True)
        cnt = np.bincount(inv, weights=weights, minlength=tu.size)
        S, e2 = index_expectation(
            tu, eta_ref, xx_ref, ref_weights, _dexpit, grid_size=grid_size, span=span
        )
        first = S[inv, : kx + 1]  # the entries (0, 0), (0, 1), ..., (0, kx)
        mean_S = np.zeros((kx + 1, kx + 1))
        mean_S[iu[0], iu[1]] = cnt @ S / n
        mean_S[iu[1], iu[0]] = mean_S[iu[0], iu[1]]
        b11 = (W * _w(first[:, 0])[:, None]).T @ W / n
        b12 = W.T @ _w(first[:, 1:]) / n
        b22 = mean_S[1:, 1:]
        ref_jac = -np.block([[b11, b12], [b12.T, b22]])
        jac = invert(jac_raw, ref_jac, alpha)
    return m, jac, rows, max(e1, e2)


def private_logit_scores(
    coef: FloatArray,
    d: FloatArray,
    public: FloatArray,
    private: FloatArray,
    private_ref: FloatArray,
    ref_weights: FloatArray,
    alpha: float,
    *,
    grid_size: int = 129,
    weights: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray, float]:
    r"""Private logistic score rows and Jacobian at ``coef`` (for sandwich covariances).

    Parameters
    ----------
    coef : ndarray of shape (1 + K_public + K_private,)
        Coefficients of ``(1, public, private)``.
    d, public, private, private_ref, ref_weights, alpha
        As in :func:`fit_private_logit`.
    grid_size : int, default=129
        Grid of the single-index reference expectations.
    weights : ndarray of shape (n,), optional
        Public sampling weights (mean one): weighted rows and Jacobian.

    Returns
    -------
    rows : ndarray of shape (n, K)
        :math:`(Q_X^{-1}\phi_\gamma)(V_i, Z_i)`, the private score of every row.
    jacobian : ndarray of shape (K, K)
        :math:`\frac1n\sum_i Q_X^{-1}[-\mathrm{expit}'(\gamma'\psi)\psi\psi']`, the
        derivative of the mean private score (the operator commutes with it).
    interp_error : float
        Largest single-index interpolation error met.
    """
    W = np.column_stack([np.ones(d.size), public])
    _, jac, rows, err = _logit_moments(
        np.asarray(coef, dtype=float),
        d,
        W,
        private,
        private_ref,
        ref_weights,
        alpha,
        with_jac=True,
        with_rows=True,
        grid_size=grid_size,
        weights=weights,
    )
    assert jac is not None and rows is not None
    return rows, jac, err


def fit_private_logit(
    d: FloatArray,
    public: FloatArray,
    private: FloatArray,
    private_ref: FloatArray,
    ref_weights: FloatArray,
    alpha: float,
    *,
    max_iter: int = 100,
    tol: float = 1e-11,
    label: str = "propensity",
    grid_size: int = 129,
    weights: FloatArray | None = None,
) -> PrivateLogitFit:
    """Solve the private logistic moment equations.

    Parameters
    ----------
    d : ndarray of shape (n,)
        Binary public outcome (e.g. the treatment).
    public, private : ndarray of shape (n, K_public), (n, K_private)
        Released covariate columns (an intercept is added).
    private_ref : ndarray of shape (M, K_private)
        Private columns at the reference points; ``ref_weights`` their weights.
    alpha : float
        Keep probability.
    weights : ndarray of shape (n,), optional
        Public sampling weights (mean one): the weighted moment equations.

    Returns
    -------
    PrivateLogitFit
        Coefficients of ``(1, public, private)`` and convergence information.

    Raises
    ------
    SingularDesignError
        If Newton's method cannot make progress (no private root, e.g. separation).

    Examples
    --------
    At ``alpha = 1`` (nothing replaced) this is the logistic maximum-likelihood fit:

    >>> import statsmodels.api as sm
    >>> rng = np.random.default_rng(0)
    >>> v, x = rng.normal(size=2000), rng.uniform(-1, 1, 2000)
    >>> d = (rng.random(2000) < expit(0.5 * v + x)).astype(float)
    >>> ref = np.linspace(-1, 1, 201)[:, None]
    >>> fit = fit_private_logit(d, v[:, None], x[:, None], ref, np.full(201, 1 / 201), 1.0)
    >>> mle = sm.Logit(d, np.column_stack([np.ones(2000), v, x])).fit(disp=0).params
    >>> bool(np.allclose(fit.coef, mle, atol=1e-6))
    True
    """
    # an affine reparametrisation (centred, unit-variance columns) leaves the solution
    # unchanged but keeps Newton's method well conditioned whatever the columns' units:
    # the fit must not depend on their scale or on which of them are private
    pub_c, pub_s = _standardisation(np.asarray(public, dtype=float))
    priv_c, priv_s = _standardisation(np.asarray(private, dtype=float))
    public = (public - pub_c) / pub_s
    private = (private - priv_c) / priv_s
    private_ref = (private_ref - priv_c) / priv_s
    W = np.column_stack([np.ones(d.size), public])
    Psi = np.column_stack([W, private])  # one design for every Newton step

    def moment(g: FloatArray, with_jac: bool) -> tuple[FloatArray, FloatArray | None, float]:
        m, jac, _, err = _logit_moments(
            g,
            d,
            W,
            private,
            private_ref,
            ref_weights,
            alpha,
            with_jac=with_jac,
            with_rows=False,
            grid_size=grid_size,
            weights=weights,
            Psi=Psi,
        )
        return m, jac, err

    return newton_logit(
        moment, float(d.mean()), (pub_c, pub_s, priv_c, priv_s),
        max_iter=max_iter, tol=tol, label=label,
    )  # fmt: skip


def newton_logit(
    moment: Callable[[FloatArray, bool], tuple[FloatArray, FloatArray | None, float]],
    d_mean: float,
    scaling: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    *,
    max_iter: int = 100,
    tol: float = 1e-11,
    label: str = "propensity",
) -> PrivateLogitFit:
    """Damped Newton steps on the standardised private logistic moment equations.

    The solver of :func:`fit_private_logit`, for any ``moment(g, with_jac) -> (mean
    moment, Jacobian or None, interpolation error)`` in the standardised columns (e.g.
    sums over the partitions of a Dask frame). ``d_mean`` is the mean outcome (the
    start), ``scaling`` the centres and scales of the public and private columns; the
    coefficients are returned on the original scale.
    """
    pub_c, pub_s, priv_c, priv_s = scaling
    g = np.zeros(1 + pub_c.size + priv_c.size)
    pbar = np.clip(d_mean, 1e-6, 1 - 1e-6)
    g[0] = np.log(pbar / (1 - pbar))
    interp_err = 0.0
    m, jac, e = moment(g, True)
    interp_err = max(interp_err, e)
    it = 0
    for _ in range(max_iter):
        it += 1
        try:
            step = np.linalg.solve(jac, -m)
        except np.linalg.LinAlgError as err:
            raise SingularDesignError(
                f"{label}: the Jacobian of the private logistic moment equations is singular "
                "(a covariate constant or collinear within these rows, or alpha too small for "
                "this design). Use riesz='auto'."
            ) from err
        norm0 = np.max(np.abs(m))
        lam = 1.0
        while True:
            g_new = g + lam * step
            m_new, _, e = moment(g_new, False)
            if np.max(np.abs(m_new)) < norm0 or lam < 1e-6:
                break
            lam *= 0.5
        g = g_new
        interp_err = max(interp_err, e)
        if (
            np.max(np.abs(lam * step)) < tol * (1 + np.max(np.abs(g)))
            and np.max(np.abs(m_new)) < 1e-8
        ):
            m = m_new
            break
        m, jac, e = moment(g, True)
        interp_err = max(interp_err, e)
        if np.max(np.abs(m)) < 1e-13:
            break
    norm = float(np.max(np.abs(m)))
    if not np.all(np.isfinite(g)) or norm > 1e-6:
        raise SingularDesignError(
            f"{label}: the private logistic moment equations have no solution reached by Newton's "
            f"method (max |moment| = {norm:.3g}); the treatment may be (quasi-)separated by the "
            "covariates or alpha too small for this design. Use riesz='auto'."
        )
    scale = np.concatenate([[1.0], pub_s, priv_s])
    coef = g / scale
    coef[0] = g[0] - float(coef[1:] @ np.concatenate([pub_c, priv_c]))
    return PrivateLogitFit(coef, it, norm, interp_err)


def _standardisation(cols: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Column means and standard deviations (0 and 1 for constant columns)."""
    if cols.shape[0] == 0 or cols.shape[1] == 0:
        return np.zeros(cols.shape[1]), np.ones(cols.shape[1])
    return standardisation_rule(cols.mean(axis=0), cols.std(axis=0))


def standardisation_rule(c: FloatArray, s: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Centres and scales from column means ``c`` and standard deviations ``s``.

    Constant columns (relative spread below 1e-12) keep centre 0 and scale 1.
    """
    const = ~(s > 1e-12 * np.maximum(np.abs(c), 1.0))
    return np.where(const, 0.0, c), np.where(const, 1.0, s)
