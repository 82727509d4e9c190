r"""Score elements of the treatment-effect estimators: small pure functions with their math.

Kormos and van der Vaart (2026), "Private rate-double-robust inference"
(arXiv:2606.20427), sec. 3-5: a one-step estimator averages the
:math:`Q_X^{-1}`-transformed score over held-out released rows,

.. math:: (Q_X^{-1}s)(v, z) = \frac{s(v, z) - (1-\alpha)(\bar Q s)(v)}{\alpha},

so each score below comes with its reference expectation :math:`\bar Q s`. Scores are
sums of public weights (:math:`y`, :math:`1\{d=k\}`, :math:`c_k(v)`) times functions of the
private covariates, so :math:`\bar Q s` needs only the reference expectations of the
nuisances, which the nuisance layer supplies per row:

* outcome regression :math:`\mu_k`: values, :math:`\bar Q\mu_k`, :math:`\bar Q\mu_k^2`;
* Riesz weight :math:`r` (automatic :math:`\theta'\varphi`, or a propensity weight):
  values, :math:`\bar Q r`, :math:`\bar Q[r\mu_k]`, :math:`\bar Q r^2`.

The functions here do not know how the nuisances were fitted (series, kernel, logistic):
that separation of score elements from nuisance estimation is DoubleML's. The estimand
algebra (ATE, POM, ATT, user functionals) turns the transformed scores into estimates and
influence values :math:`\varphi_i` with ``SE = sd(phi)/sqrt(n)``.

Sampling weights :math:`\omega` (public, mean one) multiply the transformed scores row by
row: :math:`Q_X^{-1}[\omega s] = \omega Q_X^{-1}[s]` for public :math:`\omega`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privinfer._typing import FloatArray, IntArray
from privinfer.inversion import invert

__all__ = [
    "OutcomeElements",
    "ReferenceTerms",
    "RieszElements",
    "ate_contrast",
    "att_estimate",
    "att_reference_terms",
    "att_score",
    "functional_estimate",
    "mean_estimate",
    "outcome_risk",
    "pom_reference_terms",
    "pom_score",
    "riesz_second_moment",
]


@dataclass(frozen=True)
class OutcomeElements:
    r"""Outcome regression on a chunk of held-out rows.

    Attributes
    ----------
    mu : ndarray of shape (rows, L)
        :math:`\hat\mu(k, x_i)` (at the released covariates).
    q_mu, q_sq : tuple of ndarray
        :math:`\bar Q\hat\mu_k` and :math:`\bar Q\hat\mu_k^2` per row (0-d when constant).
    """

    mu: FloatArray
    q_mu: tuple[FloatArray, ...]
    q_sq: tuple[FloatArray, ...]


@dataclass(frozen=True)
class RieszElements:
    r"""A Riesz weight :math:`r` on a chunk of held-out rows.

    Attributes
    ----------
    r : ndarray of shape (rows,)
        Values at the released covariates.
    q_r, q_r_mu, q_r2 : ndarray or float
        :math:`\bar Q r`, :math:`\bar Q[r\hat\mu_k]` (``k`` the arm it weights) and
        :math:`\bar Q r^2` per row; ``0.0`` when not needed (``alpha = 1``).
    """

    r: FloatArray
    q_r: FloatArray | float
    q_r_mu: FloatArray | float
    q_r2: FloatArray | float


def pom_score(
    c: FloatArray | float,
    k: int,
    mu: OutcomeElements,
    ind: FloatArray,
    rho: RieszElements,
    y: FloatArray,
    alpha: float,
) -> FloatArray:
    r"""Transformed score of a weighted potential-outcome mean :math:`E[c_k(V)\mu(k, X)]`.

    .. math:: s = c_k\hat\mu_k + 1\{d=k\}\,r\,(y - \hat\mu_k), \qquad
       \bar Q s = c_k\bar Q\hat\mu_k + 1\{d=k\}(y\,\bar Q r - \bar Q[r\hat\mu_k]),

    with :math:`c_k = 1` for :math:`E Y(k)` and ``ind`` :math:`= 1\{d=k\}`. Returns
    :math:`Q_X^{-1}s` per row.
    """
    s = c * mu.mu[:, k] + ind * rho.r * (y - mu.mu[:, k])
    qs = c * mu.q_mu[k] + ind * (y * rho.q_r - rho.q_r_mu)
    return invert(s, qs, alpha)


def att_score(
    d1: FloatArray, mu: OutcomeElements, odds: RieszElements, y: FloatArray, alpha: float
) -> FloatArray:
    r"""Transformed numerator score of the ATT (``d1`` the treated indicator).

    .. math:: s = d(y - \hat\mu_0) - (1-d)\,w\,(y - \hat\mu_0), \qquad
       \bar Q s = d(y - \bar Q\hat\mu_0) - (1-d)(y\,\bar Q w - \bar Q[w\hat\mu_0]),

    with :math:`w = \pi/(1-\pi)` the odds (Riesz weight of the control arm).
    """
    mu0 = mu.mu[:, 0]
    s = d1 * (y - mu0) - (1 - d1) * odds.r * (y - mu0)
    qs = d1 * (y - mu.q_mu[0]) - (1 - d1) * (y * odds.q_r - odds.q_r_mu)
    return invert(s, qs, alpha)


def riesz_second_moment(ind: FloatArray, rho: RieszElements, alpha: float) -> FloatArray:
    r""":math:`Q_X^{-1}[1\{d=k\}r^2]` per row: its mean estimates :math:`E\rho^2` (overlap)."""
    return invert(ind * rho.r**2, ind * rho.q_r2, alpha)


def outcome_risk(mu: OutcomeElements, d: IntArray, y: FloatArray, alpha: float) -> FloatArray:
    r""":math:`Q_X^{-1}[(y - \hat\mu(d, x))^2]` per row (private out-of-fold risk).

    :math:`\bar Q(y - \hat\mu_d)^2 = y^2 - 2y\bar Q\hat\mu_d + \bar Q\hat\mu_d^2`.
    """
    mu_d = mu.mu[np.arange(d.size), d]
    qr = np.zeros(d.size)
    for k in range(mu.mu.shape[1]):
        sel = d == k
        qr = qr + sel * (y**2 - 2 * y * mu.q_mu[k] + mu.q_sq[k])
    return invert((y - mu_d) ** 2, qr, alpha)


# -- estimand algebra ----------------------------------------------------------------
def ate_contrast(n_levels: int) -> FloatArray:
    """Contrast of potential-outcome means: each level minus the first (reference) level."""
    contrast = np.zeros((n_levels, n_levels - 1))
    contrast[0, :] = -1.0
    contrast[1:, :] = np.eye(n_levels - 1)
    return contrast


def mean_estimate(
    pom_phi: FloatArray, wt: FloatArray, contrast: FloatArray | None
) -> tuple[FloatArray, FloatArray]:
    r"""Potential-outcome means :math:`\hat m` or contrasts :math:`C'\hat m`, with influence values.

    :math:`\hat m_k = \frac1n\sum_i\omega_i Q_X^{-1}[s_k]_i`,
    :math:`\varphi_i = C'\omega_i(Q_X^{-1}[s]_i - \hat m)`; ``contrast=None`` returns the
    means themselves.
    """
    n = wt.size
    pom = wt @ pom_phi / n
    centred = wt[:, None] * (pom_phi - pom)
    if contrast is None:
        return pom, centred
    return pom @ contrast, centred @ contrast


def functional_estimate(
    pom_phi: FloatArray, c0: FloatArray, wt: FloatArray
) -> tuple[FloatArray, FloatArray]:
    r"""User functional :math:`\hat\chi` and its influence values.

    :math:`\hat\chi = \frac1n\sum_i\omega_i(c_0(v_i) + \sum_k Q_X^{-1}[s_k]_i)`, where
    :math:`s_k` already carries the weight :math:`c_k(v)`.
    """
    n = wt.size
    total = c0 + pom_phi.sum(axis=1)
    chi = float(wt @ total) / n
    return np.array([chi]), (wt * (total - chi))[:, None]


def att_estimate(att_phi: FloatArray, d: IntArray, wt: FloatArray) -> tuple[FloatArray, FloatArray]:
    r"""ATT and its influence values from the transformed numerator score :func:`att_score`.

    :math:`\hat\tau = \sum\omega Q_X^{-1}[s]/\sum\omega d`,
    :math:`\varphi = \omega(Q_X^{-1}[s] - d\hat\tau)/p_1`, :math:`p_1 = \frac1n\sum\omega d`.
    """
    n = wt.size
    d1 = (d == 1).astype(float)
    p1 = float(wt @ d1) / n
    tau = float(wt @ att_phi) / float(wt @ d1)
    return np.array([tau]), (wt * (att_phi - d1 * tau) / p1)[:, None]


# -- reference terms -----------------------------------------------------------------
@dataclass(frozen=True)
class ReferenceTerms:
    r"""Held-out sum of a score's reference part as a function of the reference moments.

    With automatic Riesz representers every :math:`\bar Q s` is linear in the reference
    moments :math:`(m, R) = (E_{\bar Q}p, E_{\bar Q}pp')`:
    :math:`\sum_i\bar Q s_i = \sum \pm\, a'(c\circ m) + \sum \pm\,\mathrm{sum}((ab')\circ R
    \circ S)`. Evaluating it on each Sobol scramble's moments gives the quasi-Monte Carlo
    error of the estimate.

    Attributes
    ----------
    lin : tuple of (coef, a, sign)
        Terms :math:`\pm\,a'(\text{coef}\circ m)`.
    quad : tuple of (a, b, S, sign)
        Terms :math:`\pm\,\mathrm{sum}((ab')\circ R\circ S)`.
    """

    lin: tuple[tuple[FloatArray, FloatArray, float], ...] = ()
    quad: tuple[tuple[FloatArray, FloatArray, Any, float], ...] = ()

    def __add__(self, other: ReferenceTerms) -> ReferenceTerms:
        return ReferenceTerms(self.lin + other.lin, self.quad + other.quad)

    def value(self, mean: FloatArray, outer: FloatArray) -> float:
        """The held-out sum at moments ``(mean, outer)``."""
        tot = sum(sgn * float(s @ (c * mean)) for c, s, sgn in self.lin)
        tot += sum(sgn * float(np.sum(np.outer(a, b) * outer * aa)) for a, b, aa, sgn in self.quad)
        return float(tot)


def pom_reference_terms(
    beta: FloatArray, theta: FloatArray, a_c: FloatArray, a_y: FloatArray, a_aa: Any
) -> ReferenceTerms:
    r"""Reference part of :func:`pom_score` summed over held-out rows of one fold.

    :math:`\sum_i\bar Q s_i = \beta'(\textstyle\sum c_k a\circ m) + \theta'(\sum_{d=k}
    y a\circ m) - \mathrm{sum}((\theta\beta')\circ R\circ\sum_{d=k}aa')`, where ``a_c``,
    ``a_y`` and ``a_aa`` are those held-out sums of the public factors ``a``.
    """
    return ReferenceTerms(((beta, a_c, 1.0), (theta, a_y, 1.0)), ((theta, beta, a_aa, -1.0),))


def att_reference_terms(
    beta0: FloatArray, theta_w: FloatArray, a_t: FloatArray, a_y0: FloatArray, a_aa0: Any
) -> ReferenceTerms:
    r"""Reference part of :func:`att_score` summed over held-out rows of one fold.

    :math:`-\beta_0'(\sum_{d=1}a\circ m) - \theta_w'(\sum_{d=0}y a\circ m) +
    \mathrm{sum}((\theta_w\beta_0')\circ R\circ\sum_{d=0}aa')`.
    """
    return ReferenceTerms(
        ((beta0, a_t, -1.0), (theta_w, a_y0, -1.0)), ((theta_w, beta0, a_aa0, 1.0),)
    )
