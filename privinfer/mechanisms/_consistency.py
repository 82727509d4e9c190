r"""Do released private values fit the alpha-identity? The reference-share floor test.

Under the alpha-identity every released row carries a reference draw with probability
:math:`1 - \alpha`, independently of its values, so the released law of each private
column is the mixture :math:`\alpha P_X + (1 - \alpha)\bar Q` and every set :math:`A`
holds at least a share :math:`(1 - \alpha)\bar Q(A)` of the released rows, whatever
:math:`P_X` is. The count :math:`N_A` of released rows in :math:`A` is a sum of
independent Bernoulli variables with success probabilities at least
:math:`(1 - \alpha)\bar Q(A)`, hence stochastically larger than
:math:`\mathrm{Bin}(n, (1 - \alpha)\bar Q(A))`, and

.. math:: p_A = P\{\mathrm{Bin}(n, (1 - \alpha)\bar Q(A)) \le N_A\}

is a valid one-sided p-value for "these rows are a release of this mechanism". The test
takes :math:`A` over the cells of each private column's reference (``N_CELLS`` cells of
equal reference mass for a continuous reference, the support points of a finite one) and
rejects when the smallest :math:`p_A` is below ``LEVEL`` divided by the number of cells
(Bonferroni): a genuine release is refused with probability below ``LEVEL`` = 1e-6.

What it catches: rows selected on a private column (``data[data.x < 0.5]`` removes the
reference draws above 0.5 along with the kept values, and the inversion, which assumes the
full mixture, then gives a biased answer with a confident interval), raw data analysed as
if released when they leave part of the reference's range nearly empty, and a release
made with a larger alpha or another reference than declared. Rows selected on *public*
columns, or at random, keep the mixture and pass: the mechanism is independent of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from privinfer.exceptions import MechanismMismatchError
from privinfer.mechanisms.reference import Categorical, Component, Empirical

if TYPE_CHECKING:
    from privinfer.mechanisms.alpha_identity import AlphaIdentity

__all__ = [
    "LEVEL",
    "N_CELLS",
    "check_reference_counts",
    "check_reference_share",
    "reference_cells",
]

#: Probability that a genuine release is refused (before the Bonferroni split).
LEVEL = 1e-6
#: Cells of equal reference mass per continuous private column.
N_CELLS = 20


def _finite(comp: Component) -> bool:
    """A law with finitely many support points, each one a cell (Empirical is handled first)."""
    return isinstance(comp, Categorical) or (comp.is_discrete and np.isfinite(comp.n_support()))


def _layout(comp: Component) -> tuple[np.ndarray, list[str]] | None:
    """Reference masses and labels of the cells of one component; ``None`` when the
    test does not cover it (a discrete law with infinite support).
    """
    if isinstance(comp, Empirical):
        # a value repeated in the public sample is one cell: its mass sits on the first
        # copy (where support_index puts the released rows), the other copies get none
        pts, _ = comp.support_points()
        first = comp.support_index(pts)
        probs = np.bincount(first, minlength=len(pts)) / len(pts)
        return probs, [str(tuple(row)) for row in pts.itertuples(index=False)]
    if _finite(comp):
        pts, probs = comp.support_points()
        return np.asarray(probs, dtype=float), [repr(p) for p in np.asarray(pts).ravel()]
    if not comp.is_atomless:
        return None
    bounds = np.asarray(comp.from_unit(np.arange(N_CELLS + 1) / N_CELLS), dtype=float).ravel()
    labels = [f"[{bounds[i]:.4g}, {bounds[i + 1]:.4g}]" for i in range(N_CELLS)]
    return np.full(N_CELLS, 1.0 / N_CELLS), labels


def _counts(comp: Component, values: pd.DataFrame) -> np.ndarray:
    """Released rows per cell of :func:`_layout` (empty when the test does not cover it)."""
    if isinstance(comp, Empirical):
        idx = comp.support_index(values)
        return np.bincount(idx[idx >= 0], minlength=len(comp.support_points()[1])).astype(float)
    if _finite(comp):
        points = pd.Index(np.asarray(comp.support_points()[0]).ravel())
        idx = points.get_indexer(values.iloc[:, 0])
        return np.bincount(idx[idx >= 0], minlength=len(points)).astype(float)
    if not comp.is_atomless:
        return np.empty(0)
    edges = np.asarray(comp.from_unit(np.arange(1, N_CELLS) / N_CELLS), dtype=float).ravel()
    x = values.iloc[:, 0].to_numpy(dtype=float)
    cells = np.searchsorted(edges, x, side="right")
    return np.bincount(cells, minlength=N_CELLS).astype(float)


def reference_cells(mechanism: AlphaIdentity, data: pd.DataFrame) -> list[np.ndarray]:
    """Released counts in the reference cells of every tested private part, in order.

    Counts add over row blocks (the partitions of a Dask frame): the test of their sum
    (:func:`check_reference_counts`) equals that of the whole frame.
    """
    return [_counts(comp, data[list(cols)]) for cols, comp in mechanism.reference.parts]


def check_reference_counts(
    mechanism: AlphaIdentity, counts: list[np.ndarray], n: int, owner: str
) -> None:
    """Raise when a reference cell holds significantly fewer released rows than the floor.

    ``counts``: :func:`reference_cells` of the ``n`` rows (summed over blocks).
    """
    share = 1.0 - float(mechanism.alpha)
    if share <= 0.0 or n == 0:
        return
    found = []
    for (cols, comp), cnt in zip(mechanism.reference.parts, counts, strict=True):
        if cnt.size == 0:
            continue
        layout = _layout(comp)
        assert layout is not None
        probs, labels = layout
        floor = share * probs
        pvals = stats.binom.cdf(cnt, n, floor)
        found.extend(
            (float(p), cols, labels[j], cnt[j], n * floor[j], probs[j])
            for j, p in enumerate(pvals)
        )
    if not found:
        return
    p, cols, cell, count, expected, mass = min(found, key=lambda t: t[0])
    if p >= LEVEL / len(found):
        return
    name = cols[0] if len(cols) == 1 else list(cols)
    raise MechanismMismatchError(
        f"{owner}: the released values of private column {name!r} do not fit {mechanism!r}. "
        f"Under it at least a share 1 - alpha = {share:.3g} of the rows carry reference "
        f"draws, so at least about {expected:.0f} of these {n} rows should lie in {cell} "
        f"(where the reference puts {mass:.1%} of its mass); {count:.0f} do (one-sided "
        f"binomial p = {p:.2g}). This happens when rows were selected on a private column "
        f"(e.g. data[data[{name!r}] < c]: select on public columns only, the estimand then "
        "refers to that subpopulation), when the data are raw or were released with another "
        "alpha or reference, or when released values were edited. The inversion assumes the "
        "full mixture, so estimates from these rows would be biased."
    )


def check_reference_share(mechanism: AlphaIdentity, data: pd.DataFrame, owner: str) -> None:
    """Raise when some cell of a private column's reference holds too few released rows.

    Parameters
    ----------
    mechanism : AlphaIdentity
        The declared mechanism (nothing is tested at ``alpha = 1``).
    data : DataFrame
        The released rows (their private columns already checked for support).
    owner : str
        Name of the calling function, for messages.

    Raises
    ------
    MechanismMismatchError
        The smallest one-sided p-value is below ``LEVEL`` over the number of cells.

    Examples
    --------
    >>> import privinfer as pi
    >>> mech = pi.AlphaIdentity(0.6, {"x": pi.reference.Uniform(-1, 1)})
    >>> rng = np.random.default_rng(0)
    >>> raw = pd.DataFrame({"x": rng.uniform(-1, 1, 4000), "y": rng.normal(size=4000)})
    >>> rel = mech.privatize(raw, public=["y"], random_state=rng)
    >>> check_reference_share(mech, rel, "demo")          # a release passes
    >>> check_reference_share(mech, rel[rel.x < 0.5], "demo")  # selected on private x
    Traceback (most recent call last):
    ...
    privinfer.exceptions.MechanismMismatchError: demo: the released values of private ...
    """
    if mechanism.alpha >= 1.0 or len(data) == 0:
        return
    check_reference_counts(mechanism, reference_cells(mechanism, data), len(data), owner)
