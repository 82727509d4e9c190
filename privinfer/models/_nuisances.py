r"""Nuisances of the treatment-effect estimators, fitted per fold through :math:`Q_X^{-1}`.

Each nuisance is a frozen object that evaluates itself on a chunk of held-out rows as the
score elements of :mod:`privinfer.models.scores` (values and reference expectations):

* :class:`SeriesOutcome`: :math:`\mu(k, x) = \beta_k'\varphi`, :math:`\beta_k = G_k^{-1}c_k`;
* :class:`KernelOutcome`: a private Nadaraya-Watson fit, whose reference terms come from
  evaluating it at the reference points (Kormos and van der Vaart, 2026, Example 11);
* :class:`SeriesRiesz`: automatic Riesz representers :math:`\rho_k = 1\{d=k\}\theta_k'\varphi`,
  :math:`\theta_k = G_k^{-1}\frac1n\sum Q_X^{-1}[c_k\varphi]`, and the ATT's odds
  :math:`\theta_w = G_0^{-1}\frac1n\sum Q_X^{-1}[d\varphi]`;
* :class:`PropensityRiesz`: :math:`1\{d=k\}/\pi_k(x)` from a private logistic propensity,
  clipped, with single-index reference expectations.

:func:`choose_basis` picks the series basis (the adaptive sieve or a fixed degree);
:func:`fit_series` fits the series nuisances of every fold, each with its own sieve and
ridge chosen by private cross-validation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

import privinfer.nuisance.regularize as regularize
import privinfer.nuisance.sieve as sieve_module
from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import DataMismatchError
from privinfer.inversion import (
    ReferenceDesign,
    index_expectation,
    qbar_linear,
    qbar_quadratic,
)
from privinfer.models._crossfit import training_folds
from privinfer.models._inputs import TreatmentData
from privinfer.models._suffstats import FoldFit, FoldStats, held_out_fits
from privinfer.models.scores import OutcomeElements, RieszElements
from privinfer.nuisance.basis import PolynomialBasis
from privinfer.nuisance.crossval import private_cv_kernel
from privinfer.nuisance.kernel import KernelReference, private_kernel_regression
from privinfer.nuisance.logit import fit_private_logit
from privinfer.nuisance.regularize import (
    CrossFitFits,
    SpectraCache,
    fit_crossfit,
    plausible_candidates,
)
from privinfer.nuisance.sieve import SieveBasis

__all__ = [
    "KernelOutcome",
    "PropensityRiesz",
    "SeriesFits",
    "SeriesOutcome",
    "SeriesRiesz",
    "arm_caps",
    "choose_basis",
    "fit_series",
    "kernel_outcome",
    "noiseless_functions",
    "propensity_riesz",
    "series_outcome",
    "series_riesz",
    "sieve_cap",
]

#: The largest candidate of the adaptive sieve has at most n_min * alpha^2 / this many
#: functions (n_min: rows of the smallest arm; alpha^2: privatisation's loss of information).
_SIEVE_ROWS_PER_BASIS = 10
#: Sub-bases a refit on resampled statistics tries per nuisance: None, all of them (the
#: default), or those within this many fold SEs of the best CV loss of the original fit
#: (:func:`~privinfer.nuisance.regularize.plausible_candidates`). Measured below alpha = 1
#: (n = 4000, 64 cells, 24 replications): a margin of 2 takes the worst bootstrap
#: overshoot (SE / MC sd 1.66) into the band, but 7 intervals lost their coverage and 1
#: gained it, and a short cell fell out of the band. Restricting the refits to the best 3
#: sub-bases instead removed a third of the selection variance the bootstrap is there to
#: see, for 40% less time.
_REFIT_MARGIN: float | None = None
#: Which nuisance groups (``"outcome"``, ``"riesz"``: the arms' representers and the
#: ATT's odds) ``_REFIT_MARGIN`` restricts; a research switch of the validation suite
#: (``--refit-margin-groups``).
_REFIT_MARGIN_GROUPS: tuple[str, ...] = ("outcome", "riesz")
#: Whether the sieve's interaction block holds the polynomial tensor products (the
#: default) or only the products of the linear terms, as before issue 14's second round of
#: held-out designs. A research switch of the validation suite (``--no-tensor``), which
#: measures the block against its absence on the same releases.
_SIEVE_TENSOR = True
#: Whether the tensor block multiplies a categorical covariate's tail contrasts with the
#: squares and cubes of the other columns (the default) or only with their linear terms,
#: as before the tenth round of held-out designs. A research switch of the validation
#: suite (``--no-tail-tensor``).
_TAIL_TENSOR = True
#: Below alpha = 1, the fold SEs of the paired CV-loss difference by which a
#: "+ interactions" candidate must beat the best additive one (None: no margin, the
#: default; ``cv_spectral``'s ``margins``). A research switch of the validation suite
#: (``--interaction-margin``). Measured with 1 on the same releases (100 replications per
#: cell, docs/user_guide/validation.rst): n = 4000 at alpha 0.7, 32 of 32 cells pass
#: against 29; at 0.5, 29 of 32 both ways; n = 1000, 51 of 64 against 52, every miss
#: warned; intervals a median 3-6% shorter. Not the default: on the nine held-out designs
#: (alpha 0.7 and 0.5, n = 4000, 50 replications) 65 of 72 cells pass both ways, but the
#: biases grow against the SE where the truth has an interaction (tensor_tanh's ATE by
#: +0.16 SE, pubpriv_interact's E[Y(1)] at 0.5 by -0.30 SE, paired t = -5.9).
_INTERACTION_MARGIN: float | None = None
#: Whether every sieve candidate also comes in a variant whose public columns lead by
#: h = round(log2(1 / alpha^2)) ladder levels (``SieveBasis.build``'s
#: ``public_head_start``; h = 0 at alpha = 1, 1 at 0.7, 2 at 0.5, at most 3), the private
#: CV choosing between the two. Public functions carry no privatisation
#: noise, yet with a common ladder the private CV held them as small as the noisy private
#: ones: on a design whose overlap problem sits in a public normal confounder (held-out
#: ``public_overlap``, alpha 0.5, n = 4000) both fits stopped at cubics in the public
#: column's CDF scale and every estimate was biased by about 1 SE (coverage 0.80).
_PUBLIC_HEAD_START = True
#: Whether, below alpha = 1, the sieve candidates whose public columns lead (see
#: ``_PUBLIC_HEAD_START``) also spare their purely public functions from the noise guard
#: of the fits in ``_SPARE_FITS``: the guard is added to the private functions' diagonal
#: (``guard_lift``) instead of flooring the ridge of every function. The guard sits at
#: the privatisation noise of the Gram matrix, which public functions do not carry; a
#: common floor shrank the public directions of both fits alike, the product bias of
#: ``public_overlap`` (a public confounder with poor overlap). The other candidates keep
#: the common guard: sparing the public functions of every candidate (outcome and Riesz
#: fits) made ``proxy_public``'s estimates (a public proxy of the private confounder)
#: 1.2-1.7 times as spread. A research switch of the validation suite (``--common-guard``).
_PUBLIC_UNGUARDED = True
#: At ``alpha = 1`` the Riesz fits (and the ATT's odds) are undersmoothed: fitted at
#: their CV-chosen relative ridge divided by the largest of 1, sqrt(10) and this factor
#: at which their held-out second moment in the arm (the leading term of the one-step
#: estimate's variance) grows by at most ``_RIESZ_ENERGY_BUDGET`` times
#: (``fit_crossfit``'s ``undersmooth`` and ``energy_budget``); the CV's choice of
#: sub-basis, the comparison fit and the outcome fits are unchanged. The one-step
#: estimator's bias is the product of the two fits' errors, and the ridge that the Riesz
#: loss :math:`E[\rho^2 - 2m(\rho)]` chooses is tuned for the representer's mean squared
#: error, not for that product: with both fits on one sieve an unshrunk Riesz fit makes
#: the estimate independent of the outcome fit's shrinkage. Measured (validation page,
#: "Undersmoothing the Riesz fits"): on ``lognormal_clip`` at alpha = 1, n = 1000 (100
#: replications) the biases of the ATE and E[Y(1)] went from -0.43 and -0.49 standard
#: errors to -0.29 and -0.30, within the band, at the same root mean squared error; a
#: fixed factor of 10 went further but cost up to 2.28 times the root mean squared error
#: under limited overlap (``overlap_s``), and a budget read on the training folds up to
#: 1.42 times on a 12-level factor (``factor_12``); this rule, at most 1.08 times on
#: both. Set to 1 to turn it off (``benchmarks/validate.py --riesz-undersmooth 1``).
#: Only with the series outcome fits: with the kernel outcome route
#: (``outcome_model="kernel"``) it moved ``sieve_drift``'s ATE at alpha = 1, n = 1000 from
#: +0.17 to -0.70 standard errors (60 replications; three cells failing unwarned, none
#: before), while its gain there was on ``lognormal_clip`` (-0.24 to -0.06), which passed
#: without it.
_RIESZ_UNDERSMOOTH = 10.0
#: The variance budget of ``_RIESZ_UNDERSMOOTH`` (None: the whole factor;
#: ``--riesz-energy-budget``).
_RIESZ_ENERGY_BUDGET: float | None = 1.5
#: Research switch (default False): undersmooth below alpha = 1 too. There the bias sits
#: in the noise guard and the sieve, the second moment the budget reads comes from the
#: deconvolved Gram matrix (itself noisy), and it bought nothing (measured with a budget
#: of 1.25 read on the training folds): the main designs at n = 4000 pass 52 of 64 cells
#: with it as without, and ``lognormal_clip``'s ATE and E[Y(1)] at alpha = 0.7 had
#: 1.57-1.71 times the root mean squared error (``--riesz-undersmooth-private``).
_RIESZ_UNDERSMOOTH_PRIVATE = False
#: Which fits spare the public functions (with ``_PUBLIC_UNGUARDED``): ``"outcome"``
#: (the default), ``"riesz"`` (the Riesz representers and the ATT's odds) or both. A
#: research switch of the validation suite (``--spare-fits``). Measured on the same
#: releases (n = 4000, alpha = 0.5, 40 replications): sparing the outcome fits alone took
#: ``public_overlap``'s biases from 0.24-0.40 SE to 0.04-0.11 SE with the estimates as
#: spread as before (MC sd ratio 0.84-1.05); sparing the Riesz fits too gave 0.02-0.20 SE
#: but spread ``proxy_public``'s estimates 1.09-1.37 times as much (less shrunk weights).
_SPARE_FITS: tuple[str, ...] = ("outcome",)
#: Which fits the research options ``privinfer.nuisance.regularize.GUARD_WEIGHTS`` (a
#: noise guard weighted per function; default 0, off) and ``GUARD_DIRECTIONS`` (one
#: guard per eigen-direction; default off) apply to: ``"outcome"``,
#: ``"riesz"`` (the Riesz representers and the ATT's odds) or both (the default). The
#: one-step estimator's regularisation bias is a product of the two fits' shrinkages, so
#: sparing either fit's quiet directions should remove the guard's bias there. Measured
#: on the outcome fits only: 5 of 8 ``factor_cells`` cells pass at n = 16000 (8 with
#: both, 1 without), and ``nsw_censored``'s errors still grow up to 4.1 times. A research
#: switch of the validation suite (``--guard-weight-fits``).
_GUARD_WEIGHT_FITS: tuple[str, ...] = ("outcome", "riesz")
#: Compute cap on the adaptive sieve (the sufficient statistics cost O(n J^2)).
_SIEVE_MAX_BASIS = 160
#: Whether every fit's sieve candidates are capped by the rows of the arm it is fitted on
#: (:func:`arm_caps`; the default), or all of them by the smallest arm's, as before the
#: eighth round of held-out designs (a research switch of the validation suite,
#: ``--min-arm-cap``).
_ARM_CAPS = True
#: Which arm's rows cap the ATT's odds fit: ``"control"`` (the default: the arm whose
#: Gram matrix it solves) or ``"treated"`` (the rows behind its right-hand side; measured
#: on ``cps_lalonde``, see :func:`arm_caps`). A research switch.
_ODDS_CAP_ARM = "control"
#: Research switch (not the default): below ``alpha = 1`` no fit's sieve exceeds this many
#: functions (``None``: no such cap). Probes whether the rich candidates that the noise
#: guard alone regularises add noise to the estimate and width to its bootstrap
#: (``benchmarks/validate.py --max-arm-cap``; validation page of the user guide).
_MAX_ARM_CAP: int | None = None
#: Whether the Riesz and odds fits' CV distrusts fits that live where their arm has
#: (almost) no rows of the sample (:data:`~privinfer.nuisance.regularize.SUPPORT_FLOOR`;
#: the default), or not, as before the ninth round of held-out designs (a research switch
#: of the validation suite, ``--no-support-rule``).
_SUPPORT_RULE = True
#: Grid size of single-index reference expectations (interpolation error reported).
_GRID = 129


def sieve_cap(n_rows: float, alpha: float) -> int:
    r"""The largest sieve candidate a fit on ``n_rows`` rows may take.

    :math:`\min(\max(n\alpha^2/10, 2), 160)`: ten effective rows per function, and
    the compute cap.

    Examples
    --------
    >>> sieve_cap(490, 1.0), sieve_cap(3500, 1.0), sieve_cap(3500, 0.5)
    (49, 160, 87)
    """
    return int(min(max(n_rows * alpha**2 / _SIEVE_ROWS_PER_BASIS, 2), _SIEVE_MAX_BASIS))


def arm_caps(inputs: TreatmentData, alpha: float) -> tuple[list[int], int]:
    r"""Sieve caps of the fits: one per arm (its outcome regression and Riesz
    representer), and the ATT's odds fit's.

    A fit on arm :math:`k` solves a system in that arm's Gram matrix, so its candidates
    are capped by that arm's rows (:func:`sieve_cap`); the ATT's odds solve one in the
    control arm's. A common cap set by the smallest arm starved the large arm's fits: on
    the LaLonde comparison (held-out ``cps_lalonde``: 12% treated, n = 4000,
    ``alpha = 1``, 50 replications) the odds stopped at 41 of 49 functions and the ATT
    was biased by 0.85 standard errors (coverage 0.90; DoubleML's IRM 1.00). Capping the
    odds by the control arm took the bias to 0.14 standard errors (coverage 1.00);
    capping them by the treated arm, whose rows make their right-hand side, left it at
    0.94.
    """
    counts = np.asarray(inputs.arm_counts, dtype=float)
    if not _ARM_CAPS:
        cap = sieve_cap(float(counts.min()), alpha)
        return [cap] * counts.size, cap
    caps = [sieve_cap(float(c), alpha) for c in counts]
    odds = caps[-1] if _ODDS_CAP_ARM == "treated" else caps[0]
    if _MAX_ARM_CAP is not None and alpha < 1.0:
        return [min(c, _MAX_ARM_CAP) for c in caps], min(odds, _MAX_ARM_CAP)
    return caps, odds


# -- series basis ----------------------------------------------------------------------
def sieve_basis(inputs: TreatmentData, reference: ReferenceDesign, alpha: float) -> SieveBasis:
    r"""The adaptive sieve: the nested spline ladder, as large as the data support.

    Its largest candidate has at most :math:`n_{\max}\alpha^2/10` functions
    (:math:`n_{\max}` the rows of the largest arm) and at most 160; the outcome and Riesz
    fits then choose their own candidate and ridge by private CV
    (:func:`fit_series`), each among the candidates its own arm's rows support
    (:func:`arm_caps`).
    """
    spec = inputs.spec
    caps, odds_cap = arm_caps(inputs, alpha)
    max_size = max(*caps, odds_cap)
    indices = index_coefficients(inputs, reference, alpha) if index_atoms_on(alpha) else ()
    full = SieveBasis.build(
        reference.U,
        reference.weights,
        inputs.U_priv,
        inputs.U_pub,
        alpha,
        spec.private_groups,
        spec.public_groups,
        spec.private_names + spec.public_names,
        tensor=_SIEVE_TENSOR,
        tail_tensor=_TAIL_TENSOR,
        public_head_start=public_head_start(alpha) if _PUBLIC_HEAD_START else 0,
        index_coefs=indices,
    )
    keep = np.unique(np.concatenate([idx for _, idx in full.candidates(max_size)]))
    return full.restrict(keep, max_size)


def index_atoms_on(alpha: float) -> bool:
    """Whether the sieve gets single-index atoms at this keep probability
    (:data:`privinfer.nuisance.sieve.INDEX_ATOMS`: ``"alpha1"``, the default, at
    ``alpha = 1`` only; ``True`` always; ``False`` never).
    """
    setting = sieve_module.INDEX_ATOMS
    if setting == "alpha1":
        return alpha == 1.0
    return bool(setting)


def index_coefficients(
    inputs: TreatmentData, reference: ReferenceDesign, alpha: float
) -> list[FloatArray]:
    r"""Private parts of linear indices fitted on the release, for the single-index atoms.

    (:data:`privinfer.nuisance.sieve.INDEX_ATOMS`.)
    The least-squares fits of each treatment level's indicator (all levels but the
    first) and of each arm's outcome on :math:`(1, x_{\mathrm{priv}}, x_{\mathrm{pub}})`,
    with the moments of the private columns deconvolved: the alpha-identity replaces the
    private columns by a reference draw independent of everything else, so
    :math:`E[xx'] = \{E[\tilde x\tilde x'] - (1-\alpha)E_{\bar Q}[xx']\}/\alpha` and
    :math:`E[xv] = \{E[\tilde xv] - (1-\alpha)E_{\bar Q}[x]E[v]\}/\alpha` for any
    public or outcome column :math:`v`. The columns are first standardised (private ones
    by the reference's standard deviations, public ones by their own), so that the
    indices do not depend on the covariates' units, and the deconvolved Gram matrix is
    made positive definite by flooring its eigenvalues at :math:`10^{-6}` of the largest.
    Returns the coefficients of the private columns, one array per index; none with fewer than two
    private columns or groups (an index of one column is that column), and an index
    within 0.99 (cosine on the standardised scale) of an earlier one is dropped. A fit
    on a Dask DataFrame (whose basis is chosen from a sample of rows without outcomes)
    gets none.
    """
    spec = inputs.spec
    X, Z = inputs.U_priv, inputs.U_pub
    k = X.shape[1]
    if k < 2 or len(set(spec.private_groups)) < 2:
        return []
    if np.asarray(inputs.y).shape[0] != X.shape[0]:  # a Dask fit's stand-in rows: none
        return []
    R, wr = np.asarray(reference.U, dtype=float), np.asarray(reference.weights, dtype=float)
    m_ref, S_ref = wr @ R, (R * wr[:, None]).T @ R
    d = np.asarray(inputs.d)
    targets: list[tuple[np.ndarray, FloatArray]] = []
    all_rows = np.ones(d.shape[0], dtype=bool)
    for lev in np.unique(d)[1:]:
        targets.append((all_rows, (d == lev).astype(float)))
    for lev in np.unique(d):
        rows = d == lev
        targets.append((rows, np.asarray(inputs.y, dtype=float)[rows]))
    sd = np.sqrt(np.maximum(np.diag(S_ref) - m_ref**2, 1e-12))
    # every column on its reference (private) or sample (public) scale, so that the
    # eigenvalue floor below does not depend on the units of the covariates
    sz = Z.std(axis=0) if Z.shape[0] else np.ones(Z.shape[1])
    sz = np.where(sz > 0, sz, 1.0)
    X, Z = X / sd, Z / sz
    m_ref, S_ref = m_ref / sd, S_ref / np.outer(sd, sd)
    out: list[FloatArray] = []
    kept: list[FloatArray] = []
    for rows, v in targets:
        Xs, Zs = X[rows], Z[rows]
        n_s = Xs.shape[0]
        if n_s < 2 * (1 + k + Z.shape[1]):
            continue
        mx = (Xs.mean(axis=0) - (1 - alpha) * m_ref) / alpha
        mz = Zs.mean(axis=0)
        Sxx = (Xs.T @ Xs / n_s - (1 - alpha) * S_ref) / alpha
        Sxz = (Xs.T @ Zs / n_s - (1 - alpha) * np.outer(m_ref, mz)) / alpha
        Szz = Zs.T @ Zs / n_s
        G = np.block([
            [np.ones((1, 1)), mx[None, :], mz[None, :]],
            [mx[:, None], Sxx, Sxz],
            [mz[:, None], Sxz.T, Szz],
        ])
        c = np.r_[v.mean(), (Xs.T @ v / n_s - (1 - alpha) * m_ref * v.mean()) / alpha,
                  Zs.T @ v / n_s]
        lam, vec = np.linalg.eigh(0.5 * (G + G.T))
        lam = np.maximum(lam, 1e-6 * max(float(lam.max()), 1e-300))
        bs = (vec @ ((vec.T @ c) / lam))[1 : 1 + k]  # on the standardised scale
        norm = float(np.linalg.norm(bs))
        if not np.isfinite(norm) or norm == 0.0:
            continue
        bs = bs / norm
        if any(abs(float(bs @ q)) > 0.99 for q in kept):
            continue
        kept.append(bs)
        out.append(bs / sd)  # the index x'b in the columns' own units
    return out


def public_head_start(alpha: float) -> int:
    r"""Ladder levels by which public sieve functions lead the private ones.

    :math:`h = \min(3, \mathrm{round}(\log_2 \alpha^{-2}))`: the privatisation noise of
    a private function's Gram entries grows like :math:`1/\alpha^2` and a ladder level
    about doubles a column's functions, so a public column may be :math:`h` levels richer
    at the same noise.

    Examples
    --------
    >>> [public_head_start(a) for a in (1.0, 0.7, 0.5, 0.3)]
    [0, 1, 2, 3]
    """
    return int(min(3, round(-2.0 * np.log2(alpha))))


def noiseless_functions(
    basis: PolynomialBasis | SieveBasis, alpha: float
) -> np.ndarray | None:
    r"""Sieve functions whose Gram entries carry no privatisation noise, or ``None``.

    Below ``alpha = 1``, the adaptive sieve's constant and purely public functions
    (:attr:`~privinfer.nuisance.sieve.SieveBasis.public_only`): their Gram entries are
    ordinary sample moments, so in the candidates whose public columns lead the noise
    guard of the outcome fits spares them
    (:func:`~privinfer.nuisance.regularize.guard_lift`). ``None`` (one guard for all) at
    ``alpha = 1``, where no entry carries privatisation noise, for a fixed polynomial
    basis, and without public functions.
    """
    if not _PUBLIC_UNGUARDED or alpha >= 1 or not isinstance(basis, SieveBasis):
        return None
    mask = basis.public_only
    return mask if mask.sum() > 1 else None


def choose_basis(
    degree: int | str | None,
    inputs: TreatmentData,
    reference: ReferenceDesign,
    alpha: float,
    cv_folds: Callable[[], IntArray],
    n_folds: int,
    owner: str,
) -> PolynomialBasis | SieveBasis:
    """The series basis: the adaptive sieve (``None`` or ``"cv"``) or a fixed polynomial degree.

    ``cv_folds`` is kept for API stability (the sieve's candidates are chosen later, from
    the cross-fitting folds' sufficient statistics).

    Raises
    ------
    DataMismatchError
        A fixed-degree basis has at least half as many functions as the smallest arm has
        rows.
    """
    if degree is None or degree == "cv":
        return sieve_basis(inputs, reference, alpha)
    spec = inputs.spec
    basis = PolynomialBasis.build(
        int(degree),
        reference.U,
        reference.weights,
        inputs.U_pub,
        spec.private_groups,
        spec.public_groups,
        spec.private_names + spec.public_names,
    )
    n_min = int(min(inputs.arm_counts))
    if basis.n_basis >= 0.5 * n_min:
        raise DataMismatchError(
            f"{owner}: the series basis has {basis.n_basis} functions but the smallest "
            f"treatment arm only {n_min} rows; lower degree={basis.degree}."
        )
    return basis


@dataclass(frozen=True)
class SeriesFits:
    r"""Cross-fitted series nuisances of one split, each with its own sieve and ridge.

    ``outcome[k]`` and ``riesz[k]`` (automatic route) are the outcome regression and the
    Riesz representer of arm ``k``, ``odds`` the ATT's odds; each holds the coefficients
    for every estimation fold (:class:`~privinfer.nuisance.regularize.CrossFitFits`).
    ``held_out`` are the per-fold statistics that scored them.
    """

    outcome: tuple[CrossFitFits, ...]
    riesz: tuple[CrossFitFits, ...]
    odds: CrossFitFits | None
    held_out: tuple[FoldFit, ...]
    n_rows: FloatArray

    def regularisation_shift(self, per_fold: bool = False) -> FloatArray:
        r"""Change of each arm's estimate (and the ATT numerator) when the fits loosen.

        With the held-out fold's statistics the one-step estimate of arm ``k`` is the
        bilinear form :math:`\psi_f(\beta,\theta) = \beta'M_f + \theta'c_f - \theta'G_f\beta`
        (and :math:`-\beta'E_f[d\varphi] - \theta_w'c_{0f} + \theta_w'G_{0f}\beta` for the ATT
        numerator, up to a constant); returned is the row-weighted mean over folds of
        :math:`\psi_f(\hat\beta,\hat\theta) - \psi_f(\tilde\beta,\tilde\theta)` with the
        tilde fits the looser comparison fits (the richest sieve and smallest ridge the CV
        cannot tell from the chosen ones,
        :func:`~privinfer.nuisance.regularize.loosest_plausible`). Zero entries where no
        Riesz fit exists (propensity route). ``per_fold``: the folds' weighted terms,
        shape ``(F, L + 1)``, which sum to the shift.
        """
        if not self.riesz:
            terms = np.zeros((len(self.held_out), len(self.outcome) + 1))
        else:
            terms = self.fold_values("coefs") - self.fold_values("loose")
        return terms if per_fold else terms.sum(axis=0)

    def fold_values(self, fit: str = "coefs") -> FloatArray:
        r"""Each held-out fold's weighted bilinear form, shape ``(F, L + 1)``.

        Row ``f``: :math:`w_f\psi_f(\beta_k, \theta_k)` per arm ``k`` and, last, the ATT
        numerator's :math:`w_f(-\beta_0'E_f[d\varphi] - \theta_w'c_{0f} +
        \theta_w'G_{0f}\beta_0)` (zero without the odds fit), for the chosen fits
        (``"coefs"``) or the looser comparison fits (``"loose"``). Needs the Riesz fits.
        """
        L = len(self.outcome)
        w = self.n_rows / self.n_rows.sum()
        out = np.zeros((len(self.held_out), L + 1))
        for g, ho in enumerate(self.held_out):
            for k in range(L):
                b = getattr(self.outcome[k], fit)[g]
                t = getattr(self.riesz[k], fit)[g]
                M = ho.e_phi if ho.e_cphi is None else ho.e_cphi[k]
                out[g, k] = w[g] * (b @ M + t @ ho.c[k] - t @ ho.G[k] @ b)
            if self.odds is not None:
                b = getattr(self.outcome[0], fit)[g]
                t = getattr(self.odds, fit)[g]
                out[g, L] = w[g] * (-b @ ho.e_dphi - t @ ho.c[0] + t @ ho.G[0] @ b)
        return out


def _flags_of(
    cands: list[IntArray] | None,
    candidates: list[IntArray] | None,
    flags: Sequence[bool] | None,
) -> list[bool] | None:
    """``flags`` (one per candidate) for the sub-list ``cands`` of ``candidates``."""
    if flags is None or cands is None or candidates is None:
        return None
    if cands is candidates:
        return list(flags)
    pos = {c.tobytes(): i for i, c in enumerate(candidates)}
    return [bool(flags[pos[c.tobytes()]]) for c in cands]


def fit_series(
    st: FoldStats,
    levels: list[object],
    mean: FloatArray,
    R: FloatArray,
    alpha: float,
    *,
    split: bool,
    candidates: list[IntArray] | None,
    ridge: float | str,
    riesz: bool,
    functional: bool,
    odds: bool,
    like: SeriesFits | None = None,
    with_loose: bool | None = None,
    interactions: Sequence[bool] | None = None,
    noiseless: np.ndarray | None = None,
    public_lead: Sequence[bool] | None = None,
    caps: tuple[Sequence[int], int] | None = None,
    guard_scale: float = 1.0,
    undersmooth_riesz: bool = True,
) -> SeriesFits:
    r"""Outcome and Riesz fits of every fold, each with its own private-CV sieve and ridge.

    The per-fold deconvolved statistics (:func:`~privinfer.models._suffstats.held_out_fits`)
    give each nuisance's private CV loss (outcome: out-of-fold squared error; Riesz:
    :math:`E[\rho^2 - 2m(\rho)]`) for every candidate sub-basis and ridge
    (:func:`~privinfer.nuisance.regularize.cv_spectral`); nothing is refitted from rows.
    ``ridge`` is ``"cv"`` or a fixed relative ridge (then the full basis is used).
    ``like``: an earlier fit on the same basis (the bootstrap's refits); each nuisance's
    CV then tries every sub-base, or with ``_REFIT_MARGIN`` set only those whose CV loss
    there came within that many fold standard errors of the best
    (:func:`plausible_candidates`).
    ``with_loose``: also fit the looser comparison fits (default: only without ``like``;
    the bootstrap asks for them when it measures the noise of the regularisation shift).
    ``interactions``: which candidates hold the sieve's interaction block; with
    ``_INTERACTION_MARGIN`` set and ``alpha < 1`` they must beat the others by that many
    fold SEs of the paired CV-loss difference.
    ``noiseless``: basis functions without privatisation noise, which the noise guard of
    the CV-ridge fits spares (:func:`noiseless_functions`) in the candidates flagged in
    ``public_lead`` (those whose public columns lead; default: every candidate); ignored
    with a fixed ridge.
    ``caps``: the largest candidate of each arm's fits and of the odds fit
    (:func:`arm_caps`); the first candidate is always kept. Default: no cap.
    ``undersmooth_riesz``: whether ``_RIESZ_UNDERSMOOTH`` applies (at ``alpha = 1``); the
    models turn it off with the kernel outcome route.
    """
    F, L = st.cnt.shape
    held = held_out_fits(st, levels, mean, R, alpha)
    n_rows = st.cnt.sum(axis=1)
    masks = [training_folds(f, F, split) for f in range(F)]
    m_mu = np.array([m[0] for m in masks])
    m_rho = np.array([m[1] for m in masks])
    fixed = None if ridge == "cv" else float(ridge)
    loose = like is None if with_loose is None else bool(with_loose)
    G = [np.stack([h.G[k] for h in held]) for k in range(L)]
    # all rows' Gram matrices: a Riesz fit may not live where its arm has no rows
    support = np.sum(G, axis=0) if _SUPPORT_RULE else None
    # the outcome and Riesz fits of arm k share G[k]: their CV spectra are computed once
    spectra = [SpectraCache() for _ in range(L)]
    margins = None
    if _INTERACTION_MARGIN is not None and interactions is not None and alpha < 1:
        margins = _INTERACTION_MARGIN * np.asarray(interactions, dtype=float)

    def capped(cap: int | None) -> tuple[list[IntArray] | None, FloatArray | None]:
        """The candidates (and their margins) with at most ``cap`` functions."""
        if candidates is None or cap is None:
            return candidates, margins
        keep = [i for i, c in enumerate(candidates) if i == 0 or c.size <= cap]
        if len(keep) == len(candidates):
            return candidates, margins
        return [candidates[i] for i in keep], None if margins is None else margins[keep]

    def fit(
        k: int, rhs: FloatArray, mask: np.ndarray, prev: CrossFitFits | None, group: str
    ) -> CrossFitFits:
        cap = None if caps is None else (caps[1] if group == "odds" else caps[0][k])
        group = "riesz" if group == "odds" else group  # the odds are a Riesz fit
        undersmoothed = (
            undersmooth_riesz
            and group == "riesz"
            and (alpha >= 1.0 or _RIESZ_UNDERSMOOTH_PRIVATE)
        )
        own, own_margins = capped(cap)
        cands = own
        if (
            _REFIT_MARGIN is not None
            and group in _REFIT_MARGIN_GROUPS
            and prev is not None
            and prev.choice is not None
            and own is not None
        ):
            cands = [own[c] for c in plausible_candidates(prev.choice, _REFIT_MARGIN)]
        gamma, directions = regularize.GUARD_WEIGHTS, regularize.GUARD_DIRECTIONS
        if group not in _GUARD_WEIGHT_FITS:
            regularize.GUARD_WEIGHTS, regularize.GUARD_DIRECTIONS = 0.0, False
        try:
            return fit_crossfit(
                G[k], rhs, n_rows, mask, candidates=cands, fixed_ridge=fixed,
                noise_share=(1.0 - alpha) * guard_scale, with_loose=loose,
                spectra_cache=spectra[k], margins=own_margins if cands is own else None,
                noiseless=noiseless if group in _SPARE_FITS else None,
                spare=_flags_of(cands, candidates, public_lead),
                support_folds=support if group == "riesz" else None,
                undersmooth=_RIESZ_UNDERSMOOTH if undersmoothed else 1.0,
                energy_budget=_RIESZ_ENERGY_BUDGET if undersmoothed else None,
            )  # fmt: skip
        finally:
            regularize.GUARD_WEIGHTS, regularize.GUARD_DIRECTIONS = gamma, directions

    def before(group: str, i: int) -> CrossFitFits | None:
        if like is None:
            return None
        if group == "odds":
            return like.odds
        return (like.outcome if group == "outcome" else like.riesz)[i]

    outcome = tuple(
        fit(k, np.stack([h.c[k] for h in held]), m_mu, before("outcome", k), "outcome")
        for k in range(L)
    )
    rz: tuple[CrossFitFits, ...] = ()
    od = None
    if riesz:
        if functional:
            rz = tuple(
                fit(k, np.stack([h.e_cphi[k] for h in held]), m_rho, before("riesz", k), "riesz")  # type: ignore[index]
                for k in range(L)
            )
        else:
            e_phi = np.stack([h.e_phi for h in held])
            rz = tuple(fit(k, e_phi, m_rho, before("riesz", k), "riesz") for k in range(L))
        if odds:
            od = fit(0, np.stack([h.e_dphi for h in held]), m_rho, before("odds", 0), "odds")
    return SeriesFits(outcome, rz, od, held, n_rows)


# -- outcome regression ------------------------------------------------------------------
@dataclass(frozen=True)
class SeriesOutcome:
    r"""Series outcome regressions :math:`\hat\mu_k = \beta_k'\varphi` of one fold."""

    betas: tuple[FloatArray, ...]
    mean: FloatArray
    outer: FloatArray

    def at(self, A: FloatArray | None, Phi: FloatArray, sl: slice) -> OutcomeElements:
        r"""Values, :math:`\bar Q\hat\mu_k = \beta_k'(a\circ m)` and :math:`\bar Q\hat\mu_k^2`."""
        return OutcomeElements(
            Phi @ np.column_stack(self.betas),
            tuple(qbar_linear(b, self.mean, A) for b in self.betas),
            tuple(qbar_quadratic(b, b, self.outer, A) for b in self.betas),
        )

    def cross(self, theta: FloatArray, k: int, A: FloatArray | None) -> FloatArray:
        r""":math:`\bar Q[(\theta'\varphi)\hat\mu_k]` per row."""
        return qbar_quadratic(theta, self.betas[k], self.outer, A)


def series_outcome(fits: SeriesFits, f: int, mean: FloatArray, outer: FloatArray) -> SeriesOutcome:
    r""":math:`\hat\beta_k` of estimation fold ``f`` (regularised :math:`G_k^{-1}c_k`)."""
    return SeriesOutcome(tuple(o.coefs[f] for o in fits.outcome), mean, outer)


@dataclass(frozen=True)
class KernelOutcome:
    r"""Kernel outcome regressions of one fold, at its held-out rows and the reference points."""

    at_rows: FloatArray
    at_ref: FloatArray
    P_ref: FloatArray
    weights: FloatArray
    #: held-out rows whose own arm's fit was floored (below alpha = 1 the denominator's
    #: noise floor, at any alpha the round-off floor: predicted by the arm's mean response)
    n_floored: int = 0

    def at(self, A: FloatArray | None, Phi: FloatArray, sl: slice) -> OutcomeElements:
        r"""Values; :math:`\bar Q\hat\mu_k`, :math:`\bar Q\hat\mu_k^2` from the reference points."""
        L = self.at_ref.shape[1]
        return OutcomeElements(
            self.at_rows[sl],
            tuple(np.asarray(self.weights @ self.at_ref[:, k]) for k in range(L)),
            tuple(np.asarray(self.weights @ self.at_ref[:, k] ** 2) for k in range(L)),
        )

    def cross(self, theta: FloatArray, k: int, A: FloatArray | None) -> FloatArray:
        r""":math:`\bar Q[(\theta'p)\hat\mu_k]` (private covariates only: equal for all rows)."""
        return np.asarray((self.P_ref @ theta * self.weights) @ self.at_ref[:, k])


def kernel_outcome(
    inputs: TreatmentData,
    train: IntArray,
    rows: IntArray,
    folds: IntArray,
    reference: ReferenceDesign,
    kernel_ref: KernelReference,
    P_ref: FloatArray,
    bandwidth: float | str,
    alpha: float,
) -> KernelOutcome:
    r"""Private Nadaraya–Watson fits of :math:`\mu(k, \cdot)` on the training rows.

    Fitted at the held-out ``rows`` and at the reference points; the latter give the
    reference terms :math:`E_{\bar Q}\hat\mu_k`, :math:`E_{\bar Q}\hat\mu_k^2` and
    :math:`E_{\bar Q}[p_j\hat\mu_k]` of the score. Bandwidth: a number, Scott's rule on
    the private spread, or private cross-validation over multiples of it, reusing the
    training rows' cross-fitting folds as CV folds.
    """
    L = inputs.n_levels
    x_eval = np.vstack([inputs.U_priv[rows], reference.U])
    at_rows = np.empty((rows.size, L))
    at_ref = np.empty((reference.n_points, L))
    n_floored = 0
    for k in range(L):
        tr = train[inputs.d[train] == k]
        h: Any = bandwidth
        cv_folds = np.unique(folds[tr], return_inverse=True)[1]
        if h == "cv" and cv_folds.max() >= 1:
            h = private_cv_kernel(
                inputs.y[tr],
                inputs.U_priv[tr],
                alpha=alpha,
                reference=kernel_ref,
                n_folds=int(cv_folds.max()) + 1,
                folds=cv_folds,
            ).choice
        elif h == "cv":
            h = "scott"
        fit = private_kernel_regression(
            inputs.y[tr],
            inputs.U_priv[tr],
            alpha=alpha,
            reference=kernel_ref,
            x_eval=x_eval,
            bandwidth=h,
            warn=False,
        )
        at_rows[:, k] = fit.predictions[: rows.size]
        at_ref[:, k] = fit.predictions[rows.size :]
        own = inputs.d[rows] == k
        n_floored += int(np.count_nonzero(fit.floored[: rows.size][own]))
    return KernelOutcome(at_rows, at_ref, P_ref, reference.weights, n_floored)


Outcome = SeriesOutcome | KernelOutcome


# -- Riesz representers ------------------------------------------------------------------
@dataclass(frozen=True)
class SeriesRiesz:
    r"""Automatic Riesz representers :math:`\theta_k` (one per level) and the ATT's odds."""

    thetas: tuple[FloatArray, ...]
    theta_w: FloatArray | None
    mean: FloatArray
    outer: FloatArray
    #: no interpolation: every reference expectation is exact in the moments
    interp_error: float = 0.0

    def _elements(
        self, theta: FloatArray, k: int, A: FloatArray | None, Phi: FloatArray, mu: Outcome
    ) -> RieszElements:
        return RieszElements(
            Phi @ theta,
            qbar_linear(theta, self.mean, A),
            mu.cross(theta, k, A),
            qbar_quadratic(theta, theta, self.outer, A),
        )

    def arm(
        self, k: int, A: FloatArray | None, Phi: FloatArray, sl: slice, mu: Outcome
    ) -> RieszElements:
        r"""Elements of :math:`\theta_k'\varphi`, the weight of arm ``k``."""
        return self._elements(self.thetas[k], k, A, Phi, mu)

    def odds(self, A: FloatArray | None, Phi: FloatArray, sl: slice, mu: Outcome) -> RieszElements:
        r"""Elements of the odds :math:`\theta_w'\varphi` (weights the control arm)."""
        assert self.theta_w is not None  # internal invariant: fitted for the ATT
        return self._elements(self.theta_w, 0, A, Phi, mu)

    def chunk(
        self,
        U_priv: FloatArray,
        A: FloatArray | None,
        Phi: FloatArray,
        sl: slice,
        mu: Outcome,
        odds: bool,
    ) -> tuple[list[RieszElements], RieszElements | None, int]:
        """Elements of every arm's weight (and the odds) on a chunk of held-out rows."""
        arms = [self.arm(k, A, Phi, sl, mu) for k in range(len(self.thetas))]
        return arms, self.odds(A, Phi, sl, mu) if odds else None, 0


def series_riesz(fits: SeriesFits, f: int, mean: FloatArray, outer: FloatArray) -> SeriesRiesz:
    r""":math:`\hat\theta_k` (regularised :math:`G_k^{-1}e`) and the odds of fold ``f``."""
    thetas = tuple(r.coefs[f] for r in fits.riesz)
    theta_w = fits.odds.coefs[f] if fits.odds is not None else None
    return SeriesRiesz(thetas, theta_w, mean, outer)


def _propensity_links(clip: float) -> list[Callable[[FloatArray], FloatArray]]:
    """Weights of the propensity route as functions of the logistic index.

    ``1/(1-pi)``, ``1/pi`` and the odds ``pi/(1-pi)``, with ``pi`` clipped to
    ``[clip, 1 - clip]``.
    """

    def pi_c(e: FloatArray) -> FloatArray:
        return np.clip(expit(e), clip, 1 - clip)

    return [
        lambda e: 1.0 / (1.0 - pi_c(e)),
        lambda e: 1.0 / pi_c(e),
        lambda e: pi_c(e) / (1 - pi_c(e)),
    ]


@dataclass(frozen=True)
class PropensityRiesz:
    r"""Inverse propensity weights of one fold from a private logistic fit, clipped.

    ``t`` is the public part of the index at the held-out rows; ``E_link[j]`` (None at
    ``alpha = 1``) holds, per held-out row, :math:`\bar Q g_j`, :math:`\bar Q[g_j p]` and
    :math:`\bar Q g_j^2` for the links :math:`g_j` of :func:`_propensity_links`.
    """

    t: FloatArray
    g_priv: FloatArray
    clip: float
    betas: tuple[FloatArray, ...]
    E_link: tuple[FloatArray, ...] | None
    interp_error: float

    def propensity(self, U_priv: FloatArray, sl: slice) -> FloatArray:
        r"""Clipped propensity :math:`\pi(x)` of the held-out rows in ``sl``."""
        return np.clip(expit(self.t[sl] + U_priv @ self.g_priv), self.clip, 1 - self.clip)

    def _elements(
        self, j: int, k: int, r: FloatArray, A: FloatArray | None, sl: slice
    ) -> RieszElements:
        if self.E_link is None:
            return RieszElements(r, 0.0, 0.0, 0.0)
        E = self.E_link[j][sl]
        eb = (E[:, 1:-1] * (A if A is not None else 1.0)) @ self.betas[k]
        return RieszElements(r, E[:, 0], eb, E[:, -1])

    def arm(self, k: int, pi: FloatArray, A: FloatArray | None, sl: slice) -> RieszElements:
        r"""Elements of :math:`1/\pi` (``k = 1``) or :math:`1/(1-\pi)` (``k = 0``)."""
        return self._elements(k, k, 1 / pi if k == 1 else 1 / (1 - pi), A, sl)

    def odds(self, pi: FloatArray, A: FloatArray | None, sl: slice) -> RieszElements:
        r"""Elements of the odds :math:`\pi/(1-\pi)` (weights the control arm)."""
        return self._elements(2, 0, pi / (1 - pi), A, sl)

    def chunk(
        self,
        U_priv: FloatArray,
        A: FloatArray | None,
        Phi: FloatArray,
        sl: slice,
        mu: Outcome,
        odds: bool,
    ) -> tuple[list[RieszElements], RieszElements | None, int]:
        """Elements of both arms' weights (and the odds), and the number of clipped rows."""
        pi = self.propensity(U_priv, sl)
        n_clipped = int(np.sum((pi <= self.clip) | (pi >= 1 - self.clip)))
        arms = [self.arm(k, pi, A, sl) for k in (0, 1)]
        return arms, self.odds(pi, A, sl) if odds else None, n_clipped


def propensity_riesz(
    inputs: TreatmentData,
    train: IntArray,
    rows: IntArray,
    reference: ReferenceDesign,
    P_ref: FloatArray,
    betas: tuple[FloatArray, ...],
    clip: float,
    alpha: float,
    fold: int,
) -> PropensityRiesz:
    """Private logistic propensity on the training rows, with its reference expectations."""
    U_ref = reference.U
    fit = fit_private_logit(
        (inputs.d[train] == 1).astype(float),
        inputs.U_pub[train],
        inputs.U_priv[train],
        U_ref,
        reference.weights,
        alpha,
        label=f"private logistic propensity, fold {fold}",
    )
    err = fit.interp_error
    g_pub, g_priv = fit.split(inputs.U_pub.shape[1])
    t = np.column_stack([np.ones(rows.size), inputs.U_pub[rows]]) @ g_pub
    E_link = None
    if alpha < 1.0:
        eta_ref = U_ref @ g_priv
        P_ref1 = np.column_stack([np.ones(U_ref.shape[0]), P_ref])
        blocks = []
        for link in _propensity_links(clip):
            E, e = index_expectation(t, eta_ref, P_ref1, reference.weights, link, grid_size=_GRID)
            E2, e2 = index_expectation(
                t,
                eta_ref,
                P_ref1[:, :1],
                reference.weights,
                lambda v, g=link: g(v) ** 2,
                grid_size=_GRID,
            )
            blocks.append(np.column_stack([E, E2]))
            err = max(err, e, e2)
        E_link = tuple(blocks)
    return PropensityRiesz(t, g_priv, clip, betas, E_link, err)
