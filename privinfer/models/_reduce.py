r"""The variance of a treatment model as a reduction over partitions (Dask input).

Every estimand of the treatment models is a smooth function of the weighted means of a
few *score components* :math:`s_i \in \mathbb R^q` (the arms' transformed scores; for
the ATT the numerator score and the treated indicator; for a user functional its total
score), and its influence values are a linear contrast of the centred components:

.. math::
    \hat m = \frac1n\sum_i \omega_i s_i, \qquad
    \varphi_i = C(\hat m)'\,\omega_i(s_i - \hat m).

So :math:`\sum_i\varphi_i\varphi_i' = C'BC` with
:math:`B = \sum_i\omega_i^2(s_i - \hat m)(s_i - \hat m)'`, and the clustered version
needs only the sums :math:`\sum_{i\in g}\omega_i s_i` and :math:`\sum_{i\in g}\omega_i`
of every cluster ``g``. :class:`ScoreMoments` holds these sums for a set of rows; the
statistics of two partitions add up (:meth:`ScoreMoments.merge`, with a change of
centre, so that no uncentred second moment loses precision), and the covariance follows
without any row-level array on the client. The centre is the :math:`\omega_i^2`-weighted
mean of the rows (Chan, Golub and LeVeque's pairwise update with weights
:math:`\omega_i^2`): about it the first moment vanishes, so every change of centre adds a
positive semi-definite term and nothing cancels, even when one weight dwarfs the others.
:class:`LazyInfluence` recomputes the influence values on request, partition by
partition, as a Dask array.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privinfer._typing import FloatArray, IntArray
from privinfer.covariance import _psd, cluster_sums

__all__ = ["LazyCodes", "LazyInfluence", "ScoreMoments", "cluster_dims"]


def cluster_dims(clusters: IntArray | None) -> tuple[IntArray, ...]:
    """The cluster codes whose sums a clustered covariance needs.

    One-way: the codes; two-way (Cameron, Gelbach and Miller, 2011): both dimensions and
    their intersections, as :class:`~privinfer.covariance.OuterAccumulator` uses them.
    """
    if clusters is None:
        return ()
    from privinfer.covariance import _intersections

    codes = np.asarray(clusters)
    if codes.ndim == 1:
        return (codes,)
    return (codes[:, 0], codes[:, 1], _intersections(codes))


@dataclass(frozen=True)
class ScoreMoments:
    r"""Weighted moments of the score components of a set of rows.

    Attributes
    ----------
    n : int
        Number of rows.
    s1 : ndarray of shape (q,)
        :math:`\sum_i\omega_i s_i`.
    w2 : float
        :math:`\sum_i\omega_i^2`.
    centre : ndarray of shape (q,)
        The centre :math:`c` of ``a`` and ``b``: the :math:`\omega_i^2`-weighted mean of
        the rows (zero without rows or weights).
    a : ndarray of shape (q,)
        :math:`\sum_i\omega_i^2(s_i - c)`, zero up to rounding about that centre.
    b : ndarray of shape (q, q)
        :math:`\sum_i\omega_i^2(s_i - c)(s_i - c)'`.
    clusters : tuple of ndarray of shape (G, q + 1)
        Per clustering dimension (:func:`cluster_dims`), the sums of
        :math:`(\omega_i s_i, \omega_i)` within every cluster.

    Examples
    --------
    Two halves of the rows give the statistics of all of them; the covariance of a mean
    is that of its influence values :math:`\omega_i(s_i - \hat m)`:

    >>> rng = np.random.default_rng(0)
    >>> s, w = rng.normal(size=(10, 1)), np.ones(10)
    >>> mom = ScoreMoments.of_rows(s[:4], w[:4]).merge(ScoreMoments.of_rows(s[4:], w[4:]))
    >>> phi = s - s.mean()
    >>> bool(np.isclose(mom.covariance(np.eye(1))[0, 0], (phi**2).sum() / 100))
    True
    """

    n: int
    s1: FloatArray
    w2: float
    centre: FloatArray
    a: FloatArray
    b: FloatArray
    clusters: tuple[FloatArray, ...] = field(default=())

    @classmethod
    def of_rows(
        cls,
        s: FloatArray,
        w: FloatArray,
        dims: Sequence[IntArray] = (),
        sizes: Sequence[int] = (),
    ) -> ScoreMoments:
        """Statistics of the rows ``s`` (n x q) with weights ``w``, clusters ``dims``."""
        s = np.asarray(s, dtype=float)
        n, q = s.shape
        s1 = w @ s
        w2v = w * w
        w2 = float(w2v.sum())
        centre = w2v @ s / w2 if n and w2 > 0 else np.zeros(q)
        dev = s - centre
        sums = tuple(
            cluster_sums(np.column_stack([w[:, None] * s, w]), c, g)
            for c, g in zip(dims, sizes, strict=True)
        )
        return cls(n, s1, w2, centre, w2v @ dev, (dev * w2v[:, None]).T @ dev, sums)

    def shifted(self, centre: FloatArray) -> ScoreMoments:
        """The same statistics about another centre (exact: ``b`` gains the shift terms)."""
        d = self.centre - centre
        a = self.a + self.w2 * d
        b = self.b + np.outer(self.a, d) + np.outer(d, self.a) + self.w2 * np.outer(d, d)
        return ScoreMoments(self.n, self.s1, self.w2, centre, a, b, self.clusters)

    def merge(self, other: ScoreMoments) -> ScoreMoments:
        r"""Statistics of the union of two disjoint sets of rows.

        About the union's :math:`\omega_i^2`-weighted mean each part's ``b`` only gains
        :math:`W_2 dd'` (its ``a`` is zero): a sum of positive semi-definite terms. A
        centre weighted otherwise (by row counts) let a part with one dominant weight
        carry terms many orders above the covariance, which then cancelled.
        """
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        w2 = self.w2 + other.w2
        if w2 > 0:
            centre = (self.w2 * self.centre + other.w2 * other.centre) / w2
        else:  # no weight on either side: every moment is zero
            centre = (self.n * self.centre + other.n * other.centre) / n
        x, y = self.shifted(centre), other.shifted(centre)
        return ScoreMoments(
            n,
            x.s1 + y.s1,
            x.w2 + y.w2,
            centre,
            x.a + y.a,
            x.b + y.b,
            tuple(p + q for p, q in zip(x.clusters, y.clusters, strict=True)),
        )

    @property
    def mean(self) -> FloatArray:
        r""":math:`\hat m = \frac1n\sum_i\omega_i s_i`."""
        return self.s1 / self.n

    def covariance(self, contrast: FloatArray) -> FloatArray:
        r"""Covariance of the estimate whose influence values are :math:`C'\omega_i(s_i - \hat m)`.

        :math:`\frac1{n^2}C'BC` without clusters; :math:`\frac1{n^2}\sum_g S_gS_g'` with
        :math:`S_g = C'(\sum_{i\in g}\omega_i s_i - \hat m\sum_{i\in g}\omega_i)` one-way,
        and the two-way combination :math:`V_1 + V_2 - V_{12}` (negative eigenvalues set
        to zero), exactly as :func:`~privinfer.covariance.influence_cov`.
        """
        C = np.asarray(contrast, dtype=float)
        n, m = self.n, self.mean
        if not self.clusters:
            B = self.shifted(m).b
            return C.T @ B @ C / n**2
        terms = []
        for sums in self.clusters:
            S = (sums[:, :-1] - sums[:, -1:] * m) @ C
            terms.append(S.T @ S / n**2)
        if len(terms) == 1:
            return terms[0]
        return _psd(terms[0] + terms[1] - terms[2])


class LazyInfluence:
    r"""Influence values :math:`\varphi_i` (n x p) of a fit on Dask input, computed on request.

    The fit itself only reduces them (:class:`ScoreMoments`); this object recomputes
    them from the data, one partition per task, when they are asked for:
    :meth:`to_dask` returns a lazy Dask array, ``numpy.asarray`` computes it.
    Column selections (``phi[:, [0, 2]]``) and scalings (``phi * factor``) stay lazy.

    Parameters
    ----------
    n, p : int
        Shape.
    make : callable
        Returns the (unscaled, all columns) Dask array.
    """

    def __init__(
        self,
        n: int,
        p: int,
        make: Callable[[], Any],
        columns: list[int] | None = None,
        scale: FloatArray | None = None,
    ) -> None:
        self._n, self._p_all, self._make = n, p, make
        self._columns, self._scale = columns, scale

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, p)``."""
        return (self._n, self._p_all if self._columns is None else len(self._columns))

    @property
    def ndim(self) -> int:
        """Two."""
        return 2

    def to_dask(self) -> Any:
        """The influence values as a lazy Dask array (one block per partition)."""
        arr = self._make()
        if self._scale is not None:
            arr = arr * self._scale[None, :]
        return arr if self._columns is None else arr[:, self._columns]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.asarray(self.to_dask().compute())
        return out if dtype is None else out.astype(dtype)

    # arithmetic (combining results, ``a - b``) computes the values
    def __add__(self, other: Any) -> np.ndarray:
        return np.asarray(self) + np.asarray(other)

    def __radd__(self, other: Any) -> np.ndarray:
        return np.asarray(other) + np.asarray(self)

    def __sub__(self, other: Any) -> np.ndarray:
        return np.asarray(self) - np.asarray(other)

    def __rsub__(self, other: Any) -> np.ndarray:
        return np.asarray(other) - np.asarray(self)

    def __neg__(self) -> np.ndarray:
        return -np.asarray(self)

    def __rmul__(self, factor: Any) -> LazyInfluence:
        return self * factor

    def __mul__(self, factor: Any) -> LazyInfluence:
        f = np.asarray(factor, dtype=float)
        if self._columns is not None:  # a selection: scale its columns' factors
            full = np.ones(self._p_all) if self._scale is None else self._scale.copy()
            if f.ndim == 0:
                return LazyInfluence(self._n, self._p_all, self._make, self._columns, full * f)
            return np.asarray(self) * f
        f = np.broadcast_to(f, (self._p_all,))
        scale = f if self._scale is None else self._scale * f
        return LazyInfluence(self._n, self._p_all, self._make, None, scale)

    def __getitem__(self, key: Any) -> Any:
        if (
            isinstance(key, tuple)
            and len(key) == 2
            and isinstance(key[0], slice)
            and key[0] == slice(None)
        ):
            base = np.arange(self._p_all) if self._columns is None else np.asarray(self._columns)
            picked = np.atleast_1d(base[key[1]]).tolist()
            return LazyInfluence(self._n, self._p_all, self._make, picked, self._scale)
        return np.asarray(self)[key]

    def __reduce__(self) -> tuple[Any, ...]:
        # the recipe reads the released Dask frame: a saved results object keeps the shape
        return (_omitted_influence, (self.shape,))

    def __repr__(self) -> str:
        return f"LazyInfluence(shape={self.shape})"


