"""The critical value of bias-aware confidence intervals (Armstrong and Kolesar, 2020).

Shared by the nuisance fits (which estimate a bias bound) and the results (whose
intervals use it); depends on nothing else in the package.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from privinfer._typing import FloatArray
from privinfer._validation import check_in_interval

__all__ = ["bias_aware_critical_value"]


def bias_aware_critical_value(
    bias_over_se: float | FloatArray,
    level: float = 0.05,
    *,
    dist: Any = norm,
    dist_args: tuple[Any, ...] = (),
) -> FloatArray:
    r"""Critical value of the bias-aware interval (Armstrong and Kolesár, 2020).

    For an estimator :math:`\hat\psi \sim N(\psi + b, \mathrm{se}^2)` with
    :math:`|b| \le B`, the interval :math:`\hat\psi \pm \mathrm{cv}\cdot\mathrm{se}` with
    ``cv`` the :math:`1 - a` quantile of :math:`|N(B/\mathrm{se}, 1)|`, i.e. the root of

    .. math:: \Phi(\mathrm{cv} - t) - \Phi(-\mathrm{cv} - t) = 1 - a,\qquad t = B/\mathrm{se},

    covers :math:`\psi` with probability at least :math:`1 - a` whatever the bias within
    the bound. At ``t = 0`` it is the usual :math:`z_{1-a/2}`; for large ``t`` it is
    about :math:`t + z_{1-a}`.

    Parameters
    ----------
    bias_over_se : float or ndarray
        :math:`t = B/\mathrm{se} \ge 0`.
    level : float, default=0.05
        Significance level ``a``.
    dist, dist_args : scipy.stats distribution and its shape arguments, default normal
        A symmetric reference law :math:`F` in place of :math:`\Phi` (e.g. Student's t
        for ``use_t`` contrasts): ``cv`` solves :math:`F(\mathrm{cv} - t) - F(-\mathrm{cv}
        - t) = 1 - a`.

    Returns
    -------
    ndarray
        Critical values, same shape as ``bias_over_se``.

    Examples
    --------
    >>> round(float(bias_aware_critical_value(0.0)), 4)
    1.96
    >>> round(float(bias_aware_critical_value(1.0)), 4)  # Armstrong and Kolesar, Table 1
    2.6461
    """
    level = check_in_interval(
        level, "level", "bias_aware_critical_value", 0.0, 1.0, low_open=True, high_open=True
    )
    t = np.abs(np.asarray(bias_over_se, dtype=float))
    if np.any(~np.isfinite(t)):
        raise ValueError("bias_aware_critical_value: bias_over_se must be finite.")

    def one(b: float) -> float:
        if b > 10.0 and dist is norm:  # Phi(-c - b) < 1e-23: the one-sided quantile
            return float(b + norm.ppf(1 - level))

        def f(c: float) -> float:
            return float(dist.cdf(c - b, *dist_args) - dist.cdf(-c - b, *dist_args) - (1 - level))

        hi = b + dist.ppf(1 - level / 2, *dist_args) + 1.0
        while f(hi) < 0:  # heavy tails (never for the normal law): widen the bracket
            hi *= 2.0
        return float(brentq(f, 0.0, hi, xtol=1e-12))

    return np.vectorize(one, otypes=[float])(t)
