r"""Contraction under eps-PML on the c-interior: Dobrushin and SDPI bounds (Grosse et al., 2026).

The tight total-variation contraction :func:`eta_tv` (Grosse et al., 2026, Theorem 3), its regime
thresholds, the measured Dobrushin and hockey-stick coefficients of a discrete kernel,
and the strong data processing inequalities (SDPIs) of Grosse et al. (2026) §V for general
f-divergences, relative entropy (KL) and squared Hellinger distance.

Conventions: :math:`\mathrm{TV}(P\|Q) = \tfrac12\sum|p-q|`,
:math:`D(P\|Q) = \sum p\log(p/q)` (natural log) and
:math:`H^2(P\|Q) = \sum(\sqrt p - \sqrt q)^2` (no factor 1/2; :math:`f(t) = (1-\sqrt t)^2`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, TypeAlias

import numpy as np

from privinfer._typing import ArrayLike, FloatArray
from privinfer._validation import check_in_interval
from privinfer.pml.leakage import check_stochastic_matrix

__all__ = [
    "dobrushin",
    "eps_star",
    "eta_gamma",
    "eta_gamma_bound",
    "eta_tv",
    "f_divergence",
    "hellinger_squared",
    "high_privacy_threshold",
    "kl_divergence",
    "likelihood_ratio_bound",
    "sdpi_f_bound",
    "sdpi_hellinger_bound",
    "sdpi_kl_bound",
    "sdpi_kl_tv2_bound",
    "tv_distance",
    "xi_constants",
]

RatioBound: TypeAlias = Literal["seed", "refined"]

_BLOCK = 256  # kernel rows per block in the pairwise (x, x') sweeps


def _check_eps(eps: object, owner: str, *, allow_inf: bool = False) -> float:
    """Validate a PML level ``eps >= 0`` (``inf`` only where ``allow_inf``)."""
    if allow_inf and isinstance(eps, float | np.floating) and np.isposinf(eps):
        return float("inf")
    return check_in_interval(eps, "eps", owner, 0.0, np.inf)


def _check_c(c: object, measure: float, owner: str) -> float:
    return check_in_interval(c, "c", owner, 0.0, 1.0 / measure)


def _check_measure(measure: object, owner: str) -> float:
    return check_in_interval(measure, "measure", owner, 0.0, np.inf, low_open=True)


def _check_tv(tv: object, owner: str) -> float:
    return check_in_interval(tv, "tv", owner, 0.0, 1.0)


def high_privacy_threshold(c: float, measure: float) -> float:
    r"""High-privacy threshold :math:`-\log(c\,\mu(\mathcal X))` of Grosse et al. (2026) Lemma 2.

    Below it, every kernel that is eps-PML on the c-interior also satisfies pure
    :math:`\log\gamma^*`-LDP (see :func:`privinfer.pml.pml_to_pure_ldp`).

    Parameters
    ----------
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)` (``N`` counting, ``2b`` for ``[-b, b]``).

    Returns
    -------
    float
        The threshold; ``inf`` for ``c = 0`` (LDP: every eps is high privacy).

    See Also
    --------
    eps_star : The low-privacy threshold, ``log 2`` above this one.

    Examples
    --------
    >>> round(high_privacy_threshold(0.05, 10), 6)
    0.693147
    """
    measure = _check_measure(measure, "high_privacy_threshold")
    c = _check_c(c, measure, "high_privacy_threshold")
    if c == 0.0:
        return float("inf")
    return float(-np.log(c) - np.log(measure))  # c * measure may underflow


def eps_star(c: float, measure: float) -> float:
    r"""Low-privacy threshold :math:`\varepsilon^* = -\log(c\,\mu(\mathcal X)/2)`.

    At and above it :math:`\eta_{TV}(\varepsilon) = 1`: eps-PML on the c-interior costs
    nothing in total variation ("privacy for free", Grosse et al. (2026) §III-B, §VI).

    Parameters
    ----------
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.

    Returns
    -------
    float
        :math:`\varepsilon^*`; ``inf`` for ``c = 0``.

    Examples
    --------
    >>> round(eps_star(0.05, 10), 6)  # log 4
    1.386294
    """
    measure = _check_measure(measure, "eps_star")
    c = _check_c(c, measure, "eps_star")
    if c == 0.0:
        return float("inf")
    # logs of the factors: c * measure can underflow to 0 for a denormal c
    return float(np.log(2.0) - np.log(c) - np.log(measure))


def eta_tv(eps: float, c: float, measure: float) -> float:
    r"""Tight total-variation contraction of eps-PML mechanisms on the c-interior.

    Every kernel K that is eps-PML on :math:`\mathcal P_c` has Dobrushin coefficient at
    most :math:`\eta_{TV}(\varepsilon)`, and the binary kernel :math:`K^*` of
    :func:`optimal_binary_mechanism` attains it. O(1).

    Parameters
    ----------
    eps : float
        PML level, ``>= 0`` (``inf`` allowed: returns 1).
    c : float
        Density floor in ``[0, 1/measure]``; ``c = 0`` is LDP.
    measure : float
        Reference measure :math:`\mu(\mathcal X)` (``N`` counting, ``2b`` for ``[-b, b]``).

    Returns
    -------
    float
        :math:`\eta_{TV}(\varepsilon)\in[0, 1]`.

    Raises
    ------
    ValueError
        If ``eps < 0``, ``measure <= 0`` or ``c`` is outside ``[0, 1/measure]``.

    See Also
    --------
    dobrushin : The measured coefficient of a discrete kernel.
    eps_star : Where this function reaches 1.

    Notes
    -----
    .. math:: \eta_{TV}(\varepsilon) = \min\Big\{1, \frac{e^\varepsilon - 1}
              {1 + e^\varepsilon d_c}\Big\}, \quad d_c = 1 - c\,\mu(\mathcal X)

    (Grosse et al., 2026, Theorem 3). Above :math:`\varepsilon^* = -\log(c\mu(\mathcal X)/2)` it
    equals 1; at ``c = 0`` it is the LDP value :math:`(e^\varepsilon-1)/(e^\varepsilon+1)`.
    Evaluated as :math:`(1 - e^{-\varepsilon})/(e^{-\varepsilon} + d_c)` to avoid overflow.

    Examples
    --------
    >>> round(eta_tv(1.0, 0.0, 4), 6) == round((np.e - 1) / (np.e + 1), 6)
    True
    >>> eta_tv(2.0, 0.05, 10)  # eps above eps* = log 4
    1.0
    """
    measure = _check_measure(measure, "eta_tv")
    c = _check_c(c, measure, "eta_tv")
    eps = _check_eps(eps, "eta_tv", allow_inf=True)
    dc = 1.0 - c * measure
    if np.isinf(eps):
        return 1.0
    denom = np.exp(-eps) + dc
    if denom <= 0.0:  # d_c = 0 and e^-eps underflows: the bound is saturated
        return 1.0
    value = -np.expm1(-eps) / denom
    return float(min(1.0, value))


def dobrushin(K: ArrayLike) -> float:
    r"""Dobrushin coefficient of a discrete kernel: the largest TV between two rows.

    Measures how much the kernel contracts total variation in the worst case; compare
    it with :func:`eta_tv` at :math:`\varepsilon = ` ``pml_epsilon(K, c)``. Cost
    O(N^2 #Y) time, O(256 N #Y) memory.

    Parameters
    ----------
    K : array-like of shape (n_inputs, n_outputs)
        Row-stochastic kernel :math:`K(y|x)`.

    Returns
    -------
    float
        :math:`\eta_{TV}(K)\in[0,1]`.

    Raises
    ------
    ValueError
        If ``K`` is not a stochastic matrix.

    Notes
    -----
    .. math:: \eta_{TV}(K) = \max_{x\ne x'} \tfrac12 \sum_y |K(y|x) - K(y|x')|

    (Grosse et al., 2026, eq. (14)).

    Examples
    --------
    >>> dobrushin([[0.75, 0.25], [0.25, 0.75]])
    0.5
    """
    arr = check_stochastic_matrix(K, "dobrushin")
    best = 0.0
    for start in range(0, arr.shape[0], _BLOCK):
        block = arr[start : start + _BLOCK]
        tv = 0.5 * np.abs(block[:, None, :] - arr[None, :, :]).sum(axis=2)
        best = max(best, float(tv.max()))
    return best


def eta_gamma(K: ArrayLike, gamma: float) -> float:
    r"""Hockey-stick (:math:`E_\gamma`) contraction coefficient of a discrete kernel.

    For :math:`\gamma = e^\alpha` it is the smallest :math:`\delta` for which K is
    :math:`(\alpha,\delta)`-LDP (Asoodeh et al., cited in Grosse et al. (2026) §II-C1). O(N^2 #Y).

    Parameters
    ----------
    K : array-like of shape (n_inputs, n_outputs)
        Row-stochastic kernel.
    gamma : float
        Hockey-stick parameter, ``>= 1``.

    Returns
    -------
    float
        :math:`\eta_\gamma(K) = \max_{x\ne x'}\sum_y (K(y|x) - \gamma K(y|x'))_+`.

    See Also
    --------
    eta_gamma_bound : The bound of Grosse et al. (2026) Theorem 4 in terms of eps and c.

    Examples
    --------
    >>> eta_gamma([[0.75, 0.25], [0.25, 0.75]], 1.0)
    0.5
    """
    arr = check_stochastic_matrix(K, "eta_gamma")
    gamma = check_in_interval(gamma, "gamma", "eta_gamma", 1.0, np.inf)
    best = 0.0
    for start in range(0, arr.shape[0], _BLOCK):
        block = arr[start : start + _BLOCK]
        diff = np.clip(block[:, None, :] - gamma * arr[None, :, :], 0.0, None).sum(axis=2)
        best = max(best, float(diff.max()))
    return best


def eta_gamma_bound(gamma: float, eps: float, c: float, measure: float) -> float:
    r"""Bound on the :math:`E_\gamma` contraction of eps-PML kernels (Grosse et al., 2026, Thm 4).

    In the high-privacy regime :math:`\varepsilon < -\log(c\mu(\mathcal X))` an eps-PML
    kernel on :math:`\mathcal P_c` is :math:`\log\gamma^*`-LDP (Lemma 2) and has Dobrushin
    coefficient at most :math:`\eta_{TV}(\varepsilon)`; the two constraints give the
    linear-interpolation bound below. Outside that regime only :math:`\eta_{TV}` is
    known. O(1).

    Parameters
    ----------
    gamma : float
        Hockey-stick parameter, ``>= 1``.
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.

    Returns
    -------
    float
        The bound on :math:`\eta_\gamma(K)`.

    Notes
    -----
    .. math:: \eta_\gamma(K) \le \eta_{TV}(\varepsilon)
              \Big(\frac{\gamma^* - \gamma}{\gamma^* - 1}\Big)_+, \qquad
              \gamma^* = \frac{e^\varepsilon d_c}{1 - e^\varepsilon c\,\mu(\mathcal X)}

    (Grosse et al., 2026, §IV-A; the displayed bound is our
    reconstruction: maximise :math:`u - \gamma v` over :math:`u \le \gamma^* v`,
    :math:`u - v \le \eta_{TV}`). At ``c = 0`` it is :math:`((e^\varepsilon -
    \gamma)/(e^\varepsilon + 1))_+` (Zamanlooy and Asoodeh). Outside the high-privacy
    regime the bound is :math:`\eta_{TV}(\varepsilon)`.

    Examples
    --------
    >>> round(eta_gamma_bound(1.0, 1.0, 0.0, 2), 6) == round(eta_tv(1.0, 0.0, 2), 6)
    True
    """
    measure = _check_measure(measure, "eta_gamma_bound")
    c = _check_c(c, measure, "eta_gamma_bound")
    eps = _check_eps(eps, "eta_gamma_bound")
    gamma = check_in_interval(gamma, "gamma", "eta_gamma_bound", 1.0, np.inf)
    eta = eta_tv(eps, c, measure)
    if eps >= high_privacy_threshold(c, measure):
        return eta
    dc = 1.0 - c * measure
    g_star = np.exp(eps) * dc / (1.0 - np.exp(eps) * c * measure)
    if g_star <= 1.0:  # eps = 0: the kernel is constant
        return 0.0
    return float(eta * max(0.0, (g_star - gamma) / (g_star - 1.0)))


# --------------------------------------------------------------------------- divergences


def _check_pair(p: ArrayLike, q: ArrayLike, owner: str) -> tuple[FloatArray, FloatArray]:
    pa = np.asarray(p, dtype=float)
    qa = np.asarray(q, dtype=float)
    if pa.ndim != 1 or pa.shape != qa.shape or pa.size < 1:
        raise ValueError(f"{owner}: p and q must be 1-D pmfs of equal length; got {pa.shape}, "
                         f"{qa.shape}.")
    for name, v in (("p", pa), ("q", qa)):
        if not np.all(np.isfinite(v)) or np.any(v < 0) or abs(v.sum() - 1.0) > 1e-9:
            raise ValueError(f"{owner}: {name} must be a pmf (non-negative, summing to 1).")
    return pa, qa


def tv_distance(p: ArrayLike, q: ArrayLike) -> float:
    r"""Total variation distance :math:`\tfrac12\sum_y|p(y)-q(y)|` of two pmfs.

    Parameters
    ----------
    p, q : array-like of shape (n,)
        Probability mass functions.

    Returns
    -------
    float
        TV in ``[0, 1]``.

    Examples
    --------
    >>> tv_distance([0.5, 0.5], [0.75, 0.25])
    0.25
    """
    pa, qa = _check_pair(p, q, "tv_distance")
    return float(0.5 * np.abs(pa - qa).sum())


def f_divergence(p: ArrayLike, q: ArrayLike, f: Callable[[FloatArray], FloatArray]) -> float:
    r"""f-divergence :math:`D_f(P\|Q) = \sum_y q(y) f(p(y)/q(y))` of two pmfs.

    Parameters
    ----------
    p, q : array-like of shape (n,)
        Probability mass functions; ``q > 0`` wherever ``p > 0``.
    f : callable
        Convex, vectorised, with ``f(1) = 0``; evaluated only where ``q > 0``.

    Returns
    -------
    float
        :math:`D_f(P\|Q)` (``inf`` if ``p`` is not absolutely continuous w.r.t. ``q``).

    Examples
    --------
    >>> round(f_divergence([0.5, 0.5], [0.25, 0.75], lambda t: np.abs(t - 1) / 2), 6)
    0.25
    """
    pa, qa = _check_pair(p, q, "f_divergence")
    if np.any((qa == 0) & (pa > 0)):
        return float("inf")
    live = qa > 0
    return float(np.sum(qa[live] * np.asarray(f(pa[live] / qa[live]), dtype=float)))


def kl_divergence(p: ArrayLike, q: ArrayLike) -> float:
    r"""Relative entropy :math:`D(P\|Q) = \sum_y p\log(p/q)` (nats).

    Parameters
    ----------
    p, q : array-like of shape (n,)
        Probability mass functions.

    Returns
    -------
    float
        KL divergence, ``inf`` when ``p`` is not absolutely continuous w.r.t. ``q``.

    Examples
    --------
    >>> round(kl_divergence([0.5, 0.5], [0.5, 0.5]), 6)
    0.0
    """
    pa, qa = _check_pair(p, q, "kl_divergence")
    if np.any((qa == 0) & (pa > 0)):
        return float("inf")
    live = pa > 0
    return float(np.sum(pa[live] * np.log(pa[live] / qa[live])))


def hellinger_squared(p: ArrayLike, q: ArrayLike) -> float:
    r"""Squared Hellinger distance :math:`H^2(P\|Q) = \sum_y(\sqrt p - \sqrt q)^2`.

    This is the f-divergence of :math:`f(t) = (1-\sqrt t)^2` (range ``[0, 2]``), the
    convention of Grosse et al. (2026) §V.

    Parameters
    ----------
    p, q : array-like of shape (n,)
        Probability mass functions.

    Returns
    -------
    float
        :math:`H^2(P\|Q)`.

    Examples
    --------
    >>> hellinger_squared([1.0, 0.0], [0.0, 1.0])
    2.0
    """
    pa, qa = _check_pair(p, q, "hellinger_squared")
    return float(np.sum((np.sqrt(pa) - np.sqrt(qa)) ** 2))


# --------------------------------------------------------------------------- SDPIs


def likelihood_ratio_bound(
    eps: float, c: float, measure: float, *, ratio_bound: RatioBound = "seed"
) -> float:
    r"""Largest output likelihood ratio :math:`\Gamma_{\max}` for inputs in the c-interior.

    For :math:`P, Q\in\mathcal P_c` and K eps-PML on :math:`\mathcal P_c`, every output
    set B has :math:`(PK)(B)/(QK)(B) \le \Gamma_{\max}` and, by symmetry,
    :math:`\ge 1/\Gamma_{\max}` (Grosse et al., 2026, Lemma 4). O(1).

    Parameters
    ----------
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.
    ratio_bound : {"seed", "refined"}, default="seed"
        ``"seed"``: :math:`1 + e^\varepsilon d_c` (Grosse et al., 2026, Lemma 4 / Corollary 1).
        ``"refined"``: :math:`\min\{e^\varepsilon, 1 + e^\varepsilon d_c\}`; the extra
        :math:`e^\varepsilon` holds because :math:`(PK)(B) \le \max_x K(B|x) \le
        e^\varepsilon (QK)(B)` is the PML constraint itself, and is smaller in the
        high-privacy regime.

    Returns
    -------
    float
        :math:`\Gamma_{\max}\ge 1`.

    Notes
    -----
    Proof of :math:`1 + e^\varepsilon d_c`: write :math:`p = c + (p - c)`, so
    :math:`(PK)(B) \le a + d_c \max_x K(B|x)` and :math:`(QK)(B)\ge a + d_c\min_x K(B|x)`
    with :math:`a = c(\mu K)(B)`; the PML constraint :math:`\max_x K \le e^\varepsilon
    (a + d_c\min_x K)` then gives the ratio :math:`\le 1 + e^\varepsilon d_c`.

    Examples
    --------
    >>> likelihood_ratio_bound(0.0, 0.0, 2)
    2.0
    >>> likelihood_ratio_bound(0.0, 0.0, 2, ratio_bound="refined")
    1.0
    """
    measure = _check_measure(measure, "likelihood_ratio_bound")
    c = _check_c(c, measure, "likelihood_ratio_bound")
    eps = _check_eps(eps, "likelihood_ratio_bound")
    if ratio_bound not in ("seed", "refined"):
        raise ValueError(
            "The 'ratio_bound' parameter of likelihood_ratio_bound must be 'seed' or "
            f"'refined'. Got {ratio_bound!r} instead."
        )
    g = 1.0 + np.exp(eps) * (1.0 - c * measure)
    if ratio_bound == "refined":
        g = min(g, float(np.exp(eps)))
    return float(g)


def sdpi_f_bound(
    tv: float,
    eps: float,
    c: float,
    measure: float,
    *,
    f: Callable[[FloatArray], FloatArray],
    ratio_bound: RatioBound = "seed",
) -> float:
    r"""Linear-in-TV SDPI for any f-divergence under eps-PML on the c-interior.

    Bounds :math:`D_f(PK\|QK)` for every K that is eps-PML on :math:`\mathcal P_c` and
    every :math:`P, Q\in\mathcal P_c` with :math:`\mathrm{TV}(P\|Q) =` ``tv``. Use it to
    certify how little an f-divergence can survive a PML mechanism. O(1).

    Parameters
    ----------
    tv : float
        :math:`\mathrm{TV}(P\|Q)` of the inputs, in ``[0, 1]``.
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.
    f : callable
        Convex, vectorised, ``f(1) = 0``.
    ratio_bound : {"seed", "refined"}, default="seed"
        Which :math:`\Gamma = \Gamma_{\max}` to use (:func:`likelihood_ratio_bound`);
        ``"seed"`` reproduces Grosse et al. (2026) Theorem 5 exactly.

    Returns
    -------
    float
        The upper bound on :math:`D_f(PK\|QK)`.

    See Also
    --------
    sdpi_kl_bound : The KL case in closed form.
    sdpi_hellinger_bound : The squared-Hellinger case in closed form.

    Notes
    -----
    Grosse et al. (2026), Theorem 5, with :math:`\Gamma = e^\varepsilon d_c + 1`:

    .. math:: D_f(PK\|QK) \le \frac{\eta_{TV}(\varepsilon)}{\Gamma - 1}
              \Big[f(\Gamma) + \Gamma f(1/\Gamma)\Big]\,\mathrm{TV}(P\|Q).

    It combines Binette's reverse Pinsker inequality :math:`D_f(P\|Q) \le (f(m)/(1-m) +
    f(M)/(M-1))\,\mathrm{TV}(P\|Q)` (m, M the extreme likelihood ratios, with
    :math:`M \le \Gamma`, :math:`m \ge 1/\Gamma`; the bracket is monotone in both) and
    :math:`\mathrm{TV}(PK\|QK)\le\eta_{TV}(\varepsilon)\mathrm{TV}(P\|Q)`. When
    :math:`\Gamma = 1` (``eps = 0`` or :math:`d_c = 0`) the outputs coincide and the
    bound is 0.

    Examples
    --------
    >>> kl = lambda t: t * np.log(t)
    >>> a = sdpi_f_bound(0.3, 1.0, 0.05, 10, f=kl)
    >>> round(a, 10) == round(sdpi_kl_bound(0.3, 1.0, 0.05, 10), 10)
    True
    """
    owner = "sdpi_f_bound"
    tv = _check_tv(tv, owner)
    eta = eta_tv(eps, c, measure)
    g = likelihood_ratio_bound(eps, c, measure, ratio_bound=ratio_bound)
    if g <= 1.0 + 1e-15 or tv == 0.0:
        return 0.0
    bracket = float(np.asarray(f(np.array([g]))).ravel()[0]) + g * float(
        np.asarray(f(np.array([1.0 / g]))).ravel()[0]
    )
    return float(eta * bracket / (g - 1.0) * tv)


def sdpi_kl_bound(
    tv: float, eps: float, c: float, measure: float, *, ratio_bound: RatioBound = "seed"
) -> float:
    r"""Linear-in-TV SDPI for relative entropy under eps-PML on the c-interior.

    The KL case of :func:`sdpi_f_bound` (Grosse et al., 2026, Corollary to Theorem 5), valid for
    every eps-PML kernel and :math:`P, Q\in\mathcal P_c`. O(1).

    Parameters
    ----------
    tv : float
        :math:`\mathrm{TV}(P\|Q)` in ``[0, 1]``.
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.
    ratio_bound : {"seed", "refined"}, default="seed"
        See :func:`likelihood_ratio_bound`.

    Returns
    -------
    float
        Upper bound on :math:`D(PK\|QK)` in nats.

    Notes
    -----
    .. math:: D(PK\|QK) \le \eta_{TV}(\varepsilon)\,\log(e^\varepsilon d_c + 1)\,
              \mathrm{TV}(P\|Q)

    (:math:`f(t) = t\log t` in Theorem 5: :math:`f(\Gamma) + \Gamma f(1/\Gamma) =
    (\Gamma - 1)\log\Gamma`).

    Examples
    --------
    >>> round(sdpi_kl_bound(1.0, 0.0, 0.0, 2), 6)
    0.0
    """
    tv = _check_tv(tv, "sdpi_kl_bound")
    eta = eta_tv(eps, c, measure)
    g = likelihood_ratio_bound(eps, c, measure, ratio_bound=ratio_bound)
    return float(eta * np.log(g) * tv)


def sdpi_hellinger_bound(
    tv: float, eps: float, c: float, measure: float, *, ratio_bound: RatioBound = "seed"
) -> float:
    r"""Linear-in-TV SDPI for squared Hellinger distance under eps-PML on the c-interior.

    The :math:`f(t) = (1-\sqrt t)^2` case of :func:`sdpi_f_bound` (Grosse et al., 2026, §V-A),
    valid for every eps-PML kernel and :math:`P, Q\in\mathcal P_c`. O(1).

    Parameters
    ----------
    tv : float
        :math:`\mathrm{TV}(P\|Q)` in ``[0, 1]``.
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.
    ratio_bound : {"seed", "refined"}, default="seed"
        See :func:`likelihood_ratio_bound`.

    Returns
    -------
    float
        Upper bound on :math:`H^2(PK\|QK) = \sum(\sqrt{p}-\sqrt{q})^2`.

    Notes
    -----
    .. math:: H^2(PK\|QK) \le \eta_{TV}(\varepsilon)\,
              \frac{2(\sqrt{e^\varepsilon d_c + 1} - 1)^2}{e^\varepsilon d_c}\,
              \mathrm{TV}(P\|Q)

    Examples
    --------
    >>> b = sdpi_hellinger_bound(0.5, 1.0, 0.05, 10)
    >>> 0.0 < b < 1.0
    True
    """
    tv = _check_tv(tv, "sdpi_hellinger_bound")
    eta = eta_tv(eps, c, measure)
    g = likelihood_ratio_bound(eps, c, measure, ratio_bound=ratio_bound)
    if g <= 1.0 + 1e-15:
        return 0.0
    return float(eta * 2.0 * (np.sqrt(g) - 1.0) ** 2 / (g - 1.0) * tv)


def xi_constants(eps: float, c: float, measure: float) -> tuple[float, float]:
    r"""Constants :math:`(\Xi, \tilde\Xi)` of the squared-TV KL bound (Grosse et al., 2026, §V-B).

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
    (float, float)
        :math:`\Xi = (e^\alpha - 1)^2 / (e^\alpha d_c^2)` and
        :math:`\tilde\Xi = (e^\alpha - 1)^2/(e^\alpha d_c)` with
        :math:`e^\alpha = \min\{e^\varepsilon, 1 + e^\varepsilon d_c\}`; ``(0, 0)``
        when :math:`d_c = 0`.

    See Also
    --------
    sdpi_kl_tv2_bound : Where these constants are used, with the proof.

    Examples
    --------
    >>> xi, _ = xi_constants(1.0, 0.0, 2)
    >>> round(xi, 6) == round((np.e - 1) ** 2 / np.e, 6)
    True
    """
    measure = _check_measure(measure, "xi_constants")
    c = _check_c(c, measure, "xi_constants")
    eps = _check_eps(eps, "xi_constants")
    dc = 1.0 - c * measure
    if dc <= 0.0:
        return 0.0, 0.0
    # log of e_alpha = min(e^eps, 1 + e^eps d_c), without overflowing e^eps
    log_e = min(eps, eps + math.log(math.exp(-eps) + dc))
    if log_e > 700.0:  # (e_alpha - 1)^2 / e_alpha ~ e_alpha overflows: the bound is vacuous
        return float("inf"), float("inf")
    e_alpha = math.exp(log_e)
    core = e_alpha - 2.0 + 1.0 / e_alpha  # = (e_alpha - 1)^2 / e_alpha, without squaring
    return float(core / dc**2), float(core / dc)


def sdpi_kl_tv2_bound(tv: float, eps: float, c: float, measure: float) -> float:
    r"""Squared-TV SDPI for relative entropy under eps-PML on the c-interior.

    Grosse et al. (2026, §V-B).

    The bound behind the minimax lower bounds of Grosse et al. (2026) §VI: it is quadratic in TV,
    so it tensorises into sample-complexity bounds. Valid for every eps-PML kernel and
    :math:`P, Q\in\mathcal P_c`. O(1).

    Parameters
    ----------
    tv : float
        :math:`\mathrm{TV}(P\|Q)` in ``[0, 1]``.
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.

    Returns
    -------
    float
        Upper bound on :math:`D(PK\|QK)` (and on :math:`\chi^2(PK\|QK)`).

    See Also
    --------
    xi_constants : The constants used here.

    Notes
    -----
    .. math:: D(PK\|QK) \le \chi^2(PK\|QK) \le \min\{4\,\Xi\,\mathrm{TV}^2(P\|Q),\,
              \tilde\Xi\,\mathrm{TV}(P\|Q)\}.

    The seed's definition of :math:`\Xi(\varepsilon, c)` was lost in extraction; we
    implement and prove this version. With :math:`M(\cdot|x) = c(\mu K)(\cdot) +
    d_c K(\cdot|x)` and :math:`\bar P = (P - c\mu)/d_c\in\mathcal P(\mathcal X)` we have
    :math:`PK = \bar P M` and :math:`\mathrm{TV}(\bar P\|\bar Q) = \mathrm{TV}(P\|Q)/d_c`
    (Grosse et al., 2026, §III-A). M is :math:`\alpha`-LDP with
    :math:`e^\alpha = \min\{e^\varepsilon,
    1 + e^\varepsilon d_c\}`: :math:`M(B|x)\le\max_x K(B|x)\le e^\varepsilon\min_{x'}
    M(B|x')` by the PML constraint, and the second term as in
    :func:`likelihood_ratio_bound`. The LDP chi-square bound :math:`\chi^2(\bar PM\|\bar QM)
    \le (e^\alpha-1)^2 e^{-\alpha}\min\{4\mathrm{TV}^2, \mathrm{TV}\}` (Grosse et al., 2026, §V-B)
    then gives the display. At ``c = 0`` it is the LDP bound.

    Examples
    --------
    >>> round(sdpi_kl_tv2_bound(0.1, 1.0, 0.0, 2), 6) == round(4 * (np.e - 1) ** 2 / np.e * 0.01, 6)
    True
    """
    tv = _check_tv(tv, "sdpi_kl_tv2_bound")
    xi, xi_tilde = xi_constants(eps, c, measure)
    return float(min(4.0 * xi * tv**2, xi_tilde * tv))

