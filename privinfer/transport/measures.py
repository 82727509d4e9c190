"""Released dyadic partition trees and the synthetic measures built on them.

A :class:`SyntheticMeasure` is what a private synthesizer publishes: atoms (leaf
representatives), their weights, the leaf cells and the released tree. It holds no raw
record. Everything here is post-processing of a private release, so it may be shared.

The tree lives on an integer grid: a coordinate of the partitioned domain is an integer in
``[0, 2**_BITS)``, and a cell of depth ``k`` that has been split ``n_j(k)`` times along
coordinate ``j`` has side ``2**(_BITS - n_j(k))`` there. Data in the unit cube occupy the
*window* ``[window_lo, window_hi)`` of that grid (the whole grid without a random shift,
a shifted half-size box with one, He, 2026, §6).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from privinfer._typing import BoolArray, FloatArray, IntArray, RandomStateLike
from privinfer._validation import check_int, check_random_state
from privinfer.exceptions import DataMismatchError, OutOfSupportError, ProblemSizeError
from privinfer.transport._pot import import_ot
from privinfer.transport._release import SummaryText, shape_text

__all__ = ["DyadicTree", "SyntheticMeasure", "TreeLevel"]

#: Bits of the integer grid per coordinate; a cell is split at most this often along one
#: coordinate, so the depth of a tree in dimension d is at most ``_BITS * d``.
_BITS = 52

#: Largest cost matrix (data points times atoms) that ``wasserstein(method="exact")``
#: builds: 2.5e7 float64 entries are 200 MB.
_EXACT_MAX_ENTRIES = 25_000_000

WassersteinMethod = Literal["auto", "exact", "tree"]


@dataclass(frozen=True, eq=False, repr=False)
class TreeLevel:
    """The cells of one depth of a released tree (its *frontier*) and their fate.

    Attributes
    ----------
    index : ndarray of shape (n_cells, d)
        Integer position of each cell along every coordinate at this depth.
    split : ndarray of shape (n_cells,)
        Whether the cell was split; the others are leaves, numbered in this order.
    parent : ndarray of shape (n_cells,)
        Position of the parent in the previous level (``-1`` at the root).
    leaf_offset : int
        Number of the first leaf of this level among all leaves.
    n_discarded : int
        Children of this level's splits that missed the window and were dropped without
        noise (always 0 without a random shift).

    Examples
    --------
    >>> from privinfer.transport import privtree_synthesize
    >>> x = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> nu, _ = privtree_synthesize(x, 1.0, [(0, 1), (0, 1)], random_shift=False,
    ...                             random_state=0)
    >>> root, first = nu.tree.levels[:2]
    >>> root.index.tolist(), root.split.tolist(), root.parent.tolist()
    ([[0, 0]], [True], [-1])
    >>> first.index.tolist(), first.parent.tolist()  # depth 1 halves coordinate 0
    ([[0, 0], [1, 0]], [0, 0])
    >>> sum(int((~lev.split).sum()) for lev in nu.tree.levels) == nu.tree.n_leaves
    True
    >>> all(lev.n_discarded == 0 for lev in nu.tree.levels)  # no shift, nothing dropped
    True
    """

    index: IntArray
    split: BoolArray
    parent: IntArray
    leaf_offset: int
    n_discarded: int

    def __repr__(self) -> str:
        n = int(self.split.shape[0])
        n_split = int(self.split.sum())
        return (f"TreeLevel(n_cells={n}, n_split={n_split}, n_leaves={n - n_split}, "
                f"leaf_offset={self.leaf_offset}, n_discarded={self.n_discarded})")


@dataclass(frozen=True, eq=False, repr=False)
class DyadicTree:
    """A released cyclic binary partition tree: depth-k cells split coordinate k mod d.

    It is a public (differentially private) object: its levels record which cells were
    split, so the same descent can be replayed on any data set with :meth:`locate`.

    Attributes
    ----------
    levels : tuple of TreeLevel
        One entry per depth, root first.
    window_lo, window_hi : ndarray of shape (d,)
        Integer window ``[window_lo, window_hi)`` that holds the unit cube.

    Examples
    --------
    >>> from privinfer.transport import privtree_synthesize
    >>> x = np.random.default_rng(0).uniform(size=(2000, 2))
    >>> nu, _ = privtree_synthesize(x, 1.0, [(0, 1), (0, 1)], random_state=0)
    >>> tree = nu.tree
    >>> tree.dim, tree.n_leaves == nu.n_atoms, tree.n_nodes > tree.n_leaves
    (2, True, True)
    >>> lower, upper = tree.leaf_boxes()  # the leaves tile the unit square
    >>> lower.shape == (tree.n_leaves, 2), round(float(np.prod(upper - lower, axis=1).sum()), 9)
    (True, 1.0)
    >>> leaf = tree.locate(tree.to_grid(np.array([[0.1, 0.1], [0.9, 0.9]])))
    >>> bool(np.all((lower[leaf] <= [[0.1, 0.1], [0.9, 0.9]])
    ...             & ([[0.1, 0.1], [0.9, 0.9]] <= upper[leaf])))
    True
    """

    levels: tuple[TreeLevel, ...]
    window_lo: IntArray
    window_hi: IntArray

    def __repr__(self) -> str:
        return (f"DyadicTree(dim={self.dim}, depth={len(self.levels) - 1}, "
                f"n_nodes={self.n_nodes}, n_leaves={self.n_leaves}, "
                f"n_discarded={self.n_discarded})")

    @property
    def dim(self) -> int:
        """Dimension d of the partitioned space."""
        return int(self.window_lo.shape[0])

    @property
    def n_leaves(self) -> int:
        """Number of leaves m (the atoms of the synthetic measure)."""
        return int(sum(int((~lev.split).sum()) for lev in self.levels))

    @property
    def n_nodes(self) -> int:
        """Number of cells that received a split decision (leaves and internal nodes)."""
        return int(sum(lev.split.shape[0] for lev in self.levels))

    @property
    def n_discarded(self) -> int:
        """Number of cells dropped, without noise, because they miss the window."""
        return int(sum(lev.n_discarded for lev in self.levels))

    @property
    def leaf_depth(self) -> IntArray:
        """Depth of every leaf, in leaf order."""
        return np.concatenate(
            [
                np.full(int((~lev.split).sum()), k, dtype=np.int64)
                for k, lev in enumerate(self.levels)
            ]
        )

    def level_boxes(self, k: int) -> tuple[FloatArray, FloatArray]:
        """Lower and upper corners, in unit-cube coordinates, of (cell ∩ window) at depth k."""
        d = self.dim
        lev = self.levels[k]
        n_splits = k // d + (np.arange(d) < k % d)
        width = np.left_shift(np.int64(1), (_BITS - n_splits).astype(np.int64))
        lower = lev.index * width
        upper = lower + width
        lower = np.maximum(lower, self.window_lo)
        upper = np.minimum(upper, self.window_hi)
        span = (self.window_hi - self.window_lo).astype(np.float64)
        return (lower - self.window_lo) / span, (upper - self.window_lo) / span

    def leaf_boxes(self) -> tuple[FloatArray, FloatArray]:
        """Corners of (leaf cell ∩ window) in unit-cube coordinates, in leaf order."""
        lows, highs = [], []
        for k, lev in enumerate(self.levels):
            lo, hi = self.level_boxes(k)
            lows.append(lo[~lev.split])
            highs.append(hi[~lev.split])
        return np.concatenate(lows), np.concatenate(highs)

    def to_grid(self, unit: FloatArray) -> IntArray:
        """Integer grid positions of points of the unit cube ``[0, 1]^d``."""
        span = self.window_hi - self.window_lo
        grid = self.window_lo + np.floor(unit * span).astype(np.int64)
        return np.minimum(grid, self.window_hi - 1)

    def locate(self, grid: IntArray) -> IntArray:
        """Leaf of each point (rows of integer grid positions), by replaying the descent."""
        _, _, point_leaf = grow_tree(
            grid,
            self.window_lo,
            self.window_hi,
            max_depth=len(self.levels) - 1,
            decide=lambda k, counts: self.levels[k].split,
        )
        return point_leaf

    def cancel(
        self, values: FloatArray, scale: FloatArray | None = None
    ) -> tuple[float, FloatArray]:
        r"""Optimal cancellation of a signed leaf measure in the tree's ultrametric.

        Bottom-up, each cell cancels as much positive against negative mass of its
        subtree as it can; top-down, the surviving positive mass is shared among the
        children in proportion to their surviving mass.

        Parameters
        ----------
        values : ndarray of shape (n_leaves,)
            Signed mass on the leaves.
        scale : ndarray of shape (d,), optional
            Side lengths that map the unit cube to the units of the returned cost.

        Returns
        -------
        cost : float
            :math:`\sum_Q \operatorname{diam}(Q\cap\Omega_U)\,c_Q`, with :math:`c_Q` the
            mass cancelled in cell Q. When ``values`` sums to zero this is the
            Kantorovich–Rubinstein norm of ``values`` for the ultrametric
            :math:`d_T(Q, R) = \operatorname{diam}(Q \wedge R)`, which dominates the
            Euclidean distance between any points of the two leaves.
        kept : ndarray of shape (n_leaves,)
            The nonnegative leaf measure that remains: the closest one to ``values`` in
            :math:`d_T` among nonnegative measures of total ``max(sum(values), 0)``.
        """
        scale = np.ones(self.dim) if scale is None else np.asarray(scale, dtype=np.float64)
        n_levels = len(self.levels)
        p_pre: list[FloatArray] = [np.empty(0)] * n_levels
        p_post: list[FloatArray] = [np.empty(0)] * n_levels
        cost = 0.0
        pos_next = neg_next = np.empty(0)
        for k in range(n_levels - 1, -1, -1):
            lev = self.levels[k]
            n_cells = lev.split.shape[0]
            leaf_pos = np.flatnonzero(~lev.split)
            v = values[lev.leaf_offset : lev.leaf_offset + leaf_pos.shape[0]]
            pos = np.zeros(n_cells)
            neg = np.zeros(n_cells)
            pos[leaf_pos] = np.maximum(v, 0.0)
            neg[leaf_pos] = np.maximum(-v, 0.0)
            if k + 1 < n_levels:
                child_parent = self.levels[k + 1].parent
                pos += np.bincount(child_parent, weights=pos_next, minlength=n_cells)
                neg += np.bincount(child_parent, weights=neg_next, minlength=n_cells)
            p_pre[k] = pos.copy()
            cancelled = np.minimum(pos, neg)
            if np.any(cancelled > 0):
                lo, hi = self.level_boxes(k)
                diam = np.sqrt((((hi - lo) * scale) ** 2).sum(axis=1))
                cost += float(cancelled @ diam)
            pos -= cancelled
            neg -= cancelled
            p_post[k] = pos
            pos_next, neg_next = pos, neg
        kept = np.zeros(values.shape[0])
        survive = p_post[0]
        for k, lev in enumerate(self.levels):
            leaf_pos = np.flatnonzero(~lev.split)
            kept[lev.leaf_offset : lev.leaf_offset + leaf_pos.shape[0]] = survive[leaf_pos]
            if k + 1 < n_levels:
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio = np.where(p_pre[k] > 0, survive / p_pre[k], 0.0)
                survive = p_post[k + 1] * ratio[self.levels[k + 1].parent]
        return cost, kept


def grow_tree(
    grid: IntArray,
    window_lo: IntArray,
    window_hi: IntArray,
    *,
    max_depth: int,
    decide: Callable[[int, IntArray], BoolArray],
) -> tuple[DyadicTree, IntArray, IntArray]:
    """Grow a cyclic binary partition tree level by level, vectorised over points.

    ``decide(k, counts)`` returns the split mask of the depth-k frontier from its exact
    counts; cells at ``max_depth`` are never split. Children that miss the window are
    dropped. The loop runs over levels only; each level costs O(points still in cells
    that are being split + cells of the level).

    Returns
    -------
    tree : DyadicTree
    leaf_counts : ndarray of shape (n_leaves,)
        Exact number of points per leaf (private; never stored on a released object).
    point_leaf : ndarray of shape (n_points,)
        Leaf of every point.
    """
    n_points, d = grid.shape
    index = np.zeros((1, d), dtype=np.int64)
    parent = np.full(1, -1, dtype=np.int64)
    pid = np.arange(n_points)
    cell = np.zeros(n_points, dtype=np.int64)
    point_leaf = np.full(n_points, -1, dtype=np.int64)
    levels: list[TreeLevel] = []
    leaf_counts: list[IntArray] = []
    n_leaves = 0
    for k in range(max_depth + 1):
        n_cells = index.shape[0]
        if n_cells == 0:
            break
        counts = np.bincount(cell, minlength=n_cells)
        split = np.asarray(decide(k, counts), dtype=bool)
        if k >= max_depth:
            split = np.zeros(n_cells, dtype=bool)
        leaf = ~split
        leaf_id = np.full(n_cells, -1, dtype=np.int64)
        leaf_id[leaf] = n_leaves + np.arange(int(leaf.sum()))
        leaf_counts.append(counts[leaf])
        point_id = leaf_id[cell]
        done = point_id >= 0
        point_leaf[pid[done]] = point_id[done]
        pid, cell = pid[~done], cell[~done]
        # children of the split cells: coordinate j is halved for the (t + 1)-th time
        j, t = k % d, k // d
        parents = np.flatnonzero(split)
        child = np.repeat(index[parents], 2, axis=0)
        child[:, j] = 2 * child[:, j] + np.tile(np.array([0, 1], dtype=np.int64), parents.shape[0])
        width = np.int64(1) << np.int64(_BITS - t - 1)
        lower = child[:, j] * width
        keep = (lower < window_hi[j]) & (lower + width > window_lo[j])
        new_pos = np.full(child.shape[0], -1, dtype=np.int64)
        new_pos[keep] = np.arange(int(keep.sum()))
        levels.append(
            TreeLevel(
                index=index,
                split=split,
                parent=parent,
                leaf_offset=n_leaves,
                n_discarded=int((~keep).sum()),
            )
        )
        n_leaves += int(leaf.sum())
        rank = np.cumsum(split) - 1
        bit = (grid[pid, j] >> np.int64(_BITS - t - 1)) & 1
        cell = new_pos[2 * rank[cell] + bit]
        index = child[keep]
        parent = np.repeat(parents, 2)[keep]
    tree = DyadicTree(levels=tuple(levels), window_lo=window_lo, window_hi=window_hi)
    return tree, np.concatenate(leaf_counts), point_leaf


def _as_points(data: object, dim: int, owner: str) -> FloatArray:
    """Data as a float (n, d) array; raise for a wrong shape, NaN or emptiness."""
    arr = np.asarray(data.to_numpy() if isinstance(data, pd.DataFrame) else data, dtype=float)
    if arr.ndim == 1 and dim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise DataMismatchError(
            f"{owner}: data must have shape (n_obs, {dim}) to match the {dim} public bounds. "
            f"Got shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{owner}: data are empty (0 rows); at least one record is needed.")
    if not np.all(np.isfinite(arr)):
        raise DataMismatchError(
            f"{owner}: data hold {int((~np.isfinite(arr)).sum())} NaN or infinite value(s)."
        )
    return arr


@dataclass(frozen=True, eq=False, repr=False)
class SyntheticMeasure:
    r"""A private synthetic probability measure on leaf representatives of a released tree.

    The measure :math:`\hat\nu = \sum_Q \hat p_Q \delta_{y_Q}` puts weight
    :math:`\hat p_Q` on the representative :math:`y_Q` (centre of leaf cell ∩ window) of
    every leaf Q. It stores only released quantities (tree, noisy counts, weights), so it
    may be published; it can be sampled, plotted and compared with data in W1.

    Attributes
    ----------
    points : ndarray of shape (n_atoms, d)
        Leaf representatives in the original units.
    weights : ndarray of shape (n_atoms,)
        Nonnegative weights summing to one.
    cell_lower, cell_upper : ndarray of shape (n_atoms, d)
        Corners of leaf cell ∩ window in the original units.
    noisy_counts : ndarray of shape (n_atoms,)
        Integer noisy leaf counts that the weights were projected from.
    tree : DyadicTree
        The released partition tree.
    bounds : ndarray of shape (d, 2)
        Public lower and upper bounds of every coordinate.
    shift : ndarray of shape (d,) or None
        Public random shift U in [0, 1]^d (He, 2026, §6); None without one.
    columns : tuple of str
        Column names used by :meth:`to_frame`.
    eps : float
        Total privacy budget of the release.
    projection : str
        How the signed noisy measure was made a probability measure.
    projection_cost : float
        Its W1 cost in unit-cube coordinates (see the synthesizer's Notes).
    privacy : str, default=""
        The privacy statement of the release in words (neighbour relation, what was
        public).

    See Also
    --------
    privinfer.transport.privtree.PrivTreeSynthesizer : builds one from data.

    Examples
    --------
    >>> import numpy as np
    >>> from privinfer.transport.privtree import privtree_synthesize
    >>> x = np.random.default_rng(0).uniform(10, 20, size=(1000, 1))
    >>> nu, _ = privtree_synthesize(x, 1.0, [(10, 20)], random_state=0)
    >>> frame = nu.to_frame()
    >>> list(frame.columns), bool(frame["x0"].between(10, 20).all())
    (['x0', 'weight'], True)
    >>> len(repr(nu).splitlines()) <= 15, len(str(nu.summary()).splitlines()) <= 15
    (True, True)
    """

    points: FloatArray
    weights: FloatArray
    cell_lower: FloatArray
    cell_upper: FloatArray
    noisy_counts: IntArray
    tree: DyadicTree
    bounds: FloatArray
    shift: FloatArray | None
    columns: tuple[str, ...]
    eps: float
    projection: str
    projection_cost: float
    privacy: str = ""

    def __repr__(self) -> str:
        cols = ", ".join(self.columns)
        return (
            f"SyntheticMeasure(n_atoms={self.n_atoms}, dim={self.dim}, columns=({cols}), "
            f"eps={self.eps:.4g},\n"
            f"                 projection={self.projection!r}, "
            f"projection_cost={self.projection_cost:.4g}, "
            f"random_shift={self.shift is not None}, tree depth={len(self.tree.levels) - 1};"
            f"\n                 points, cell_lower, cell_upper: {shape_text(self.points)})"
        )

    def summary(self) -> SummaryText:
        """Short text: size, privacy, projection cost and the tree.

        Returns
        -------
        SummaryText
            A ``str`` (returned, never printed) of at most 15 lines.
        """
        w = self.weights
        bounds = ", ".join(f"{c}: [{lo:.4g}, {hi:.4g}]"
                           for c, (lo, hi) in zip(self.columns, self.bounds, strict=True))
        lines = [
            "Private synthetic measure",
            "=" * 60,
            f"{'Atoms (leaves):':<28}{self.n_atoms:>32}",
            f"{'Dimension:':<28}{self.dim:>32}",
            f"{'Privacy (eps, delta):':<28}{f'({self.eps:.4g}, 0)':>32}",
            f"{'Tree depth / nodes:':<28}"
            f"{f'{len(self.tree.levels) - 1} / {self.tree.n_nodes}':>32}",
            f"{'Random shift:':<28}{self.shift is not None!s:>32}",
            f"{'Projection (W1 cost):':<28}"
            f"{f'{self.projection} ({self.projection_cost:.4g})':>32}",
            f"{'Atoms with weight > 0:':<28}{int(np.count_nonzero(w)):>32}",
            f"{'Largest weight:':<28}{float(w.max()):>32.4g}",
            f"Bounds: {bounds}"[:120],
        ]
        if self.privacy:
            lines.append(self.privacy[:240])
        return SummaryText("\n".join(lines))

    @property
    def dim(self) -> int:
        """Dimension d."""
        return int(self.points.shape[1])

    @property
    def n_atoms(self) -> int:
        """Number of atoms (leaves of the tree)."""
        return int(self.points.shape[0])

    @property
    def _scale(self) -> FloatArray:
        return self.bounds[:, 1] - self.bounds[:, 0]

    def _to_unit(self, data: object, owner: str) -> FloatArray:
        x = _as_points(data, self.dim, owner)
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        outside = np.any((x < lo) | (x > hi), axis=1)
        if np.any(outside):
            raise OutOfSupportError(
                f"{owner}: {int(outside.sum())} row(s) lie outside the public bounds "
                f"{self.bounds.tolist()!r}."
            )
        return (x - lo) / (hi - lo)

    def sample(self, n: int, random_state: RandomStateLike = None) -> FloatArray:
        """Draw ``n`` i.i.d. points from the synthetic measure (its atoms).

        Parameters
        ----------
        n : int
            Number of draws, ``n >= 0``.
        random_state : None, int, SeedSequence or Generator, default=None
            None draws fresh OS entropy.

        Returns
        -------
        ndarray of shape (n, d)
            Points in the original units.

        Examples
        --------
        >>> import numpy as np
        >>> from privinfer.transport.privtree import PrivTreeSynthesizer
        >>> x = np.random.default_rng(0).uniform(size=(500, 2))
        >>> nu = PrivTreeSynthesizer(1.0, [(0, 1), (0, 1)], random_state=0).fit(x).measure_
        >>> nu.sample(3, random_state=1).shape
        (3, 2)
        """
        n = check_int(n, "n", "SyntheticMeasure.sample", 0)
        rng = check_random_state(random_state)
        atoms = rng.choice(self.n_atoms, size=n, p=self.weights)
        return self.points[atoms]

    def to_frame(self) -> pd.DataFrame:
        """Atoms and weights as a DataFrame in the original units (one row per atom)."""
        frame = pd.DataFrame(self.points, columns=list(self.columns))
        frame["weight"] = self.weights
        return frame

    def leaf_masses(self, data: object) -> FloatArray:
        r"""Empirical mass of ``data`` in every leaf: the cell aggregation :math:`\nu_T`.

        This is the oracle measure of He (2026) (exact leaf masses on the representatives);
        it is not private when ``data`` are. O(n_obs * depth).
        """
        unit = self._to_unit(data, "SyntheticMeasure.leaf_masses")
        grid = self.tree.to_grid(unit)
        leaf = self.tree.locate(grid)
        return np.bincount(leaf, minlength=self.n_atoms) / unit.shape[0]

    def wasserstein(
        self, data: object, *, method: WassersteinMethod = "auto", unit_cube: bool = False
    ) -> float:
        r"""Wasserstein-1 distance between the empirical measure of ``data`` and this one.

        ``"exact"`` solves the transport problem with POT (``ot.emd2``) on the
        (n_obs, n_atoms) Euclidean cost matrix: memory O(n_obs * n_atoms), so it is meant
        for moderate sizes (at most 2.5e7 entries). ``"tree"`` returns an upper bound in
        O(n_obs * depth): the cost of moving every point to its leaf representative plus
        the tree-ultrametric distance between the data's leaf masses and the weights.
        ``"auto"`` is exact when the cost matrix fits and the bound otherwise.

        Parameters
        ----------
        data : array-like or DataFrame of shape (n_obs, d)
            Points inside the public bounds.
        method : {"auto", "exact", "tree"}, default="auto"
        unit_cube : bool, default=False
            Measure distances after rescaling the bounds to ``[0, 1]^d`` (the paper's
            units) instead of in the original units.

        Returns
        -------
        float

        Raises
        ------
        OutOfSupportError
            If a row lies outside the public bounds.
        ProblemSizeError
            If ``method="exact"`` would need more than 2.5e7 cost entries.

        Notes
        -----
        The bound uses the triangle inequality through the cell aggregation
        :math:`\nu_T = \sum_Q p_Q \delta_{y_Q}`:

        .. math:: W_1(\mu_n, \hat\nu) \le \frac1n \sum_i \lVert x_i - y_{Q(x_i)} \rVert
                  + \sum_Q \operatorname{diam}(Q)\, c_Q,

        where :math:`c_Q` is the mass of :math:`\nu_T - \hat\nu` cancelled in cell Q by
        bottom-up matching (the exact W1 in the ultrametric
        :math:`\operatorname{diam}(Q \wedge R)`, which dominates the Euclidean one).

        Examples
        --------
        >>> import numpy as np
        >>> from privinfer.transport.privtree import PrivTreeSynthesizer
        >>> x = np.random.default_rng(0).uniform(size=(500, 2))
        >>> nu = PrivTreeSynthesizer(1.0, [(0, 1), (0, 1)], random_state=0).fit(x).measure_
        >>> bool(nu.wasserstein(x, method="exact") <= nu.wasserstein(x, method="tree"))
        True
        """
        owner = "SyntheticMeasure.wasserstein"
        if method not in ("auto", "exact", "tree"):
            raise ValueError(
                f"The 'method' parameter of {owner} must be 'auto', 'exact' or 'tree'. "
                f"Got {method!r} instead."
            )
        unit = self._to_unit(data, owner)
        scale = np.ones(self.dim) if unit_cube else self._scale
        x = unit * scale
        lo = self.bounds[:, 0]
        atoms = (self.points - lo) / self._scale * scale
        support = np.flatnonzero(self.weights > 0)
        size = unit.shape[0] * support.shape[0]
        if method == "exact" and size > _EXACT_MAX_ENTRIES:
            raise ProblemSizeError(
                f"{owner}: method='exact' needs a {unit.shape[0]} x {support.shape[0]} cost "
                f"matrix ({size:.3g} entries > {_EXACT_MAX_ENTRIES:.3g}). Use method='tree' "
                "for an upper bound, or pass a subsample."
            )
        if method == "exact" or (method == "auto" and size <= _EXACT_MAX_ENTRIES):
            ot = import_ot()
            a = np.full(unit.shape[0], 1.0 / unit.shape[0])
            b = self.weights[support] / self.weights[support].sum()
            cost = ot.dist(x, atoms[support], metric="euclidean")
            # POT's network simplex has absolute tolerances: distances below about 1e-9
            # gave non-optimal plans, so it solves on the cost scaled to a maximum of 1
            top = float(cost.max())
            if top == 0.0:
                return 0.0
            return top * float(ot.emd2(a, b, cost / top, numItermax=10_000_000))
        grid = self.tree.to_grid(unit)
        leaf = self.tree.locate(grid)
        resolution = float(np.linalg.norm(x - atoms[leaf], axis=1).mean())
        masses = np.bincount(leaf, minlength=self.n_atoms) / unit.shape[0]
        noise, _ = self.tree.cancel(masses - self.weights, scale=scale)
        return resolution + noise

    def plot(self, ax: object = None, *, cmap: str = "viridis") -> object:
        """Draw the leaf cells coloured by mass density (d = 1 or 2).

        Each cell ∩ window is shaded by weight / area and the atoms are drawn with a
        size proportional to their weight. Imports matplotlib only when called.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Axes to draw on; a new figure is made when None.
        cmap : str, default="viridis"

        Returns
        -------
        matplotlib Axes

        Raises
        ------
        ValueError
            If d > 2.
        """
        if self.dim > 2:
            raise ValueError(
                f"SyntheticMeasure.plot draws cells for d <= 2 only; this measure has d = "
                f"{self.dim}. Plot a projection of sample() instead."
            )
        import matplotlib.pyplot as plt
        from matplotlib.collections import PatchCollection
        from matplotlib.patches import Rectangle

        if ax is None:
            _, ax = plt.subplots()
        lo, hi = self.cell_lower, self.cell_upper
        if self.dim == 1:
            width = hi[:, 0] - lo[:, 0]
            ax.bar(lo[:, 0], self.weights / width, width=width, align="edge", edgecolor="k")
            ax.set_xlabel(self.columns[0])
            ax.set_ylabel("density")
            return ax
        area = np.prod(hi - lo, axis=1)
        density = self.weights / area
        patches = [
            Rectangle((a[0], a[1]), b[0] - a[0], b[1] - a[1]) for a, b in zip(lo, hi, strict=True)
        ]
        coll = PatchCollection(patches, cmap=cmap, edgecolor="k", linewidth=0.2)
        coll.set_array(density)
        ax.add_collection(coll)
        ax.scatter(self.points[:, 0], self.points[:, 1], s=200 * self.weights, c="r")
        ax.set_xlim(*self.bounds[0])
        ax.set_ylim(*self.bounds[1])
        ax.set_xlabel(self.columns[0])
        ax.set_ylabel(self.columns[1])
        plt.colorbar(coll, ax=ax, label="mass / area")
        return ax
