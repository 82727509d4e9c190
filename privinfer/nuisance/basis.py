r"""Polynomial series bases split into public and private factors.

Every basis function is a monomial in the covariate columns, hence a product
:math:`\varphi_j(v, x) = a_j(v)\,p_j(x)` of a public factor (the public columns'
part) and a private factor (the private columns' part), which is what the separable
inversion engine needs (the inversion identity).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

from privinfer._typing import FloatArray
from privinfer._validation import check_int

__all__ = ["PolynomialBasis"]


@dataclass(frozen=True)
class PolynomialBasis:
    r"""All monomials of total degree at most ``degree`` in standardised covariates.

    Dummy columns of one categorical term are never multiplied together (their products
    vanish) and binary columns are not raised to powers (:math:`b^2 = b`).
    Continuous columns are standardised with *public* information: private columns by
    the reference distribution's mean and standard deviation, public ones by the
    released data's.

    Attributes
    ----------
    degree : int
        Largest total degree.
    n_private : int
        Number of private covariate columns (they come first in ``center``/``scale``).
    center, scale : ndarray
        Standardisation of the private then the public covariate columns.
    monomials : tuple of tuple of int
        Column indices (with repetition) of each basis function; ``()`` is the constant.
    names : tuple of str
        Readable names of the basis functions.

    Examples
    --------
    Degree 2 in a private ``x`` (standardised by a uniform reference on [-1, 1]) and a
    binary public ``d`` (never squared):

    >>> ref = np.linspace(-1, 1, 5)[:, None]
    >>> public = np.array([[0.0], [1.0]])
    >>> basis = PolynomialBasis.build(2, ref, np.full(5, 0.2), public, (0,), (1,), ("x", "d"))
    >>> basis.names, basis.has_public
    (('1', 'x', 'd', 'x*x', 'x*d'), True)
    >>> A, P = basis.split(np.array([[0.5], [-1.0]]), public)
    >>> A.tolist()  # public factors: 1, 1, d, 1, d
    [[1.0, 1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0]]
    >>> P.round(3).tolist()  # private factors: 1, x', 1, x'^2, x' with x' = x / 0.707
    [[1.0, 0.707, 1.0, 0.5, 0.707], [1.0, -1.414, 1.0, 2.0, -1.414]]
    """

    degree: int
    n_private: int
    center: FloatArray
    scale: FloatArray
    monomials: tuple[tuple[int, ...], ...]
    names: tuple[str, ...]

    @classmethod
    def build(
        cls,
        degree: int,
        private_ref: FloatArray,
        ref_weights: FloatArray,
        public: FloatArray,
        private_groups: tuple[int, ...],
        public_groups: tuple[int, ...],
        names: tuple[str, ...],
    ) -> PolynomialBasis:
        """Build the basis from the reference design and the released public design."""
        degree = check_int(degree, "degree", "PolynomialBasis", 0)
        k_priv = private_ref.shape[1]
        center = np.zeros(k_priv + public.shape[1])
        scale = np.ones_like(center)
        binary = np.zeros(center.size, dtype=bool)
        for j in range(k_priv):
            v = private_ref[:, j]
            binary[j] = bool(np.all((v == 0) | (v == 1)))
            if not binary[j]:
                mu = float(ref_weights @ v)
                sd = float(np.sqrt(ref_weights @ (v - mu) ** 2))
                center[j], scale[j] = mu, (sd if sd > 0 else 1.0)
        for j in range(public.shape[1]):
            v = public[:, j]
            binary[k_priv + j] = bool(np.all((v == 0) | (v == 1)))
            if not binary[k_priv + j]:
                sd = float(v.std())
                center[k_priv + j], scale[k_priv + j] = float(v.mean()), (sd if sd > 0 else 1.0)
        groups = tuple(private_groups) + tuple(public_groups)
        monos: list[tuple[int, ...]] = [()]
        mono_names = ["1"]
        for size in range(1, degree + 1):
            for combo in itertools.combinations_with_replacement(range(center.size), size):
                ok = True
                for a, b in itertools.combinations(combo, 2):
                    if (a == b and binary[a]) or (a != b and groups[a] == groups[b]):
                        ok = False
                if ok:
                    monos.append(combo)
                    mono_names.append("*".join(names[c] for c in combo))
        return cls(degree, k_priv, center, scale, tuple(monos), tuple(mono_names))

    @property
    def n_basis(self) -> int:
        """Number of basis functions J."""
        return len(self.monomials)

    @property
    def has_public(self) -> bool:
        """Whether some basis function has a non-constant public factor."""
        return any(c >= self.n_private for m in self.monomials for c in m)

    def split(
        self, private: FloatArray, public: FloatArray | None
    ) -> tuple[FloatArray | None, FloatArray]:
        """Public and private factors ``(A, P)`` of every basis function.

        Parameters
        ----------
        private : ndarray of shape (n, K_private)
            Private covariate columns (released or reference).
        public : ndarray of shape (n, K_public) or None
            Public covariate columns; ignored (may be ``None``) for reference points.

        Returns
        -------
        A : ndarray of shape (n, J) or None
            Public factors (``None`` when no basis function has one).
        P : ndarray of shape (n, J)
            Private factors.
        """
        k = self.n_private
        zp = (private - self.center[:k]) / self.scale[:k]
        want_public = self.has_public and public is not None
        P = _monomials(zp, self._index(private=True))
        if not want_public:
            return None, P
        zq = (public - self.center[k:]) / self.scale[k:]  # type: ignore[operator]
        return _monomials(zq, self._index(private=False)), P

    def _index(self, *, private: bool) -> np.ndarray:
        """Padded column indices of each monomial's private (or public) factor.

        Row ``j`` lists the columns multiplied in basis function ``j``; the pad value
        ``-1`` points at an appended column of ones.
        """
        return _factor_index(self.monomials, self.n_private, max(1, self.degree), private)

    def private_only(self, private: FloatArray) -> FloatArray:
        """Private factors alone (for reference points)."""
        return self.split(private, None)[1]


@functools.lru_cache(maxsize=64)
def _factor_index(
    monomials: tuple[tuple[int, ...], ...], k: int, width: int, private: bool
) -> np.ndarray:
    """:meth:`PolynomialBasis._index`, computed once per basis (read-only)."""
    idx = np.full((len(monomials), width), -1, dtype=np.int64)
    for j, mono in enumerate(monomials):
        cols = [c for c in mono if c < k] if private else [c - k for c in mono if c >= k]
        idx[j, : len(cols)] = cols
    idx.flags.writeable = False
    return idx


def _monomials(z: FloatArray, index: np.ndarray) -> FloatArray:
    """Products of columns of ``z`` listed row-wise in ``index`` (-1 = constant one)."""
    # gather rows of the transposed (row-contiguous) array: far faster than column gathers
    ext_t = np.vstack([z.T, np.ones((1, z.shape[0]))])
    out_t = ext_t[index[:, 0]]
    for t in range(1, index.shape[1]):
        out_t *= ext_t[index[:, t]]
    return out_t.T
