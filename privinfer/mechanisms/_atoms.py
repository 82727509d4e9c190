r"""Atoms of private data that a continuous reference lacks: kept rows become visible.

The alpha-identity replaces a value by a draw from the reference :math:`Q`. When
:math:`Q` is atomless (``Uniform``, a continuous ``Frozen`` law) its draws almost surely
carry every digit and never repeat, while real data have atoms: values recorded on a grid
(whole years of age, whole dollars, one decimal), stored in single precision (32-bit
floats, as in many statistical file formats), or one value shared by many rows (zero
earnings). A released value on such an atom is then, almost surely, a kept true value,
and one off it a replacement. The total-variation guarantee (:math:`\alpha`) still holds
(it allows a kept value to show), but those rows cannot deny that the released value is
their own, which is the deniability the mechanism is used for.

:func:`grid_step` finds the coarsest decimal grid :math:`10^{-k}`
(:math:`k = 0, \dots,` :data:`MAX_DECIMALS`) that holds every value of a column,
:func:`single_precision` whether every value is a 32-bit float, :func:`tied_share` the
share of rows whose value another row shares, and
:func:`warn_atom_leaks` names the columns with either (a tied share of at least
:data:`MIN_TIED_SHARE`) before a release. A reference with the same atoms
(``Categorical`` levels, a discrete ``Frozen`` law such as ``scipy.stats.randint``, an
``Empirical`` sample) avoids it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from privinfer.exceptions import AtomLeakWarning

__all__ = [
    "MAX_DECIMALS", "MIN_TIED_SHARE", "grid_step", "single_precision", "tied_share",
    "warn_atom_leaks",
]

#: Finest decimal grid looked for (values with more decimals count as continuous).
MAX_DECIMALS = 6
#: Share of rows on repeated values from which a column is named.
MIN_TIED_SHARE = 0.01


def grid_step(values: np.ndarray) -> float | None:
    r"""The coarsest step :math:`10^{-k}`, :math:`k \le` :data:`MAX_DECIMALS`, on which every
    finite value lies (up to floating-point rounding), or ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> grid_step(np.array([18.0, 25.0, 40.0])), grid_step(np.array([1.5, 2.25]))
    (1.0, 0.01)
    >>> grid_step(np.random.default_rng(0).uniform(0, 1, 50)) is None
    True
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < 2:
        return None
    for k in range(MAX_DECIMALS + 1):
        s = x * 10.0**k
        if np.all(np.abs(s - np.round(s)) <= 1e-9 * np.maximum(1.0, np.abs(s))):
            return 10.0**-k
    return None


def single_precision(values: np.ndarray) -> bool:
    """Whether every finite value is a single-precision (float32) number stored as a double.

    Data read from files that store 32-bit floats (Stata's ``float``, many CSV exports of
    them) are; double-precision draws of a continuous reference almost never are, so a
    released value that survives a round trip through float32 is a kept one. (A column of
    dtype ``float32`` is released as one, its draws rounded alike: no leak.)

    Examples
    --------
    >>> import numpy as np
    >>> single_precision(np.float32([9.93, 3.6]).astype(float)), single_precision(np.array([9.93]))
    (True, False)
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    return x.size >= 2 and bool(np.all(x.astype(np.float32).astype(float) == x))


def tied_share(values: np.ndarray) -> tuple[float, float]:
    """Share of rows whose value occurs in another row too, and the most frequent value.

    Examples
    --------
    >>> import numpy as np
    >>> tied_share(np.array([0.0, 0.0, 0.0, 1.25, 2.5]))
    (0.6, 0.0)
    """
    counts = pd.Series(np.asarray(values, dtype=float)).value_counts()
    if counts.empty:
        return 0.0, float("nan")
    return float(counts[counts > 1].sum() / counts.sum()), float(counts.index[0])


def warn_atom_leaks(parts: Any, data: pd.DataFrame, owner: str) -> list[str]:
    """Warn (:class:`~privinfer.exceptions.AtomLeakWarning`) about the private columns of
    atomless reference components whose values lie on a decimal grid or are shared by at
    least :data:`MIN_TIED_SHARE` of the rows, or are all single-precision floats; returns
    their descriptions.
    """
    found = []
    for cols, comp in parts:
        if not comp.is_atomless:
            continue
        for col in cols:
            series = data[col]
            if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
                continue
            x = series.to_numpy(dtype=float)
            step = grid_step(x)
            share, top = tied_share(x)
            if step is not None:
                found.append(f"{col!r} (multiples of {step:g})")
            elif series.dtype != np.float32 and single_precision(x):  # float32: so are draws
                found.append(f"{col!r} (single-precision floats)")
            elif share >= MIN_TIED_SHARE:
                found.append(f"{col!r} ({share:.0%} of rows on repeated values such as {top:g})")
    if found:
        warnings.warn(
            f"{owner}: private column(s) {', '.join(found)} have atoms that their continuous "
            "reference never draws: a released value on such an atom is, almost surely, a "
            "kept true value, so those rows' keep/replace status is visible (the "
            "total-variation guarantee alpha still holds, but they cannot deny that the "
            "value is their own). Use a reference with the same atoms (Categorical levels, "
            "a discrete Frozen law such as scipy.stats.randint, an Empirical sample); "
            "single-precision values: pass the column as dtype float32, which rounds the "
            "draws alike.",
            AtomLeakWarning,
            stacklevel=3,
        )
    return found
