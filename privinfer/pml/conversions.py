r"""Conversions from eps-PML on the c-interior to (alpha, delta)-LDP.

Grosse, Saeidian, Oechtering and Skoglund (2026, §III-A, §VI-D1).

LDP is the ``c = 0`` case of c-interior PML: a kernel is eps-PML on
:math:`\mathcal P_0 = \mathcal P(\mathcal X)` iff it is eps-LDP (Grosse et al., 2026, Theorem 2).
For ``c > 0`` the conversions below are loose but valid; above the high-privacy
threshold :math:`-\log(c\mu(\mathcal X))` no pure LDP guarantee follows at all.
"""

from __future__ import annotations

import numpy as np

from privinfer._typing import ArrayLike, FloatArray
from privinfer._validation import check_in_interval
from privinfer.pml.contraction import (
    _check_c,
    _check_eps,
    _check_measure,
    eta_gamma,
    eta_tv,
    high_privacy_threshold,
)
from privinfer.pml.leakage import check_stochastic_matrix

__all__ = [
    "gamma_star",
    "kernel_ldp_delta",
    "kernel_ldp_epsilon",
    "ldp_delta",
    "pml_to_approx_ldp",
    "pml_to_pure_ldp",
]


def gamma_star(eps: float, c: float, measure: float) -> float:
    r"""Likelihood-ratio constant :math:`\gamma^* = e^\varepsilon d_c/(1 - e^\varepsilon c\mu)`.

    The largest ratio :math:`K(B|x)/K(B|x')` of an eps-PML kernel on the c-interior in
    the high-privacy regime (Grosse et al., 2026, Lemma 2, §IV-A, §VI-D1). O(1).

    Parameters
    ----------
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.

    Returns
    -------
    float
        :math:`\gamma^*`; ``inf`` when :math:`\varepsilon \ge -\log(c\mu(\mathcal X))`.

    Notes
    -----
    From the PML constraint :math:`K(B|x)\le e^\varepsilon(c(\mu K)(B) + d_c K(B|x'))` and
    :math:`(\mu K)(B)\le\mu(\mathcal X)\max_x K(B|x)`, taking x the maximiser:
    :math:`\max K (1 - e^\varepsilon c\mu(\mathcal X)) \le e^\varepsilon d_c\min K`.

    Examples
    --------
    >>> round(gamma_star(1.0, 0.0, 3), 6) == round(np.e, 6)  # LDP: gamma* = e^eps
    True
    """
    measure = _check_measure(measure, "gamma_star")
    c = _check_c(c, measure, "gamma_star")
    eps = _check_eps(eps, "gamma_star")
    if eps >= high_privacy_threshold(c, measure):
        return float("inf")
    with np.errstate(over="ignore"):  # e^eps beyond double range: gamma* is +inf
        e = np.exp(eps)
        if c == 0.0:  # the LDP case: gamma* = e^eps
            return float(e)
        return float(e * (1.0 - c * measure) / (1.0 - e * c * measure))


def pml_to_pure_ldp(eps: float, c: float, measure: float) -> float:
    r"""Pure LDP level :math:`\alpha = \log\gamma^*` implied by eps-PML on the c-interior.

    Every eps-PML kernel on :math:`\mathcal P_c` with :math:`\varepsilon <
    -\log(c\mu(\mathcal X))` is :math:`\log\gamma^*`-LDP (Grosse et al., 2026, Lemma 2). O(1).

    Parameters
    ----------
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``; ``c = 0`` returns ``eps``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.

    Returns
    -------
    float
        :math:`\alpha = \log\gamma^*`; ``inf`` outside the high-privacy regime.

    See Also
    --------
    gamma_star : The ratio constant.
    pml_to_approx_ldp : The approximate LDP curve delta(alpha).

    Examples
    --------
    >>> pml_to_pure_ldp(0.5, 0.0, 4)
    0.5
    """
    g = gamma_star(eps, c, measure)
    return float(np.log(g)) if np.isfinite(g) else float("inf")