class LazyCodes:
    """Cluster codes of a fit on Dask input (n,) or (n, 2), computed on request.

    The fit reduces within clusters in its tasks; results keep this stand-in so that the
    summary can count the clusters without reading a row. ``numpy.asarray`` (combining
    results, the multiplier bootstrap) computes the codes, partition by partition.

    Parameters
    ----------
    n : int
        Number of rows.
    sizes : tuple of int
        Number of clusters of each dimension (codes ``0..G-1``, every code used).
    make : callable
        Returns the codes as a lazy Dask array.
    """

    def __init__(self, n: int, sizes: tuple[int, ...], make: Callable[[], Any]) -> None:
        self._n, self._sizes, self._make = n, tuple(sizes), make

    @property
    def shape(self) -> tuple[int, ...]:
        """``(n,)`` one-way, ``(n, 2)`` two-way."""
        return (self._n,) if len(self._sizes) == 1 else (self._n, len(self._sizes))

    @property
    def ndim(self) -> int:
        """One (one-way) or two (two-way)."""
        return len(self.shape)

    def max(self) -> int:
        """Largest code (one-way: the number of clusters minus one)."""
        return max(self._sizes) - 1

    def copy(self) -> LazyCodes:
        """The same stand-in (it holds no values)."""
        return self

    def __getitem__(self, key: Any) -> Any:
        two = isinstance(key, tuple) and len(key) == 2 and key[0] == slice(None)
        if two and self.ndim == 2 and isinstance(key[1], int):
            j, make = key[1], self._make
            return LazyCodes(self._n, (self._sizes[j],), lambda: make()[:, j])
        return np.asarray(self)[key]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.asarray(self._make().compute())
        return out if dtype is None else out.astype(dtype)

    def tolist(self) -> list[Any]:
        """The codes as a list (computed)."""
        return np.asarray(self).tolist()

    def __reduce__(self) -> tuple[Any, ...]:
        # the recipe reads the released Dask frame: a saved results object keeps the counts
        return (_omitted_codes, (self._n, self._sizes))

    def __repr__(self) -> str:
        return f"LazyCodes(shape={self.shape})"


