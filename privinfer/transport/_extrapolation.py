r"""Extrapolation of the in-sample and held-out transport costs to zero noise.

Private helpers of :func:`privinfer.transport.estimate_transport_cost`. At noise level
:math:`\tau` (variance relative to the release; :math:`t = \sqrt\tau`) the in-sample
value of the optimal plan has mean :math:`g(t)` and the true cost of that plan has mean
:math:`h(t) = g(t) - t g'(t)`. The hyperbolic model

.. math:: g(t) = W - c\,(\sqrt{t^2 + a^2} - a), \qquad
          h(t) = W + c\,\Bigl(a - \frac{a^2}{\sqrt{t^2 + a^2}}\Bigr),
          \qquad c \ge 0,\ a > 0,

satisfies that identity, is quadratic in :math:`t` for :math:`t \ll a` and linear for
:math:`t \gg a`; it is fitted to both curves by least squares and read off at
:math:`t = 0` (:math:`g(0) = h(0) = W`).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

from privinfer._typing import FloatArray

#: Bounds of log(a): a between about 1e-3 and 1e3 noise units.
_LOG_A_BOUNDS = (-7.0, 7.0)
#: ``ftol``, ``xtol`` and ``gtol`` of the least-squares fit, on the scale-free problem
#: (SciPy's defaults, 1e-8, stopped the fit where a change of the data in its last digit
#: moved the fitted W in its eighth).
_LSQ_TOL = 1e-12
#: Starting values whose fits' costs agree to this relative tolerance are tied, and the
#: first is kept: the cost is flat in log a near its minimum, so ties are common and
#: breaking them on rounding made the fit depend on the units of the data.
_TIE_RTOL = 1e-9


def hyperbolic_curves(params: FloatArray, tau: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(g, h)`` of the hyperbolic model at noise variances ``tau``."""
    w, c, log_a = params
    a = np.exp(log_a)
    s = np.sqrt(tau + a**2)
    return w - c * (s - a), w + c * (a - a**2 / s)


def _residuals(unit_params: FloatArray, tau: FloatArray, g: FloatArray, h: FloatArray,
               has_g: FloatArray, has_h: FloatArray) -> FloatArray:
    """Residuals of the model in units of the data scale (``g``, ``h`` and the first two
    parameters all divided by it).
    """
    gm, hm = hyperbolic_curves(unit_params, tau)
    return np.concatenate([(gm - g)[has_g], (hm - h)[has_h]])


def _jacobian(unit_params: FloatArray, tau: FloatArray, g: FloatArray, h: FloatArray,
              has_g: FloatArray, has_h: FloatArray) -> FloatArray:
    r"""Jacobian of :func:`_residuals` in ``(W, c, log a)``: with :math:`s = \sqrt{t^2 +
    a^2}`, :math:`\partial g/\partial c = a - s`, :math:`\partial g/\partial\log a =
    c\,a(1 - a/s)`, :math:`\partial h/\partial c = a - a^2/s` and
    :math:`\partial h/\partial\log a = c\,a(1 - 2a/s + a^3/s^3)`.
    """
    _, c, log_a = unit_params
    a = np.exp(log_a)
    s = np.sqrt(tau + a**2)
    ones = np.ones_like(tau)
    jg = np.stack([ones, a - s, c * a * (1.0 - a / s)], axis=1)
    jh = np.stack([ones, a - a**2 / s, c * a * (1.0 - 2.0 * a / s + (a / s) ** 3)], axis=1)
    return np.vstack([jg[has_g], jh[has_h]])


def fit_hyperbolic(tau: FloatArray, g: FloatArray, h: FloatArray
                   ) -> tuple[FloatArray, FloatArray]:
    r"""Least-squares fit of ``(W, c, log a)`` to the in-sample and held-out curves.

    ``g`` and ``h`` may hold NaN where a level has no value. Three starting values of
    :math:`a` are tried and the best fit is kept (a later start replaces the fit kept so
    far only when its cost is lower by more than a relative :data:`_TIE_RTOL`). Returns
    the parameters and the Gauss-Newton gradient of the fitted :math:`W` in ``(g, h)``
    (zeros where a value is missing), :math:`\partial\hat\theta/\partial y =
    (J'J)^{-1}J'`, with the parameters at a bound held fixed; it feeds the delta-method
    standard error.

    The fit is scale-free: with :math:`s` the largest of :math:`\max|y|` and the range of
    the values :math:`y`, it solves for :math:`(W/s, c/s, \log a)` on the residuals
    divided by :math:`s`, so every stopping rule of the solver (its step tolerance
    compares the step with the norm of the parameter vector) sees the same numbers
    whatever the units of the cost, and the fit on :math:`\lambda y` is :math:`\lambda`
    times the fit on :math:`y` in :math:`W` and :math:`c` (and equal in :math:`a`). The
    Jacobian is analytic and the tolerances tight (:data:`_LSQ_TOL`), so the fit is
    converged rather than stopped wherever the path of the solver happens to be.
    """
    has_g, has_h = np.isfinite(g), np.isfinite(h)
    values = np.concatenate([g[has_g], h[has_h]])
    scale = float(max(np.max(np.abs(values)), np.ptp(values), 1e-300))
    g_u, h_u = g / scale, h / scale
    lower = np.array([-np.inf, 0.0, _LOG_A_BOUNDS[0]])
    upper = np.array([np.inf, np.inf, _LOG_A_BOUNDS[1]])
    g1 = float(g_u[has_g][0])
    h1 = float(h_u[has_h][0])
    best = None
    for log_a in (-2.0, 0.0, 2.0):
        x0 = np.array([0.5 * (g1 + h1), max(h1 - g1, 1e-6), log_a])
        fit = least_squares(_residuals, x0, jac=_jacobian, bounds=(lower, upper),
                            args=(tau, g_u, h_u, has_g, has_h), x_scale="jac",
                            ftol=_LSQ_TOL, xtol=_LSQ_TOL, gtol=_LSQ_TOL)
        if best is None or fit.cost < best.cost * (1.0 - _TIE_RTOL):
            best = fit
    assert best is not None
    to_units = np.array([scale, scale, 1.0])
    # parameters at (or numerically at) a bound are held fixed: near a = 0 the model no
    # longer depends on a, and near c = 0 on neither c nor a
    free = best.active_mask == 0
    free[2] &= (best.x[2] - _LOG_A_BOUNDS[0] > 0.5) and (_LOG_A_BOUNDS[1] - best.x[2] > 0.5)
    if best.x[1] <= 1e-8:
        free[1:] = False
    # d model / d theta in the units of y: d(y/s)/d(W/s) = dy/dW, and d(y/s)/d log a
    # times s
    jac = (best.jac * (scale / to_units))[:, free]
    grad_used = np.zeros(values.shape[0])
    if free[0]:
        # columns scaled to unit norm first: W and c are in units of the cost and log a
        # is not, so a cut-off relative to the largest singular value of the raw Jacobian
        # dropped the W direction once costs were above ~1e8 (std_error ~ 0)
        norms = np.linalg.norm(jac, axis=0)
        norms[norms == 0.0] = 1.0
        sens = np.linalg.pinv(jac / norms, rcond=1e-8) / norms[:, None]
        grad_used = sens[0]  # (free params, used values) -> the row of W
    grad = np.zeros(2 * g.shape[0])
    grad[np.flatnonzero(np.concatenate([has_g, has_h]))] = grad_used
    return best.x * to_units, grad
