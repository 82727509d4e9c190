r"""Privacy guarantees of the alpha-identity mechanism in several currencies.

* local total-variation privacy (Kormos and van der Vaart, 2026, Definition 1): exactly ``alpha``;
* :math:`(\varepsilon, \delta)`-LDP (Kormos and van der Vaart, 2026, Lemma 6):
  ``delta = alpha`` for every ``eps >= 0`` with an atomless reference; pure eps-LDP with
  :math:`e^\varepsilon = 1 + \alpha / ((1-\alpha)\min_z \bar q(z))` for a discrete
  reference of full support;
* pointwise maximal leakage on the c-interior (Grosse et al., 2026) for discrete private spaces,
  through the one general function :func:`privinfer.pml.pml_epsilon`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from privinfer._typing import FloatArray
from privinfer._validation import check_alpha, check_in_interval
from privinfer.pml.leakage import pml_epsilon

__all__ = ["PrivacyGuarantees", "alpha_identity_guarantees", "alpha_identity_kernel"]

#: Largest discrete space for which the N x N kernel is materialised.
_MAX_KERNEL = 2048


def alpha_identity_kernel(alpha: float, qbar: FloatArray) -> FloatArray:
    r"""Stochastic matrix :math:`K(z|x) = \alpha 1\{z=x\} + (1-\alpha)\bar q(z)`.

    Parameters
    ----------
    alpha : float
        Keep probability.
    qbar : ndarray of shape (N,)
        Reference pmf over the N points of the private space.

    Examples
    --------
    >>> alpha_identity_kernel(0.5, np.array([0.5, 0.5])).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    q = np.asarray(qbar, dtype=float)
    return alpha * np.eye(q.size) + (1.0 - alpha) * q[None, :]


@dataclass(frozen=True)
class PrivacyGuarantees:
    r"""What the alpha-identity mechanism guarantees, in each currency.

    Attributes
    ----------
    alpha : float
        Keep probability of the mechanism.
    tv : float
        Local total-variation privacy level, :math:`\sup_B |Q(B|x) - Q(B|x')|`.
    ldp_eps, ldp_delta : float
        An :math:`(\varepsilon, \delta)`-LDP guarantee: ``(0, alpha)`` (in fact
        ``delta = alpha`` for every eps) for atomless references, ``(eps, 0)`` for
        discrete ones.
    discrete : bool
        Whether the private space is finite (then PML is reported).
    n_points : float
        Number of points of the private space (``inf`` if continuous).
    c : float or None
        Density floor of the c-interior for the PML figure.
    pml_eps : float or None
        :math:`\varepsilon_{PML}` on the c-interior (discrete spaces only).
    atomless : bool
        Whether the reference has no atoms (then ``delta = alpha`` is tight at every eps
        and kept values are the only atoms of the output). A reference with atoms but
        no smallest one (a Poisson reference, say) has no finite pure eps; the
        ``(0, alpha)`` guarantee still holds.

    Examples
    --------
    Four equally likely private values, kept with probability one half:

    >>> import privinfer as pi
    >>> ref = {"g": pi.reference.Categorical(["a", "b", "c", "d"])}
    >>> g = pi.AlphaIdentity(0.5, ref).guarantees(c=0.1)
    >>> g.tv, g.ldp_delta, g.discrete
    (0.5, 0.0, True)
    >>> round(g.ldp_eps, 4), round(g.pml_eps, 4)  # log(1 + 0.5 / (0.5 * 0.25)) = log 5
    (1.6094, 1.273)
    >>> g.to_frame()["currency"].tolist()
    ['total variation', 'LDP', 'LDP', 'PML (c-interior)']

    An atomless reference gives no pure LDP guarantee, only ``delta = alpha``:

    >>> g = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)}).guarantees()
    >>> g.ldp_delta, g.pml_eps is None
    (0.5, True)
    """

    alpha: float
    tv: float
    ldp_eps: float
    ldp_delta: float
    discrete: bool
    n_points: float
    c: float | None
    pml_eps: float | None
    atomless: bool = False

    def to_frame(self) -> pd.DataFrame:
        """One row per guarantee: currency, parameters and value."""
        rows = [
            ("total variation", "TV", self.tv, "sup_B |Q(B|x) - Q(B|x')|"),
            ("LDP", "eps", self.ldp_eps, "pure" if self.ldp_delta == 0 else "any eps >= 0"),
            ("LDP", "delta", self.ldp_delta, ""),
        ]
        if self.pml_eps is not None:
            rows.append(("PML (c-interior)", "eps", self.pml_eps, f"c = {self.c:g}"))
        return pd.DataFrame(rows, columns=["currency", "parameter", "value", "note"])

    def __str__(self) -> str:
        lines = [
            f"Privacy guarantees of the alpha-identity mechanism (alpha = {self.alpha:g})",
            f"  local total-variation privacy : {self.tv:.4g}",
        ]
        if self.ldp_delta == 0:
            lines.append(f"  pure LDP                      : eps = {self.ldp_eps:.4g}")
        else:
            kind = (
                "atomless reference"
                if self.atomless
                else "reference with atoms but no smallest atom: no finite pure eps"
            )
            lines.append(
                f"  (eps, delta)-LDP              : delta = {self.ldp_delta:.4g} for every eps >= 0"
                f" ({kind})"
            )
        if self.pml_eps is not None:
            lines.append(
                f"  PML on the c-interior         : eps = {self.pml_eps:.4g} (c = {self.c:g}, "
                f"N = {self.n_points:g})"
            )
        return "\n".join(lines)