def _omitted_influence(shape: tuple[int, int]) -> Any:
    """What a pickled :class:`LazyInfluence` loads as: its shape, never its values."""
    from privinfer.models._gmm_dask import OmittedInfluence

    return OmittedInfluence(shape)


def _omitted_codes(n: int, sizes: tuple[int, ...]) -> Any:
    """What a pickled :class:`LazyCodes` loads as: its cluster counts, never the codes."""
    from privinfer.models._gmm_dask import OmittedCodes

    return OmittedCodes(n, sizes)


@dataclass(frozen=True)
class ComponentReducer:
    r"""Reduce a partition's held-out scores to :class:`ScoreMoments`.

    ``kind`` names the score components :math:`s_i` of the estimand (see
    :func:`score_components`); ``sizes`` are the numbers of clusters of each dimension of
    :func:`cluster_dims`. Called with the partition's row arrays, its inputs, its slice
    of the functional's offsets ``c0`` (or None) and its slices of the cluster codes.
    """

    kind: str
    sizes: tuple[int, ...] = ()

    def __call__(
        self,
        rows: tuple[FloatArray, FloatArray],
        x: Any,
        c0: FloatArray | None,
        *dims: IntArray,
    ) -> ScoreMoments:
        s = score_components(self.kind, rows[0], rows[1], x.d, c0)
        w = np.ones(s.shape[0]) if x.w is None else x.w
        return ScoreMoments.of_rows(s, w, dims, self.sizes)


def score_components(
    kind: str, pom_phi: FloatArray, att_phi: FloatArray, d: IntArray, c0: FloatArray | None
) -> FloatArray:
    r"""Score components :math:`s_i` (rows x q) of an estimand.

    ``"pom"``: the arms' transformed scores (ATE, POM); ``"att"``: the ATT numerator score
    and the treated indicator; ``"functional"``: :math:`c_0 + \sum_k` of the arm scores.
    """
    if kind == "pom":
        return pom_phi
    if kind == "att":
        return np.column_stack([att_phi, (d == 1).astype(float)])
    assert c0 is not None  # internal invariant: a user functional carries c0
    return (c0 + pom_phi.sum(axis=1))[:, None]
