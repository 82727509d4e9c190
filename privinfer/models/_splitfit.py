r"""Per-split state of the one-step template and the pass over the held-out rows.

:class:`FoldNuisances` (one fold's fitted nuisances), :class:`FoldScores` (its held-out
rows' transformed scores), :class:`SplitFit` (one cross-fit) and :class:`HeldOutPass` (the
picklable second pass that a row source runs on every partition), plus the small
functions that summarise a split's regularised series fits for the diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privinfer._chunking import row_chunks
from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import SingularDesignError
from privinfer.models import scores
from privinfer.models._inputs import TreatmentData
from privinfer.models._nuisances import (
    KernelOutcome,
    PropensityRiesz,
    SeriesFits,
    SeriesOutcome,
    SeriesRiesz,
)
from privinfer.models._suffstats import FoldStats, basis_rows
from privinfer.models.scores import ReferenceTerms
from privinfer.nuisance.basis import PolynomialBasis
from privinfer.nuisance.regularize import CrossFitFits
from privinfer.nuisance.series import GramRepair
from privinfer.results import PrivateResults

__all__ = [
    "FoldNuisances",
    "FoldScores",
    "HeldOutPass",
    "SplitFit",
    "describe_fits",
    "floor_records",
    "indefinite",
    "reference_riesz_moments",
    "reference_share",
]


@dataclass(frozen=True)
class FoldNuisances:
    """Nuisances fitted on the training folds of held-out fold ``fold``."""

    fold: int
    outcome: SeriesOutcome | KernelOutcome
    series: SeriesOutcome
    riesz: SeriesRiesz | PropensityRiesz


@dataclass(frozen=True)
class FoldScores:
    """Transformed scores of the held-out rows ``rows`` of one fold.

    ``pom`` (rows x L): arm scores; ``att``: the ATT numerator score (zeros unless fitted);
    ``risk``: outcome risk; ``riesz2`` (rows x L+1): Riesz second moments (last: odds).
    """

    rows: IntArray
    pom: FloatArray
    att: FloatArray
    risk: FloatArray
    riesz2: FloatArray
    n_clipped: int


@dataclass(frozen=True)
class SplitFit:
    """One cross-fitting split: estimates, influence values and what the diagnostics need."""

    est: FloatArray
    phi: Any
    repairs: tuple[GramRepair, ...]
    n_clipped: int
    r2: float
    riesz2: FloatArray
    terms: tuple[ReferenceTerms, ...] | None
    contrast: FloatArray | None
    interp_err: float
    n: int
    #: change of each estimate when both fits loosen (``loosest_plausible``)
    shift: FloatArray
    #: private E_Qbar[rho^2]-type moments of the Riesz fits at the reference draws
    riesz_ref2: FloatArray
    #: what regularisation did (for the summary)
    regularisation: tuple[tuple[str, str], ...]
    #: (label, smallest eigenvalue) of every indefinite deconvolved Gram matrix (all rows)
    indefinite: tuple[tuple[str, float], ...] = ()
    #: kernel outcome route: held-out rows whose own arm's fit was floored
    kernel_floored: int = 0
    #: noise of ``shift``: its spread over the held-out folds, or the bootstrap's if larger
    shift_se: FloatArray | None = None
    #: fold-block bootstrap standard errors of ``est`` (None: not computed)
    boot_se: FloatArray | None = None
    #: covariance matrix of the bootstrap draws of ``est`` (None: not computed)
    boot_cov: FloatArray | None = None
    #: change of each estimate when every sieve's cap is halved
    #: (:data:`~privinfer.models._onestep._CAP_SENSITIVITY`), and its spread over the
    #: held-out folds; None where not computed
    cap_shift: FloatArray | None = None
    cap_shift_se: FloatArray | None = None
    #: change of each estimate when every fit's noise guard is halved, and its noise
    guard_shift: FloatArray | None = None
    guard_shift_se: FloatArray | None = None
    #: covariance of ``est`` when the scores were reduced without row-level influence
    #: values (Dask input; ``phi`` is then lazy), else None
    cov: FloatArray | None = None
    #: whether the split's fits took one noise guard per eigen-direction (the per-fit
    #: guard switch, :data:`~privinfer.models._onestep._GUARD_SWITCH`)
    guard_directions: bool = False


@dataclass(frozen=True)
class HeldOutPass:
    """The second pass over the rows: each held-out row's transformed scores.

    A small picklable object (the basis, the fold nuisances, the estimand's flags) that a
    row source calls on every partition; ``C`` holds the public weights of a user
    functional for all rows (None otherwise).
    """

    basis: PolynomialBasis
    nuisances: tuple[FoldNuisances, ...]
    C: FloatArray | None
    alpha: float
    odds: bool

    def __call__(
        self, x: TreatmentData, folds: IntArray, offset: int
    ) -> tuple[tuple[FloatArray, FloatArray], tuple[float, FloatArray, int]]:
        """Scores of the rows of ``x`` (rows ``offset..`` of the data), from their folds' nuisances.

        Returns the row-wise arm scores (rows x L) and ATT numerator score, and the sums
        over the rows of the weighted outcome risk, the weighted Riesz second moments
        (L+1) and the number of clipped propensities (diagnostics need only these sums).
        """
        n, L = x.y.size, x.n_levels
        C = None if self.C is None else self.C[offset : offset + n]
        pom_phi, att_phi, risk = np.zeros((n, L)), np.zeros(n), np.zeros(n)
        riesz2 = np.zeros((n, L + 1))
        n_clipped = 0
        for nuis in self.nuisances:
            fs = self.fold_scores(x, np.flatnonzero(folds == nuis.fold), nuis, C)
            pom_phi[fs.rows], att_phi[fs.rows], risk[fs.rows] = fs.pom, fs.att, fs.risk
            riesz2[fs.rows] = fs.riesz2
            n_clipped += fs.n_clipped
        wt = np.ones(n) if x.w is None else x.w
        return (pom_phi, att_phi), (float(wt @ risk), wt @ riesz2, n_clipped)

    def fold_scores(
        self, x: TreatmentData, rows_f: IntArray, nuis: FoldNuisances, C: FloatArray | None
    ) -> FoldScores:
        """Transformed scores of the held-out rows ``rows_f`` of ``x``, chunk by chunk."""
        alpha, L, basis = self.alpha, x.n_levels, self.basis
        pom, att = np.zeros((rows_f.size, L)), np.zeros(rows_f.size)
        risk, riesz2 = np.zeros(rows_f.size), np.zeros((rows_f.size, L + 1))
        n_clipped, offset = 0, 0
        for rows in row_chunks(rows_f, basis.n_basis):
            sl = slice(offset, offset + rows.size)
            offset += rows.size
            A, Phi = basis_rows(basis, x, rows)
            yy, dd = x.y[rows], x.d[rows]
            mu = nuis.outcome.at(A, Phi, sl)
            risk[sl] = scores.outcome_risk(mu, dd, yy, alpha)
            arms, odds, clipped = nuis.riesz.chunk(
                x.U_priv[rows], A, Phi, sl, nuis.outcome, self.odds
            )
            n_clipped += clipped
            for k, rho in enumerate(arms):
                ind = (dd == k).astype(float)
                ck = 1.0 if C is None else C[rows, k]
                pom[sl, k] = scores.pom_score(ck, k, mu, ind, rho, yy, alpha)
                riesz2[sl, k] = scores.riesz_second_moment(ind, rho, alpha)
            if odds is not None:
                d1 = (dd == 1).astype(float)
                att[sl] = scores.att_score(d1, mu, odds, yy, alpha)
                riesz2[sl, L] = scores.riesz_second_moment(1 - d1, odds, alpha)
        return FoldScores(rows_f, pom, att, risk, riesz2, n_clipped)


def reference_share(res: PrivateResults) -> float:
    """Largest reference error as a share of the standard error (0 when exact)."""
    err = res.diagnostics.reference_error
    shares = [
        err[nm] / float(res.bse[nm])
        for nm in err
        if nm in res.bse.index and float(res.bse[nm]) > 0 and np.isfinite(err[nm])
    ]
    return max(shares, default=0.0)


def _named(fits: SeriesFits, levels: list[Any]) -> list[tuple[str, CrossFitFits]]:
    """Every series nuisance of ``fits`` with its label (outcome / Riesz per level, odds)."""
    named = [(f"outcome, level {lv!r}", fit) for lv, fit in zip(levels, fits.outcome, strict=True)]
    named += [(f"Riesz, level {lv!r}", fit) for lv, fit in zip(levels, fits.riesz, strict=False)]
    if fits.odds is not None:
        named.append(("odds (ATT)", fits.odds))
    return named


def floor_records(fits: SeriesFits, levels: list[Any]) -> list[GramRepair]:
    """Last-resort eigenvalue floors of the regularised fits, as repair records."""
    out = []
    for label, fit in _named(fits, levels):
        if fit.n_floored:
            out.append(GramRepair(label, float("nan"), 0.0, fit.n_floored, True))
    return out


def check_fixed_ridge(fits: SeriesFits, levels: list[Any], ridge: float, owner: str) -> None:
    """Refuse a user-fixed ridge that leaves a deconvolved Gram matrix below its noise.

    Raises
    ------
    SingularDesignError
        Some fit's training Gram matrix (after the fixed ridge) has an eigen-direction
        below the estimated privatisation noise
        (:func:`~privinfer.nuisance.regularize.noise_guard`): its coefficients there would
        be noise divided by noise.
    """
    short = [(lab, fit.ridge_needed) for lab, fit in _named(fits, levels) if fit.ridge_needed > 0]
    if short:
        need = max(v for _, v in short)
        step = 10.0 ** (np.floor(np.log10(need)) - 2)  # three significant digits, rounded up
        need = float(np.ceil(need / step) * step)
        raise SingularDesignError(
            f"{owner}: with the fixed ridge={ridge:g}, {len(short)} deconvolved Gram "
            f"matrix(es) ({'; '.join(label for label, _ in short)}) keep directions below "
            "their privatisation noise: the fit would divide noise by noise there, and its "
            "estimates can be off by orders of magnitude. Use ridge='cv' (the default: "
            "each fit's ridge is chosen by private CV, above the noise) or a fixed ridge of "
            f"at least {need:.3g}."
        )


def reference_riesz_moments(fits: SeriesFits, st: FoldStats, R: FloatArray) -> FloatArray:
    r"""Second moments at the reference of the first fold's Riesz fits (public factors a)."""
    L = len(fits.outcome)
    out = np.zeros(L + 1)
    n = float(st.cnt.sum())
    thetas = [r.coefs[0] for r in fits.riesz]
    arms = list(range(L))
    if fits.odds is not None:
        thetas.append(fits.odds.coefs[0])
        arms.append(0)
    for j, (theta, k) in enumerate(zip(thetas, arms, strict=False)):
        W = R * (st.AA[:, k].sum(axis=0) if st.AA is not None else st.cnt[:, k].sum())
        out[j if j < len(fits.riesz) else L] = float(theta @ W @ theta) / n
    return out


def describe_fits(fits: SeriesFits, levels: list[Any]) -> tuple[tuple[str, str], ...]:
    """Summary facts: each nuisance's chosen sieve size and relative ridge (and, where a
    Riesz fit was undersmoothed, the factor by which its ridge sits below the CV's).
    """

    def one(fit: Any) -> str:
        if fit.choice is None:
            return f"full, ridge {fit.relative_ridge:.2g}"
        size = fit.choice.subset.size
        cv = fit.choice.relative_ridge
        under = f" (CV/{cv / fit.relative_ridge:.2g})" if fit.relative_ridge < cv else ""
        return f"{size} fns, ridge {fit.relative_ridge:.2g}{under}"

    facts = [(f"Outcome[{lv}]:", one(fit)) for lv, fit in zip(levels, fits.outcome, strict=True)]
    facts += [(f"Riesz[{lv}]:", one(fit)) for lv, fit in zip(levels, fits.riesz, strict=False)]
    if fits.odds is not None:
        facts.append(("Odds (ATT):", one(fits.odds)))
    return tuple(facts)


#: Relative size below which a negative eigenvalue is round-off (:func:`indefinite`).
ROUNDOFF = 1e-10


def indefinite(fits: SeriesFits, levels: list[Any]) -> tuple[tuple[str, float], ...]:
    """Arms whose deconvolved Gram matrix over all rows has a negative eigenvalue.

    Negative beyond round-off: below ``-ROUNDOFF`` times the largest absolute eigenvalue.
    At ``alpha = 1`` the matrix is positive semi-definite, and a collinear sieve (e.g.
    spline bumps and interactions on a covariate with few distinct values) leaves
    eigenvalues of order -1e-15 that are arithmetic, not privatisation noise.
    """
    w = fits.n_rows / fits.n_rows.sum()
    out = []
    for k, lv in enumerate(levels):
        G = sum(wg * h.G[k] for wg, h in zip(w, fits.held_out, strict=True))
        eig = np.linalg.eigvalsh(G)
        lam = float(eig[0])
        if lam < -ROUNDOFF * float(np.max(np.abs(eig))):
            out.append((f"level {lv!r}", lam))
    return tuple(out)