def alpha_identity_guarantees(
    alpha: float, qbar: FloatArray | None, c: float | None = None, *, atomless: bool = True
) -> PrivacyGuarantees:
    r"""Guarantees of the alpha-identity mechanism.

    Parameters
    ----------
    alpha : float
        Keep probability in (0, 1].
    qbar : ndarray of shape (N,) or None
        Reference pmf over a finite private space, or ``None`` for an atomless
        reference.
    c : float, optional
        Density floor for the PML guarantee, in ``[0, 1/N]``; ``None`` reports PML at
        ``c = 0`` (where it equals the LDP epsilon) for discrete spaces. Refused with
        ``qbar=None``, which has no PML figure.
    atomless : bool, default=True
        With ``qbar=None``: whether the reference is atomless (``False`` for a reference
        with infinitely many atoms, e.g. Poisson). Only the wording differs: ``(0,
        alpha)``-LDP holds either way, and no finite pure eps exists.

    Notes
    -----
    For a discrete reference with pmf :math:`\bar q`, the likelihood ratio of outputs is
    largest at the least likely point, so

    .. math:: e^\varepsilon = 1 + \frac{\alpha}{(1-\alpha)\min_z \bar q(z)}

    (Kormos and van der Vaart, 2026, Lemma 6). PML uses the kernel
    :math:`\alpha I + (1-\alpha) 1\bar q'`.

    Examples
    --------
    >>> g = alpha_identity_guarantees(0.5, np.full(4, 0.25), c=0.1)
    >>> bool(round(g.ldp_eps, 6) == round(np.log(5.0), 6))
    True
    """
    alpha = check_alpha(alpha, "alpha_identity_guarantees")
    if qbar is None:
        if c is not None:
            raise ValueError(
                "PML on the c-interior is reported for finite private spaces only; this "
                "reference is not finite (qbar=None). Call guarantees() without c."
            )
        return PrivacyGuarantees(
            alpha, alpha, 0.0, alpha, False, math.inf, None, None, atomless=bool(atomless)
        )
    return _finite_guarantees(alpha, [_check_pmf(qbar)], c)


def product_guarantees(
    alpha: float, factor_pmfs: Sequence[FloatArray], c: float | None = None
) -> PrivacyGuarantees:
    r"""Guarantees for a finite reference that is a product of independent factors.

    The joint pmf is the outer product of the factors' pmfs, but only its size
    :math:`N = \prod_j N_j` and least likely point
    :math:`\min_z \bar q(z) = \prod_j \min \bar q_j` enter the guarantees, so the joint
    support is never enumerated (a 300,000-row public sample, or two categorical columns
    of 500 levels each, cost no more than their factors).

    Parameters
    ----------
    alpha : float
        Keep probability in (0, 1].
    factor_pmfs : sequence of ndarray
        Pmf over the distinct support points of each factor.
    c : float, optional
        Density floor for the PML guarantee, in ``[0, 1/N]``.

    Examples
    --------
    >>> g = product_guarantees(0.5, [np.full(2, 0.5), np.full(3, 1 / 3)])
    >>> g.n_points, round(g.ldp_eps, 4)  # log(1 + 0.5 / (0.5 / 6)) = log 7
    (6.0, 1.9459)
    """
    alpha = check_alpha(alpha, "alpha_identity_guarantees")
    return _finite_guarantees(alpha, [_check_pmf(q) for q in factor_pmfs], c)


