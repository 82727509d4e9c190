r"""A series basis that grows with the data: a nested ladder of additive splines.

The default nuisance basis of the one-step models. Every continuous covariate column
gets, level by level, a linear term (level 1), a square (2), a cube (3) and truncated
cubes :math:`(z - \kappa)_+^3` at 1, then 2, 4 and 8 more knots (levels 4-7, the dyadic
quantiles 1/2; 1/4, 3/4; 1/8, ..., 7/8; 1/16, ..., 15/16): a cubic regression spline whose
knots double from level to level. Binary columns and categorical dummies enter linearly.
Pairwise products of the linear terms (different columns) form an optional interaction
block. A **candidate** sub-basis is "levels up to ``a``, with or without interactions";
the candidates are index subsets of one largest basis, so the per-fold sufficient
statistics (Gram matrices and moments) of that basis give every candidate's private
cross-validation loss by taking sub-blocks, and the outcome and Riesz fits may choose
different candidates (:func:`privinfer.nuisance.regularize.cv_spectral`). Rate double
robustness needs both nuisance errors to vanish; a sieve chosen by cross-validation grows
with the information in the data instead of staying at a fixed degree.

Every function is a product :math:`a_j(v)p_j(x)` of a public and a private factor, as the
separable inversion engine requires (DESIGN §4). Knots and standardisation of private
columns come from the **deconvolved** marginal distribution of the released values,
:math:`F_X(t) = \{F_Z(t) - (1 - \alpha)\bar F(t)\}/\alpha` (post-processing of the release,
no extra privacy cost), so that knots follow the data rather than a reference that may be
much wider than the data.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from privinfer._typing import FloatArray, IntArray
from privinfer._validation import check_int
from privinfer.exceptions import DataMismatchError

__all__ = ["SieveBasis", "deconvolved_moments", "deconvolved_quantiles"]

#: Largest ladder level (linear, square, cube, then 1, 3, 7 and 15 knots).
MAX_LEVEL = 7
#: Quantile probabilities of the knots added at levels 4 to 7 (dyadic).
_KNOT_PROBS = {
    4: (0.5,),
    5: (0.25, 0.75),
    6: (0.125, 0.375, 0.625, 0.875),
    7: tuple((2 * i + 1) / 16 for i in range(8)),
}
#: Private atoms are functions of the standardised value clipped to the deconvolved
#: quantiles at these probabilities: reference draws far outside the data (a reference
#: wider than the data) then stay bounded, which keeps the privatisation noise of the Gram
#: matrices small; the fit is constant beyond them.
CLIP_PROBS = (0.005, 0.995)
#: Rows used for deconvolved quantiles (a deterministic stride beyond this).
_QUANTILE_ROWS = 100_000


def deconvolved_quantiles(
    released: FloatArray,
    ref_values: FloatArray,
    ref_weights: FloatArray,
    alpha: float,
    probs: FloatArray,
) -> FloatArray:
    r"""Quantiles of the true marginal of a private column, from released values.

    The released marginal is :math:`F_Z = \alpha F_X + (1-\alpha)\bar F`, so
    :math:`F_X = (F_Z - (1-\alpha)\bar F)/\alpha`, evaluated on the released values,
    made monotone (running maximum) and clipped to [0, 1], then inverted.

    Parameters
    ----------
    released : ndarray of shape (n,)
        Released values of the column.
    ref_values, ref_weights : ndarray of shape (M,)
        Reference sample of the column and its weights.
    alpha : float
        Keep probability.
    probs : ndarray
        Probabilities in (0, 1).

    Returns
    -------
    ndarray
        The quantiles (at ``alpha = 1`` the sample quantiles).

    Examples
    --------
    Half the rows replaced by a uniform reference on [0, 10]; the data live on [0, 1]:

    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(0, 1, 20000)
    >>> z = np.where(rng.random(20000) < 0.5, x, rng.uniform(0, 10, 20000))
    >>> ref = np.linspace(0, 10, 1001)
    >>> q = deconvolved_quantiles(z, ref, np.full(1001, 1 / 1001), 0.5, np.array([0.5]))
    >>> bool(abs(q[0] - 0.5) < 0.05), bool(np.median(z) > 0.9)
    (True, True)
    """
    z = np.asarray(released, dtype=float)
    if z.size > _QUANTILE_ROWS:
        z = z[:: z.size // _QUANTILE_ROWS]
    t = np.sort(z)
    fz = np.arange(1, t.size + 1) / t.size
    if alpha < 1.0:
        order = np.argsort(ref_values, kind="stable")
        cw = np.cumsum(np.asarray(ref_weights, dtype=float)[order])
        pos = np.searchsorted(np.asarray(ref_values, dtype=float)[order], t, side="right")
        fq = np.where(pos > 0, cw[np.maximum(pos - 1, 0)], 0.0)
        fx = np.clip(np.maximum.accumulate((fz - (1 - alpha) * fq) / alpha), 0.0, 1.0)
    else:
        fx = fz
    idx = np.searchsorted(fx, np.asarray(probs, dtype=float), side="left")
    return t[np.clip(idx, 0, t.size - 1)]


def deconvolved_moments(
    released: FloatArray, ref_values: FloatArray, ref_weights: FloatArray, alpha: float
) -> tuple[float, float]:
    r"""Mean and standard deviation of a private column's true marginal.

    :math:`E X^k = (\overline{Z^k} - (1 - \alpha)E_{\bar Q}X^k)/\alpha` for k = 1, 2; the
    reference's moments are returned if the deconvolved variance is not positive.

    Examples
    --------
    >>> z = np.array([0.0, 1.0, 2.0, 3.0])
    >>> deconvolved_moments(z, z, np.full(4, 0.25), 0.5)  # data = reference here
    (1.5, 1.118033988749895)
    """
    z = np.asarray(released, dtype=float)
    rv, rw = np.asarray(ref_values, dtype=float), np.asarray(ref_weights, dtype=float)
    m1r, m2r = float(rw @ rv), float(rw @ rv**2)
    m1 = (float(z.mean()) - (1 - alpha) * m1r) / alpha
    m2 = (float(np.mean(z**2)) - (1 - alpha) * m2r) / alpha
    var = m2 - m1**2
    if not np.isfinite(var) or var <= 1e-12 * max(m2r - m1r**2, 1e-300):
        return m1r, float(np.sqrt(max(m2r - m1r**2, 0.0))) or 1.0
    return m1, float(np.sqrt(var))


@dataclass(frozen=True)
class SieveBasis:
    r"""Nested additive spline ladder with an optional block of pairwise interactions.

    Attributes
    ----------
    n_private : int
        Number of private design columns (they come first).
    center, scale : ndarray
        Standardisation of the private then the public columns.
    lower, upper : ndarray
        Standardised values are clipped to ``[lower, upper]`` (deconvolved 0.5% and 99.5%
        quantiles for continuous columns, infinite otherwise).
    atoms : tuple of (int, str, float)
        ``(column, kind, knot)`` with kind ``"lin"``, ``"sq"``, ``"cube"`` or ``"knot"``
        (knot in standardised units).
    functions : tuple of tuple of int
        Atoms multiplied in each basis function (``()`` is the constant).
    level : tuple of int
        Ladder level of each function (0 for the constant, -1 for an interaction).
    names : tuple of str
        Readable names.
    max_level : int
        Highest level present.

    Examples
    --------
    Two private uniform columns, levels up to 4 (one knot), with interactions:

    >>> rng = np.random.default_rng(0)
    >>> ref = rng.uniform(-1, 1, (512, 2))
    >>> b = SieveBasis.build(ref, np.full(512, 1 / 512), ref, np.zeros((512, 0)), 1.0,
    ...                      (0, 1), (), ("x1", "x2"), max_level=4)
    >>> b.n_basis, [len(c) for _, c in b.candidates()]
    (10, [3, 4, 5, 6, 7, 8, 9, 10])
    >>> A, P = b.split(ref[:3], None)
    >>> A is None, P.shape
    (True, (3, 10))
    """

    n_private: int
    center: FloatArray
    scale: FloatArray
    lower: FloatArray
    upper: FloatArray
    atoms: tuple[tuple[int, str, float], ...]
    functions: tuple[tuple[int, ...], ...]
    level: tuple[int, ...]
    names: tuple[str, ...]
    max_level: int
    #: largest candidate kept by :meth:`candidates` when no size is given (set by
    #: :meth:`restrict`)
    max_size: int | None = None

    @classmethod
    def build(
        cls,
        private_ref: FloatArray,
        ref_weights: FloatArray,
        private_released: FloatArray,
        public: FloatArray,
        alpha: float,
        private_groups: tuple[int, ...],
        public_groups: tuple[int, ...],
        names: tuple[str, ...],
        *,
        max_level: int = MAX_LEVEL,
        interactions: bool = True,
    ) -> SieveBasis:
        """Build the ladder up to ``max_level`` from public information and the release.

        Parameters
        ----------
        private_ref : ndarray of shape (M, K_private)
            Private design columns at the reference points.
        ref_weights : ndarray of shape (M,)
            Reference weights.
        private_released : ndarray of shape (n, K_private)
            Released private design columns (their deconvolved marginals place knots).
        public : ndarray of shape (n, K_public)
            Public design columns.
        alpha : float
            Keep probability.
        private_groups, public_groups : tuple of int
            Group label of each column (dummies of one categorical share a label).
        names : tuple of str
            Names of the private then the public columns.
        max_level : int, default=7
            Highest ladder level (1: linear ... 7: cubic spline with 15 knots).
        interactions : bool, default=True
            Include the pairwise products of linear terms.

        Raises
        ------
        DataMismatchError
            If the column counts disagree.
        """
        owner = "SieveBasis"
        max_level = check_int(max_level, "max_level", owner, 1)
        max_level = min(max_level, MAX_LEVEL)
        k_priv, k_pub = private_ref.shape[1], public.shape[1]
        if private_released.shape[1] != k_priv or len(names) != k_priv + k_pub:
            raise DataMismatchError(f"{owner}: column counts of the inputs disagree.")
        groups = tuple(private_groups) + tuple(public_groups)
        center = np.zeros(k_priv + k_pub)
        scale = np.ones_like(center)
        binary = np.zeros(center.size, dtype=bool)
        knots: dict[int, dict[int, FloatArray]] = {}
        rw = np.asarray(ref_weights, dtype=float)
        probs = np.array([*CLIP_PROBS, *(p for lv in _KNOT_PROBS for p in _KNOT_PROBS[lv])])
        lower = np.full(center.size, -np.inf)
        upper = np.full(center.size, np.inf)
        for j in range(k_priv + k_pub):
            if j < k_priv:
                v, rel = private_ref[:, j], private_released[:, j]
                binary[j] = bool(np.all((v == 0) | (v == 1)))
                if binary[j]:
                    continue
                center[j], scale[j] = deconvolved_moments(rel, v, rw, alpha)
                q = deconvolved_quantiles(rel, v, rw, alpha, probs)
            else:
                v = public[:, j - k_priv]
                binary[j] = bool(np.all((v == 0) | (v == 1)))
                if binary[j]:
                    continue
                center[j], sd = float(v.mean()), float(v.std())
                scale[j] = sd if sd > 0 else 1.0
                q = deconvolved_quantiles(v, v[:1], np.ones(1), 1.0, probs)
            zq = (q - center[j]) / scale[j]
            lower[j], upper[j] = zq[0], zq[1]
            zq = zq[2:]
            start = 0
            knots[j] = {}
            for lv in _KNOT_PROBS:
                k = len(_KNOT_PROBS[lv])
                knots[j][lv] = zq[start : start + k]
                start += k
        atoms: list[tuple[int, str, float]] = []
        functions: list[tuple[int, ...]] = [()]
        level = [0]
        fnames = ["1"]

        def add(col: int, kind: str, knot: float, lv: int) -> None:
            atoms.append((col, kind, knot))
            functions.append((len(atoms) - 1,))
            level.append(lv)
            nm = names[col]
            fnames.append(
                {"lin": nm, "sq": f"{nm}^2", "cube": f"{nm}^3"}.get(kind, f"({nm}-{knot:.3g})+^3")
            )

        lin_atom: dict[int, int] = {}
        for j in range(center.size):
            add(j, "lin", 0.0, 1)
            lin_atom[j] = len(atoms) - 1
        for lv in range(2, max_level + 1):
            for j in range(center.size):
                if binary[j]:
                    continue
                if lv == 2:
                    add(j, "sq", 0.0, 2)
                elif lv == 3:
                    add(j, "cube", 0.0, 3)
                else:
                    seen = {a[2] for a in atoms if a[0] == j and a[1] == "knot"}
                    for kn in knots[j][lv]:
                        if float(kn) not in seen:
                            add(j, "knot", float(kn), lv)
        if interactions:
            for a, b in itertools.combinations(range(center.size), 2):
                if groups[a] != groups[b]:
                    functions.append((lin_atom[a], lin_atom[b]))
                    level.append(-1)
                    fnames.append(f"{names[a]}*{names[b]}")
        return cls(
            k_priv, center, scale, lower, upper, tuple(atoms), tuple(functions), tuple(level),
            tuple(fnames), max_level,
        )  # fmt: skip

    # -- interface shared with PolynomialBasis / BSplineBasis ----------------------------
    @property
    def n_basis(self) -> int:
        """Number of basis functions J."""
        return len(self.functions)

    @property
    def has_public(self) -> bool:
        """Whether some basis function has a non-constant public factor."""
        return any(self.atoms[a][0] >= self.n_private for f in self.functions for a in f)

    @property
    def degree(self) -> str:
        """A short description (for summaries)."""
        inter = any(lv < 0 for lv in self.level)
        return f"spline ladder <= {self.max_level}{' + interactions' if inter else ''}"

    def _atom_values(self, u: FloatArray, private: bool) -> FloatArray:
        k = self.n_private
        sel = [i for i, a in enumerate(self.atoms) if (a[0] < k) == private]
        out = np.ones((u.shape[0], len(self.atoms) + 1))
        if not sel:
            return out
        cols = np.array([self.atoms[i][0] for i in sel]) - (0 if private else k)
        off = 0 if private else k
        z = (u[:, cols] - self.center[cols + off]) / self.scale[cols + off]
        z = np.clip(z, self.lower[cols + off], self.upper[cols + off])
        kinds = [self.atoms[i][1] for i in sel]
        kn = np.array([self.atoms[i][2] for i in sel])
        for m, kind in enumerate(kinds):
            if kind == "sq":
                z[:, m] = z[:, m] ** 2
            elif kind == "cube":
                z[:, m] = z[:, m] ** 3
            elif kind == "knot":
                z[:, m] = np.maximum(z[:, m] - kn[m], 0.0) ** 3
        out[:, sel] = z
        return out

    def _factor(self, u: FloatArray, private: bool) -> FloatArray:
        T = self._atom_values(u, private)
        k = self.n_private
        n_at = len(self.atoms)
        idx = np.full((self.n_basis, 2), n_at, dtype=np.int64)  # n_at: the column of ones
        for j, f in enumerate(self.functions):
            mine = [a for a in f if (self.atoms[a][0] < k) == private]
            idx[j, : len(mine)] = mine
        return T[:, idx[:, 0]] * T[:, idx[:, 1]]

    def split(
        self, private: FloatArray, public: FloatArray | None
    ) -> tuple[FloatArray | None, FloatArray]:
        """Public and private factors ``(A, P)`` of every basis function.

        Parameters
        ----------
        private : ndarray of shape (n, K_private)
            Private design columns (released or reference).
        public : ndarray of shape (n, K_public) or None
            Public design columns; ignored (may be ``None``) for reference points.

        Returns
        -------
        A : ndarray of shape (n, J) or None
            Public factors (``None`` when no basis function has one).
        P : ndarray of shape (n, J)
            Private factors.
        """
        P = self._factor(np.asarray(private, dtype=float), True)
        if public is None or not self.has_public:
            return None, P
        return self._factor(np.asarray(public, dtype=float), False), P

    def private_only(self, private: FloatArray) -> FloatArray:
        """Private factors alone (for reference points)."""
        return self.split(private, None)[1]

    # -- the ladder -----------------------------------------------------------------------
    def candidates(self, max_size: int | None = None) -> list[tuple[str, IntArray]]:
        """Nested candidate sub-bases ``(description, indices)``, smallest first.

        Levels ``1..max_level``, each without and then with the interaction block; empty
        duplicates and candidates with more than ``max_size`` functions are dropped (the
        linear candidate is always kept).
        """
        max_size = self.max_size if max_size is None else max_size
        lv = np.asarray(self.level)
        out: list[tuple[str, IntArray]] = []
        seen: set[tuple[int, ...]] = set()
        for a in range(1, self.max_level + 1):
            for inter in (False, True):
                keep = (lv >= 0) & (lv <= a)
                if inter:
                    keep |= lv < 0
                idx = np.flatnonzero(keep)
                key = tuple(idx.tolist())
                if key in seen:
                    continue
                if max_size is not None and idx.size > max_size and out:
                    continue
                seen.add(key)
                out.append((f"level {a}{' + interactions' if inter else ''}", idx))
        return out

    def restrict(self, keep: IntArray, max_size: int | None = None) -> SieveBasis:
        """The basis made of the functions in ``keep`` (constant first, order kept).

        ``max_size`` becomes the default size limit of :meth:`candidates`.
        """
        keep = np.unique(np.r_[0, np.asarray(keep, dtype=np.int64)])
        lv = [self.level[i] for i in keep]
        return SieveBasis(
            self.n_private, self.center, self.scale, self.lower, self.upper, self.atoms,
            tuple(self.functions[i] for i in keep), tuple(lv),
            tuple(self.names[i] for i in keep), max(max(lv), 1), max_size,
        )  # fmt: skip