def pml_to_approx_ldp(alpha: ArrayLike, eps: float, c: float, measure: float) -> FloatArray:
    r"""(alpha, delta)-LDP curve implied by eps-PML on the c-interior (Grosse et al., 2026, §VI-D1).

    A kernel is :math:`(\alpha,\delta)`-LDP iff its :math:`E_{e^\alpha}` contraction
    coefficient is at most :math:`\delta`; Grosse et al. (2026) Theorem 4 bounds that coefficient.
    Vectorised over ``alpha``. O(len(alpha)).

    Parameters
    ----------
    alpha : array-like of float
        LDP levels, ``>= 0``.
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.

    Returns
    -------
    ndarray
        :math:`\delta(\alpha)`, same shape as ``alpha``.

    See Also
    --------
    ldp_delta : The c = 0 formula.
    privinfer.pml.eta_gamma_bound : The hockey-stick bound behind it.

    Notes
    -----
    .. math:: \delta(\alpha) = \eta_{TV}(\varepsilon)\cdot\begin{cases}
              \big(\frac{\gamma^* - e^\alpha}{\gamma^* - 1}\big)_+ &
              \varepsilon < -\log(c\mu(\mathcal X)),\\ 1 & \text{otherwise,}\end{cases}
              \qquad \gamma^* = \frac{e^\varepsilon d_c}{1 - e^\varepsilon c\mu(\mathcal X)}.

    At ``c = 0``: :math:`\delta(\alpha) = ((e^\varepsilon - e^\alpha)/(e^\varepsilon + 1))_+`.

    Examples
    --------
    >>> d = pml_to_approx_ldp([0.0, 1.0], 1.0, 0.0, 2)
    >>> bool(np.allclose(d, [(np.e - 1) / (np.e + 1), 0.0]))
    True
    """
    a = np.asarray(alpha, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(
            "The 'alpha' parameter of pml_to_approx_ldp must hold finite LDP levels >= 0. "
            f"Got {alpha!r} instead."
        )
    eta = eta_tv(eps, c, measure)
    g = gamma_star(eps, c, measure)
    if not np.isfinite(g):
        return np.full(a.shape, eta)
    if g <= 1.0:
        return np.zeros(a.shape)
    return eta * np.clip((g - np.exp(a)) / (g - 1.0), 0.0, None)


def ldp_delta(alpha: ArrayLike, eps: float) -> FloatArray:
    r"""(alpha, delta) curve of an eps-LDP kernel (the c = 0 case of pml_to_approx_ldp).

    The c = 0 case of :func:`pml_to_approx_ldp` (Grosse et al., 2026, §VI-D1, second display).

    Parameters
    ----------
    alpha : array-like of float
        LDP levels, ``>= 0``.
    eps : float
        Pure LDP level, ``>= 0``.

    Returns
    -------
    ndarray
        :math:`\delta(\alpha)`.

    Examples
    --------
    >>> round(float(ldp_delta(0.0, np.log(3))), 12)
    0.5
    """
    eps = _check_eps(eps, "ldp_delta")
    a = np.asarray(alpha, dtype=float)
    return np.clip((np.exp(eps) - np.exp(a)) / (np.exp(eps) + 1.0), 0.0, None)


def kernel_ldp_epsilon(K: ArrayLike) -> float:
    r"""Pure LDP level of a discrete kernel: :math:`\max_{x,x',y}\log K(y|x)/K(y|x')`.

    Parameters
    ----------
    K : array-like of shape (n_inputs, n_outputs)
        Row-stochastic kernel.

    Returns
    -------
    float
        The LDP level; ``inf`` if some column has both zero and positive entries.

    Examples
    --------
    >>> bool(np.isclose(kernel_ldp_epsilon([[0.75, 0.25], [0.25, 0.75]]), np.log(3)))
    True
    """
    arr = check_stochastic_matrix(K, "kernel_ldp_epsilon")
    top = arr.max(axis=0)
    bottom = arr.min(axis=0)
    live = top > 0
    if np.any(bottom[live] == 0):
        return float("inf")
    # difference of logs: the ratio can overflow for a denormal entry
    return float(np.max(np.log(top[live]) - np.log(bottom[live])))


def kernel_ldp_delta(K: ArrayLike, alpha: float) -> float:
    r"""Smallest :math:`\delta` with the discrete kernel K :math:`(\alpha,\delta)`-LDP.

    Equal to the hockey-stick contraction :math:`\eta_{e^\alpha}(K)`. O(N^2 #Y).

    Parameters
    ----------
    K : array-like of shape (n_inputs, n_outputs)
        Row-stochastic kernel.
    alpha : float
        LDP level, ``>= 0``.

    Returns
    -------
    float
        :math:`\max_{x\ne x'}\sum_y (K(y|x) - e^\alpha K(y|x'))_+`.

    Examples
    --------
    >>> kernel_ldp_delta([[0.75, 0.25], [0.25, 0.75]], 0.0)
    0.5
    """
    alpha = check_in_interval(alpha, "alpha", "kernel_ldp_delta", 0.0, np.inf)
    return eta_gamma(K, float(np.exp(alpha)))
