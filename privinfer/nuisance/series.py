r"""Private series regression and the automatic Riesz representer.

Kormos and van der Vaart (2026), sec. 6.

Both solve a linear system in the deconvolved Gram matrix
:math:`G = \frac1n\sum_i Q_X^{-1}[b b'](V_i, Z_i)`: the outcome regression
:math:`\beta = G^{-1} c` with :math:`c = \frac1n\sum_i Q_X^{-1}[b\,y]`, and the automatic
Riesz representer :math:`\theta = G^{-1} M` with :math:`M = \frac1n\sum_i Q_X^{-1}[f(v,x,b)]`.
In finite samples ``G`` can be indefinite; :func:`repair_gram` floors its eigenvalues.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from privinfer._typing import FloatArray
from privinfer.exceptions import IndefiniteGramWarning, SingularDesignError

__all__ = ["GramRepair", "gram_noise_level", "repair_gram", "solve_gram"]

#: Eigenvalue floor relative to the mean of the positive eigenvalues (documented default).
EIGEN_FLOOR = 1e-3


@dataclass(frozen=True)
class GramRepair:
    """What :func:`repair_gram` did to one Gram matrix.

    Attributes
    ----------
    label : str
        Which nuisance and fold the matrix belongs to.
    min_eigenvalue : float
        Smallest eigenvalue before the repair.
    floor : float
        Eigenvalue floor applied.
    n_floored : int
        Number of eigenvalues raised to the floor.
    ill_conditioned : bool
        Whether an eigenvalue was below the *relative* floor (``floor_rel`` times the mean
        positive eigenvalue): collinear or empty directions rather than noise alone.

    Examples
    --------
    >>> G = np.array([[1.0, 0.0], [0.0, -0.2]])  # indefinite, as deconvolution can give
    >>> _, info = repair_gram(G, "outcome, fold 1")
    >>> info.label, info.min_eigenvalue, info.n_floored
    ('outcome, fold 1', -0.2, 1)
    >>> round(info.floor, 6)  # 1e-3 times the mean positive eigenvalue
    0.001
    """

    label: str
    min_eigenvalue: float
    floor: float
    n_floored: int
    ill_conditioned: bool = False


def repair_gram(
    G: FloatArray, label: str, floor_rel: float = EIGEN_FLOOR, noise_floor: float = 0.0
) -> tuple[FloatArray, GramRepair | None]:
    r"""Floor the eigenvalues of a symmetric deconvolved Gram matrix.

    Eigenvalues below :math:`\max(\text{floor\_rel}\cdot\overline{\lambda_+},
    \text{noise\_floor})` (:math:`\overline{\lambda_+}` the mean positive eigenvalue) are
    raised to that floor. ``noise_floor`` is the estimated operator norm of the Gram
    matrix's sampling error (see :func:`gram_noise_level`): directions whose eigenvalue
    is below the noise are not trusted, which bounds the inverse by ``1/noise_floor``.
    Well-conditioned matrices above the floor are returned unchanged.

    Returns
    -------
    G_repaired : ndarray
    repair : GramRepair or None
        ``None`` when nothing was changed.

    Raises
    ------
    SingularDesignError
        If no eigenvalue is positive (nothing to anchor a floor to).

    Examples
    --------
    >>> G = np.array([[1.0, 0.0], [0.0, -0.2]])
    >>> G_fixed, info = repair_gram(G, "demo")
    >>> np.linalg.eigvalsh(G_fixed).round(6).tolist(), info.n_floored
    ([0.001, 1.0], 1)
    >>> repair_gram(np.eye(2), "fine")[1] is None  # nothing below the floor: unchanged
    True
    """
    G = 0.5 * (G + G.T)
    lam, vec = np.linalg.eigh(G)
    pos = lam[lam > 0]
    if pos.size == 0:
        raise SingularDesignError(
            f"{label}: the deconvolved Gram matrix has no positive eigenvalue; the design is "
            "degenerate (constant or empty treatment arm?)."
        )
    rel_floor = floor_rel * float(pos.mean())
    floor = max(rel_floor, float(noise_floor))
    low = lam < floor
    if not np.any(low):
        return G, None
    info = GramRepair(label, float(lam.min()), floor, int(low.sum()), bool(lam.min() < rel_floor))
    lam = np.where(low, floor, lam)
    return (vec * lam) @ vec.T, info


def solve_gram(G: FloatArray, rhs: FloatArray, label: str, repairs: list[GramRepair]) -> FloatArray:
    """Solve ``G x = rhs`` after :func:`repair_gram`, warning and recording any repair.

    Parameters
    ----------
    G : ndarray of shape (J, J)
        Symmetric (deconvolved) Gram matrix.
    rhs : ndarray of shape (J,) or (J, k)
        Right-hand side(s).
    label : str
        Names the matrix in the warning and in the :class:`GramRepair` record.
    repairs : list
        A repair, if any, is appended to it.

    Returns
    -------
    ndarray
        The solution with the repaired matrix.

    Warns
    -----
    IndefiniteGramWarning
        When eigenvalues were floored.

    Examples
    --------
    >>> solve_gram(np.diag([2.0, 4.0]), np.array([1.0, 1.0]), "fine", []).tolist()
    [0.5, 0.25]
    >>> import warnings
    >>> repairs = []
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     x = solve_gram(np.diag([1.0, -0.2]), np.array([1.0, 1.0]), "demo", repairs)
    >>> x.round(6).tolist(), len(repairs), caught[0].category.__name__
    ([1.0, 1000.0], 1, 'IndefiniteGramWarning')
    """
    G_fixed, info = repair_gram(G, label)
    if info is not None:
        repairs.append(info)
        warnings.warn(
            f"{label}: deconvolved Gram matrix had {info.n_floored} eigenvalue(s) below the floor "
            f"{info.floor:.3g} (smallest {info.min_eigenvalue:.3g}); eigenvalues were floored. "
            "Recorded in results.diagnostics.",
            IndefiniteGramWarning,
            stacklevel=4,
        )
    return np.linalg.solve(G_fixed, rhs)


def gram_noise_level(sum_sq_norm: float, gram: FloatArray, n_obs: float) -> float:
    r"""Operator-norm size of the sampling error of a private Gram matrix.

    With per-row terms :math:`q_i = Q_X^{-1}[w\varphi\varphi'](V_i, Z_i)` and
    :math:`G = \bar q`, the total variance of the entries of ``G`` is
    :math:`S/n` with :math:`S = \frac1n\sum_i\|q_i\|_F^2 - \|G\|_F^2`. Spread over
    :math:`J^2` entries, the error matrix has operator norm about
    :math:`2\sqrt{S/(nJ)}` (the edge of the semicircle law), which is returned.

    Parameters
    ----------
    sum_sq_norm : float
        :math:`\sum_i \|q_i\|_F^2`.
    gram : ndarray of shape (J, J)
        The private Gram matrix :math:`G`.
    n_obs : float
        Number of rows ``n`` behind the means.
    """
    J = gram.shape[0]
    S = max(sum_sq_norm / n_obs - float(np.sum(gram**2)), 0.0)
    return 2.0 * float(np.sqrt(S / (n_obs * J)))
