r"""A printable record of every PML quantity of a mechanism (Grosse et al., 2026)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privinfer._typing import ArrayLike
from privinfer.pml.contraction import (
    _check_c,
    _check_eps,
    _check_measure,
    dobrushin,
    eps_star,
    eta_tv,
    high_privacy_threshold,
)
from privinfer.pml.conversions import gamma_star, pml_to_approx_ldp, pml_to_pure_ldp
from privinfer.pml.leakage import check_stochastic_matrix, pml_epsilon

__all__ = ["PMLGuarantee"]

_ALPHA_GRID = (0.0, 0.5, 1.0, 2.0)


@dataclass(frozen=True)
class PMLGuarantee:
    r"""Everything an eps-PML guarantee on the c-interior implies, in one object.

    Give the level, floor and reference measure (or a discrete kernel through
    :meth:`from_kernel`); every derived quantity is a property, and :meth:`summary`
    prints them: :math:`d_c`, :math:`\eta_{TV}`, the two regime thresholds, and the LDP
    conversions of Grosse et al. (2026) Lemma 2 and §VI-D1.

    Parameters
    ----------
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor in ``[0, 1/measure]``.
    measure : float
        Reference measure :math:`\mu(\mathcal X)`.
    mechanism : str, default="mechanism"
        A label for the summary.
    dobrushin_measured : float or None, default=None
        The kernel's own Dobrushin coefficient, when known.

    Raises
    ------
    ValueError
        For ``eps < 0``, ``measure <= 0`` or ``c`` outside ``[0, 1/measure]``.

    Examples
    --------
    >>> g = PMLGuarantee(eps=1.0, c=0.05, measure=10)
    >>> round(g.eta_tv, 4), g.regime
    (0.7284, 'intermediate')
    >>> print(g.summary().splitlines()[0])
    PML guarantee of mechanism
    """

    eps: float
    c: float
    measure: float
    mechanism: str = "mechanism"
    dobrushin_measured: float | None = None

    def __post_init__(self) -> None:
        measure = _check_measure(self.measure, "PMLGuarantee")
        _check_c(self.c, measure, "PMLGuarantee")
        _check_eps(self.eps, "PMLGuarantee", allow_inf=True)

    @classmethod
    def from_kernel(cls, K: ArrayLike, c: float, *, mechanism: str = "discrete kernel"
                    ) -> PMLGuarantee:
        """Guarantee of a discrete kernel (counting measure): ``eps = pml_epsilon(K, c)``."""
        arr = check_stochastic_matrix(K, "PMLGuarantee.from_kernel")
        return cls(eps=pml_epsilon(arr, c), c=float(c), measure=float(arr.shape[0]),
                   mechanism=mechanism, dobrushin_measured=dobrushin(arr))

    @property
    def d_c(self) -> float:
        r""":math:`d_c = 1 - c\mu(\mathcal X)`."""
        return 1.0 - self.c * self.measure

    @property
    def eta_tv(self) -> float:
        r""":math:`\eta_{TV}(\varepsilon)` (Grosse et al., 2026, Theorem 3)."""
        return eta_tv(self.eps, self.c, self.measure)

    @property
    def high_privacy_threshold(self) -> float:
        r""":math:`-\log(c\mu(\mathcal X))`."""
        return high_privacy_threshold(self.c, self.measure)

    @property
    def eps_star(self) -> float:
        r""":math:`\varepsilon^* = -\log(c\mu(\mathcal X)/2)`."""
        return eps_star(self.c, self.measure)

    @property
    def regime(self) -> str:
        """``"high privacy"`` (below -log(c mu)), ``"low privacy"`` (>= eps*) or in between."""
        if self.eps < self.high_privacy_threshold:
            return "high privacy"
        if self.eps >= self.eps_star:
            return "low privacy"
        return "intermediate"

    @property
    def gamma_star(self) -> float:
        r""":math:`\gamma^*` (``inf`` outside the high-privacy regime)."""
        if not np.isfinite(self.eps):
            return float("inf")
        return gamma_star(self.eps, self.c, self.measure)

    @property
    def ldp_epsilon(self) -> float:
        r"""Pure LDP level :math:`\log\gamma^*` implied (Grosse et al., 2026, Lemma 2)."""
        if not np.isfinite(self.eps):
            return float("inf")
        return pml_to_pure_ldp(self.eps, self.c, self.measure)

    def ldp_delta(self, alpha: ArrayLike) -> np.ndarray:
        r""":math:`\delta(\alpha)` of the implied :math:`(\alpha,\delta)`-LDP.

        Grosse et al. (2026), §VI-D1.
        """
        if not np.isfinite(self.eps):
            return np.ones(np.shape(alpha))
        return pml_to_approx_ldp(alpha, self.eps, self.c, self.measure)

    def summary(self) -> str:
        """A readable table of all quantities (returned, not printed)."""
        deltas = self.ldp_delta(np.array(_ALPHA_GRID))
        lines = [
            f"PML guarantee of {self.mechanism}",
            "=" * 60,
            f"eps (PML level):                       {self.eps:12.6g}",
            f"c (density floor):                     {self.c:12.6g}",
            f"mu(X) (reference measure):             {self.measure:12.6g}",
            f"d_c = 1 - c mu(X):                     {self.d_c:12.6g}",
            f"eta_TV(eps) (Dobrushin bound):         {self.eta_tv:12.6g}",
        ]
        if self.dobrushin_measured is not None:
            lines.append(f"Dobrushin coefficient (measured):      {self.dobrushin_measured:12.6g}")
        lines += [
            f"high-privacy threshold -log(c mu(X)):  {self.high_privacy_threshold:12.6g}",
            f"eps* = -log(c mu(X)/2):                {self.eps_star:12.6g}",
            f"regime:                                {self.regime:>12}",
            f"gamma*:                                {self.gamma_star:12.6g}",
            f"implied pure LDP level log(gamma*):    {self.ldp_epsilon:12.6g}",
            "-" * 60,
            "implied (alpha, delta)-LDP:  "
            + "  ".join(f"d({a:g}) = {d:.4g}" for a, d in zip(_ALPHA_GRID, deltas, strict=True)),
            "=" * 60,
            "eps-PML on the c-interior (Grosse et al., 2026); c = 0 is eps-LDP.",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()
