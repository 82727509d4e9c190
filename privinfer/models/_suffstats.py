r"""Per fold x treatment arm sufficient statistics of the series basis, and fold fits.

One pass over the released rows (in chunks) sums, per fold :math:`f` and arm :math:`k`,
the public-weighted basis cross-products :math:`\sum\omega\varphi\varphi'`,
:math:`\sum\omega y\varphi`, :math:`\sum\omega\varphi` and their public factors ``A``
(:class:`FoldStats`). Any union of training folds then gives the deconvolved Gram
matrices and moments of the series nuisances (:class:`FoldFit`, :func:`fold_fit`) by
adding these sums, without another pass over the rows:

.. math::
    G_k = \frac1{n_{tr}}\sum_i Q_X^{-1}[\omega 1\{d=k\}\varphi\varphi'], \qquad
    c_k = \frac1{n_{tr}}\sum_i Q_X^{-1}[\omega 1\{d=k\} y\varphi],

with :math:`Q_X^{-1}h = (h - (1-\alpha)\bar Q h)/\alpha` and :math:`\bar Q` of a basis
product read off the reference moments (Kormos and van der Vaart, 2026, sec. 4). Gram
matrices are repaired (eigenvalues floored at their estimated privatisation noise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from privinfer._chunking import row_chunks
from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import FoldError
from privinfer.inversion import column_groups, invert, weighted_cross
from privinfer.models._inputs import TreatmentData
from privinfer.nuisance.basis import PolynomialBasis
from privinfer.nuisance.series import GramRepair, gram_noise_level, repair_gram

__all__ = [
    "FoldFit",
    "FoldStats",
    "accumulate_stats",
    "add_stats",
    "basis_rows",
    "check_fold_counts",
    "fold_fit",
    "held_out_fits",
    "sum_stats",
]

#: Eigenvalue floor of deconvolved Gram matrices, as a multiple of the part of their
#: estimated sampling noise (operator norm) that privatisation adds: (1 - alpha) times the
#: total, since the deconvolved Gram's noise is the raw Gram's over alpha. Flooring is a
#: spectral regularisation whose bias in the one-step estimate is second order in the
#: shift; see ``benchmarks/mc_ate.py``.
_NOISE_FLOOR_SCALE = 1.0


def basis_rows(
    basis: PolynomialBasis, inputs: TreatmentData, rows: IntArray
) -> tuple[FloatArray | None, FloatArray]:
    r"""Public factors ``A`` (None without public terms) and basis :math:`\varphi = A P`."""
    U_pub = inputs.U_pub[rows] if inputs.U_pub.shape[1] else None
    A, P = basis.split(inputs.U_priv[rows], U_pub)
    if A is None:
        return None, P
    # read-only: the row-wise expectations of the chunk may then share the grouping of
    # its repeated columns (privinfer.inversion.column_groups)
    A.setflags(write=False)
    return A, A * P


@dataclass(frozen=True)
class FoldStats:
    r"""Sums over the rows of each fold x arm (leading axes ``(F, L)``), row weights :math:`\omega`.

    ``PP``, ``Py``, ``P1``: :math:`\sum\omega\varphi\varphi'`, :math:`\sum\omega y\varphi`,
    :math:`\sum\omega\varphi`; ``cnt``, ``sy``: :math:`\sum\omega`, :math:`\sum\omega y`;
    ``AA``, ``Ay``, ``A1``: the same for the public factors ``A`` (None without public
    terms). ``F4``, ``FR``, ``RR``: :math:`\sum\omega^2\|\varphi\|^4`,
    :math:`\sum\omega^2(\varphi a)'R(\varphi a)`, :math:`\sum\omega^2(a^2)'(R\circ R)(a^2)`,
    which give the sampling noise of the private Gram matrices (``gram_noise_level``).
    ``PC``, ``AC``, ``CW`` (leading axis ``F``): :math:`\sum\omega c_k\varphi`,
    :math:`\sum\omega c_k a`, :math:`\sum\omega c_k` for a user functional
    :math:`E[c_0(V) + \sum_k c_k(V)\mu(k, X)]` (None for the built-in estimands).
    """

    PP: FloatArray
    Py: FloatArray
    P1: FloatArray
    cnt: FloatArray
    sy: FloatArray
    AA: FloatArray | None
    Ay: FloatArray | None
    A1: FloatArray | None
    F4: FloatArray
    FR: FloatArray
    RR: FloatArray
    PC: FloatArray | None = None
    AC: FloatArray | None = None
    CW: FloatArray | None = None

    @property
    def has_public(self) -> bool:
        """Whether the basis has public factors."""
        return self.AA is not None


def _zeros(F: int, L: int, J: int, C: FloatArray | None, has_a: bool) -> dict[str, FloatArray]:
    out = {
        "PP": np.zeros((F, L, J, J)),
        "Py": np.zeros((F, L, J)),
        "P1": np.zeros((F, L, J)),
        "cnt": np.zeros((F, L)),
        "sy": np.zeros((F, L)),
        "F4": np.zeros((F, L)),
        "FR": np.zeros((F, L)),
        "RR": np.zeros((F, L)),
    }
    if has_a:
        out.update(AA=np.zeros((F, L, J, J)), Ay=np.zeros((F, L, J)), A1=np.zeros((F, L, J)))
    if C is not None:
        out.update(PC=np.zeros((F, L, J)), CW=np.zeros((F, L)))
        if has_a:
            out["AC"] = np.zeros((F, L, J))
    return out


def accumulate_stats(
    folds: IntArray,
    n_folds: int,
    inputs: TreatmentData,
    basis: PolynomialBasis,
    R: FloatArray,
    C: FloatArray | None,
    owner: str,
) -> FoldStats:
    r"""Sufficient statistics of every fold x arm in one chunked pass over the rows.

    ``R`` is the reference outer moment :math:`E_{\bar Q}pp'`; ``C`` the public weights
    :math:`c_k(v_i)` (n x L) of a user functional, or None.

    Raises
    ------
    FoldError
        A fold has no unit of some treatment level.
    """
    return check_fold_counts(sum_stats(folds, n_folds, inputs, basis, R, C), owner)


def add_stats(a: FoldStats, b: FoldStats) -> FoldStats:
    """Field-wise sum of the statistics of two disjoint sets of rows (e.g. two partitions)."""
    return FoldStats(
        **{
            name: None if getattr(a, name) is None else getattr(a, name) + getattr(b, name)
            for name in FoldStats.__dataclass_fields__
        }
    )


def check_fold_counts(stats: FoldStats, owner: str) -> FoldStats:
    """Return ``stats`` unchanged; raise :class:`FoldError` if a fold x arm has no row."""
    empty = np.flatnonzero(np.any(stats.cnt == 0, axis=1))
    if empty.size:
        raise FoldError(f"{owner}: fold {int(empty[0])} has no unit of some treatment level.")
    return stats


def sum_stats(
    folds: IntArray,
    n_folds: int,
    inputs: TreatmentData,
    basis: PolynomialBasis,
    R: FloatArray,
    C: FloatArray | None,
) -> FoldStats:
    """The sums of :func:`accumulate_stats` without the check that every fold x arm has rows.

    Every field is a sum over rows, so the statistics of disjoint row sets (partitions of
    a larger frame) add up with :func:`add_stats`; empty folds, arms or inputs give zeros.
    """
    F, L, J = n_folds, inputs.n_levels, basis.n_basis
    s = _zeros(F, L, J, C, basis.has_public)
    RR = R * R
    y, w = inputs.y, inputs.w
    key = folds * L + inputs.d
    order = np.argsort(key, kind="stable")
    bounds = np.searchsorted(key[order], np.arange(F * L + 1))
    for kk in range(F * L):
        f, k = divmod(kk, L)
        for rows in row_chunks(order[bounds[kk] : bounds[kk + 1]], J):
            A, Phi = basis_rows(basis, inputs, rows)
            groups = None if A is None else column_groups(A)
            yy = y[rows]
            # public sampling weights are row weights of every sum (1 when unweighted)
            wr = np.ones(rows.size) if w is None else w[rows]
            w2 = wr * wr
            s["PP"][f, k] += weighted_cross(Phi, wr)
            s["Py"][f, k] += (wr * yy) @ Phi
            s["P1"][f, k] += wr @ Phi
            s["cnt"][f, k] += wr.sum()
            s["sy"][f, k] += wr @ yy
            sq = np.einsum("ij,ij->i", Phi, Phi)
            s["F4"][f, k] += sq @ (w2 * sq)
            if A is None:
                # sum_i w_i^2 phi_i' R phi_i = <R, sum_i w_i^2 phi_i phi_i'>
                s["RR"][f, k] += w2.sum() * float(RR.sum())
                if w is not None:
                    s["FR"][f, k] += float(np.sum(weighted_cross(Phi, w2) * R))
            else:
                s["FR"][f, k] += float(np.sum(weighted_cross(Phi * A, w2) * R))
                s["RR"][f, k] += float(np.sum(_public_cross(A * A, w2, groups) * RR))
            if C is not None:
                wc = wr[:, None] * C[rows]
                s["PC"][f] += wc.T @ Phi
                s["CW"][f] += wc.sum(axis=0)
                if A is not None:
                    s["AC"][f] += wc.T @ A
            if A is not None:
                s["AA"][f, k] += _public_cross(A, wr, groups)
                s["Ay"][f, k] += (wr * yy) @ A
                s["A1"][f, k] += wr @ A
    if not basis.has_public and w is None:
        # unweighted: sum_i phi_i' R phi_i = <R, sum_i phi_i phi_i'>, no extra pass
        s["FR"][:] = np.einsum("flij,ij->fl", s["PP"], R)
    return FoldStats(**{name: s.get(name) for name in FoldStats.__dataclass_fields__})


def _public_cross(
    A: FloatArray, w: FloatArray, groups: tuple[IntArray, IntArray] | None
) -> FloatArray:
    """``A' diag(w) A`` from the distinct columns of ``A`` when they repeat (``groups``
    of :func:`~privinfer.inversion.column_groups`; also right for ``A * A``, whose
    columns repeat where those of ``A`` do).
    """
    if groups is None:
        return weighted_cross(A, w)
    first, inv = groups
    return weighted_cross(A[:, first], w)[np.ix_(inv, inv)]


@dataclass(frozen=True)
class FoldFit:
    r"""Deconvolved Gram matrices and moments from a union of training folds.

    Attributes
    ----------
    G : tuple of ndarray (J, J)
        Repaired :math:`G_k`, one per treatment level.
    c : tuple of ndarray (J,)
        :math:`c_k = \frac1{n_{tr}}\sum Q_X^{-1}[1\{d=k\}y\varphi]`.
    e_phi : ndarray (J,)
        :math:`\frac1{n_{tr}}\sum Q_X^{-1}[\varphi]` (automatic Riesz representer of a mean).
    e_dphi : ndarray (J,)
        :math:`\frac1{n_{tr}}\sum Q_X^{-1}[1\{d=L-1\}\varphi]` (the ATT's odds).
    e_cphi : tuple of ndarray (J,) or None
        :math:`\frac1{n_{tr}}\sum Q_X^{-1}[c_k\varphi]` of a user functional.
    repairs : tuple of GramRepair
        Gram matrices whose eigenvalues were floored.
    """

    G: tuple[FloatArray, ...]
    c: tuple[FloatArray, ...]
    e_phi: FloatArray
    e_dphi: FloatArray
    e_cphi: tuple[FloatArray, ...] | None
    repairs: tuple[GramRepair, ...]


def fold_fit(
    st: FoldStats,
    sel: np.ndarray,
    fold: int,
    levels: list[object],
    mean: FloatArray,
    R: FloatArray,
    alpha: float,
    *,
    repair: bool = True,
) -> FoldFit:
    r"""Deconvolved Gram matrices and moments from the folds selected by mask ``sel``.

    ``mean`` and ``R`` are the reference moments :math:`E_{\bar Q}p`, :math:`E_{\bar Q}pp'`;
    ``fold`` (the held-out fold) labels the repairs. With ``repair=False`` the Gram
    matrices are returned as deconvolved (symmetrised, possibly indefinite): the
    regularised fits of :mod:`privinfer.nuisance.regularize` choose their own ridges.
    """
    has_a = st.has_public
    n_tr = st.cnt[sel].sum()
    pPP, pPy, pP1 = st.PP[sel].sum(0), st.Py[sel].sum(0), st.P1[sel].sum(0)
    pcnt, psy = st.cnt[sel].sum(0), st.sy[sel].sum(0)
    pAA = st.AA[sel].sum(0) if st.AA is not None else None
    pAy = st.Ay[sel].sum(0) if st.Ay is not None else None
    pA1 = st.A1[sel].sum(0) if st.A1 is not None else None
    Gs, cs, repairs = [], [], []
    for k in range(len(levels)):
        pub_outer = pAA[k] / n_tr if pAA is not None else pcnt[k] / n_tr
        G = invert(pPP[k] / n_tr, pub_outer * R, alpha)
        noise = 0.0
        if not repair:
            Gs.append(0.5 * (G + G.T))
        elif alpha < 1.0:
            sq = (
                st.F4[sel, k].sum()
                - 2 * (1 - alpha) * st.FR[sel, k].sum()
                + (1 - alpha) ** 2 * st.RR[sel, k].sum()
            ) / alpha**2
            # privatisation's share (1 - alpha) of the sampling noise: at alpha = 1
            # the Gram matrix is an ordinary (PSD) one and is left alone
            noise = _NOISE_FLOOR_SCALE * (1 - alpha) * gram_noise_level(sq, G, n_tr)
        if repair:
            Gf, info = repair_gram(
                G, f"Gram matrix, level {levels[k]!r}, fold {fold}", noise_floor=noise
            )
            if info is not None:
                repairs.append(info)
            Gs.append(Gf)
        cs.append(
            invert(
                pPy[k] / n_tr, (pAy[k] / n_tr if pAy is not None else psy[k] / n_tr) * mean, alpha
            )
        )
    e_phi = invert(
        pP1.sum(axis=0) / n_tr, (pA1.sum(axis=0) / n_tr if pA1 is not None else 1.0) * mean, alpha
    )
    e_dphi = invert(
        pP1[-1] / n_tr, (pA1[-1] / n_tr if pA1 is not None else pcnt[-1] / n_tr) * mean, alpha
    )
    e_cphi = None
    if st.PC is not None:
        pPC = st.PC[sel].sum(0)
        pub = st.AC[sel].sum(0) if has_a else st.CW[sel].sum(0)[:, None]
        e_cphi = tuple(
            invert(pPC[k] / n_tr, pub[k] / n_tr * mean, alpha) for k in range(len(levels))
        )
    return FoldFit(tuple(Gs), tuple(cs), e_phi, e_dphi, e_cphi, tuple(repairs))


def held_out_fits(
    st: FoldStats, levels: list[object], mean: FloatArray, R: FloatArray, alpha: float
) -> tuple[FoldFit, ...]:
    r"""Unrepaired deconvolved Gram matrices and moments of each fold on its own.

    Means over each fold's rows: any union of folds is their row-weighted average, and a
    held-out fold's statistics score a fit trained on the others (private CV losses).
    """
    F = st.cnt.shape[0]
    return tuple(
        fold_fit(st, np.arange(F) == g, g, levels, mean, R, alpha, repair=False)
        for g in range(F)
    )
