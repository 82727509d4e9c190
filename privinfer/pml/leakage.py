r"""Pointwise maximal leakage (PML) of a discrete kernel on the c-interior (Grosse et al., 2026).

This module holds the one implementation of :func:`pml_epsilon`; the alpha-identity
mechanism's guarantees and the PML toolbox both call it.
"""

from __future__ import annotations

import numpy as np

from privinfer._typing import ArrayLike, FloatArray
from privinfer._validation import check_in_interval

__all__ = ["check_stochastic_matrix", "d_c", "pml_epsilon"]

_ROW_SUM_TOL = 1e-9


def d_c(c: float, measure: float) -> float:
    r"""Mass left after the floor: :math:`d_c = 1 - c\,\mu(\mathcal X)`.

    Parameters
    ----------
    c : float
        Density floor of the c-interior, in ``[0, 1/measure]``.
    measure : float
        Reference measure of the space, :math:`\mu(\mathcal X)` (``N`` for a finite
        space with counting measure, ``2b`` for ``[-b, b]``).

    Examples
    --------
    >>> d_c(0.1, 5)
    0.5
    """
    measure = check_in_interval(measure, "measure", "d_c", 0.0, np.inf, low_open=True)
    c = check_in_interval(c, "c", "d_c", 0.0, 1.0 / measure)
    return 1.0 - c * measure


def check_stochastic_matrix(K: ArrayLike, owner: str) -> FloatArray:
    """Validate a row-stochastic matrix (rows: inputs x, columns: outputs y).

    Parameters
    ----------
    K : array-like of shape (n_inputs, n_outputs)
        Non-negative entries, rows summing to one.
    owner : str
        Name of the caller, quoted in error messages.

    Returns
    -------
    ndarray of shape (n_inputs, n_outputs)

    Raises
    ------
    ValueError
        Not 2-D, a negative or non-finite entry, or a row not summing to one.

    Examples
    --------
    >>> check_stochastic_matrix([[0.75, 0.25], [0.5, 0.5]], "demo").shape
    (2, 2)
    """
    arr = np.asarray(K, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(
            f"{owner}: K must be a 2-D array (rows x, columns y); got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{owner}: K must have finite, non-negative entries.")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > _ROW_SUM_TOL)
    if bad.size:
        raise ValueError(
            f"{owner}: every row of K must sum to 1 (a stochastic matrix); rows {bad[:5].tolist()} "
            f"sum to {sums[bad[:5]].round(12).tolist()}."
        )
    return arr


def pml_epsilon(K: ArrayLike, c: float) -> float:
    r"""PML of a discrete kernel ``K`` over priors in the c-interior (counting measure).

    The worst case over priors :math:`P \ge c` of the pointwise maximal leakage
    :math:`\log \max_x K(y|x) / P_Y(y)`: the smallest output probability puts mass ``c``
    on every input and the rest, :math:`d_c = 1 - cN`, on the input minimising
    :math:`K(y|\cdot)`. Cost O(N * #Y).

    Parameters
    ----------
    K : array-like of shape (n_inputs, n_outputs)
        Row-stochastic kernel :math:`K(y|x)`.
    c : float
        Density floor in ``[0, 1/N]``; ``c = 0`` gives local differential privacy.

    Returns
    -------
    float
        :math:`\varepsilon_{PML}(K; c)`; ``inf`` where some output has zero probability
        under a feasible prior but positive probability under another input.

    Notes
    -----
    .. math:: \varepsilon(K; c) = \max_y \log \frac{\max_x K(y|x)}
              {c\sum_x K(y|x) + d_c \min_x K(y|x)}, \qquad d_c = 1 - cN.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[0.75, 0.25], [0.25, 0.75]])
    >>> bool(np.isclose(pml_epsilon(K, 0.0), np.log(3)))
    True
    """
    arr = check_stochastic_matrix(K, "pml_epsilon")
    n_inputs = arr.shape[0]
    c = check_in_interval(c, "c", "pml_epsilon", 0.0, 1.0 / n_inputs)
    dc = 1.0 - c * n_inputs
    top = arr.max(axis=0)
    bottom = c * arr.sum(axis=0) + dc * arr.min(axis=0)
    live = top > 0
    if np.any(bottom[live] <= 0):
        return float(np.inf)
    # difference of logs: the ratio itself can overflow for a denormal floor c
    # clipped at 0: the ratio is >= 1 exactly, rounding can leave -1e-16
    return max(0.0, float(np.max(np.log(top[live]) - np.log(bottom[live]))))