def _finite_guarantees(
    alpha: float, factor_pmfs: Sequence[FloatArray], c: float | None
) -> PrivacyGuarantees:
    """Guarantees for validated factor pmfs; the joint kernel only for small spaces."""
    n_points = math.prod(float(q.size) for q in factor_pmfs)
    log_q_min = math.fsum(_log(float(q.min())) for q in factor_pmfs)
    ldp = _closed_form_eps(alpha, log_q_min, 0.0)
    c_val = 0.0 if c is None else check_in_interval(c, "c", "guarantees", 0.0, 1.0 / n_points)
    if c_val == 0.0:
        pml = ldp  # PML at c = 0 is the LDP eps (DESIGN §3)
    elif n_points <= _MAX_KERNEL:
        joint = functools.reduce(lambda a, b: np.outer(a, b).ravel(), factor_pmfs)
        pml = pml_epsilon(alpha_identity_kernel(alpha, joint), c_val)
    else:
        # closed form of pml_epsilon for this kernel (checked against it in the tests)
        pml = _closed_form_eps(alpha, log_q_min, c_val)
    return PrivacyGuarantees(alpha, alpha, ldp, 0.0, True, n_points, c_val, pml)


def _log(x: float) -> float:
    """``log(x)`` with ``log(0) = -inf`` (no warning, no error)."""
    return math.log(x) if x > 0 else -math.inf


def _closed_form_eps(alpha: float, log_q_min: float, c: float) -> float:
    r"""PML on the c-interior of the alpha-identity kernel, from its least likely point.

    For :math:`K = \alpha I + (1-\alpha) 1\bar q'` on :math:`N \ge 2` points, the
    numerator and denominator of :func:`~privinfer.pml.pml_epsilon` at an output
    :math:`z` differ by exactly :math:`\alpha(1 - c)`, and the denominator is
    :math:`c\alpha + (1-\alpha)\bar q(z)`, so

    .. math:: \varepsilon(c) = \log\Bigl(1 + \frac{\alpha(1-c)}
              {c\alpha + (1-\alpha)\min_z \bar q(z)}\Bigr);

    ``c = 0`` gives the LDP epsilon. It is evaluated as
    :math:`\operatorname{logaddexp}(0, \log\alpha(1-c) - \log(\text{denominator}))`:
    a difference of logs would cancel to 0 for a tiny alpha, and the ratio itself
    overflows for a tiny :math:`\bar q_{\min}` (given by its log, ``-inf`` for 0).

    Examples
    --------
    >>> round(_closed_form_eps(0.5, math.log(0.25), 0.0), 4)  # log 5
    1.6094

    A tiny alpha keeps its epsilon, about :math:`\alpha / ((1-\alpha)\bar q_{\min})`:

    >>> bool(abs(_closed_form_eps(1e-17, math.log(0.5), 0.0) / 2e-17 - 1) < 1e-12)
    True
    """
    log_keep = _log(alpha * (1.0 - c))
    log_replace = math.log1p(-alpha) + log_q_min if alpha < 1.0 else -math.inf
    log_bottom = float(np.logaddexp(_log(c * alpha), log_replace))
    if log_bottom == -math.inf:
        return math.inf
    return float(np.logaddexp(0.0, log_keep - log_bottom))


def _check_pmf(qbar: object) -> FloatArray:
    """A reference pmf: 1-D, finite, non-negative, summing to one."""
    try:
        q = np.asarray(qbar, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "The 'qbar' parameter of alpha_identity_guarantees must be a 1-D array of "
            f"probabilities. Got {qbar!r} instead."
        ) from exc
    if q.ndim != 1 or q.size < 1 or not np.all(np.isfinite(q)) or np.any(q < 0):
        raise ValueError(
            "The 'qbar' parameter of alpha_identity_guarantees must be a non-empty 1-D array "
            f"of finite non-negative probabilities. Got {qbar!r} instead."
        )
    if abs(float(q.sum()) - 1.0) > 1e-9:
        raise ValueError(
            "The 'qbar' parameter of alpha_identity_guarantees must sum to one. "
            f"It sums to {float(q.sum())!r}."
        )
    return q
