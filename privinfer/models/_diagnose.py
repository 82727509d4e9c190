r"""Diagnostics of a fitted treatment model: reference error, overlap, Gram repairs.

Each function reads the model's options and the state of its cross-fits
(:class:`~privinfer.models._splitfit.SplitFit`) and returns the
:class:`~privinfer.results.Diagnostics` record or issues the named warnings
(:class:`~privinfer.exceptions.OverlapWarning`,
:class:`~privinfer.exceptions.IndefiniteGramWarning` for a last-resort eigenvalue floor,
:class:`~privinfer.exceptions.FewEffectiveRowsWarning` for sampling weights that leave
few effective rows, shared with :class:`~privinfer.PrivateGMM`), pointed at the user's
call.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from privinfer._typing import FloatArray, IntArray
from privinfer._validation import user_stacklevel
from privinfer.exceptions import FewEffectiveRowsWarning, IndefiniteGramWarning, OverlapWarning
from privinfer.inversion import ReferenceMoments
from privinfer.models._splitfit import SplitFit
from privinfer.nuisance.series import GramRepair
from privinfer.results import Diagnostics

if TYPE_CHECKING:
    from privinfer.models._onestep import TreatmentModel

__all__ = [
    "MIN_ARM_ROWS",
    "arms_missing_from_levels",
    "diagnose",
    "effective_rows_note",
    "riesz_moments",
    "riesz_reference_moments",
    "warn_few_weighted_rows",
    "warn_repairs_and_clipping",
    "weights_n_eff_fact",
]

#: Riesz second moments above this flag weak overlap (1 / DoubleML's default clip).
OVERLAP_LIMIT = 100.0
#: Fewer effective rows than this behind a Riesz representer, :math:`n / E\rho^2` (Kish's
#: effective sample size of its weights), flag overlap too weak for the sample size; and
#: behind the public sampling weights (:func:`warn_few_weighted_rows`), weights too uneven.
#: Measured on the validation suite at ``alpha = 1``: ``overlap_s`` (propensities down to
#: 0.03; about 155 effective rows at n = 1000) has heavy-tailed errors and standard errors
#: 30% below the Monte Carlo spread at n = 1000 and passes at n = 4000 (about 620); the
#: other designs have 300 or more at n = 1000 and pass.
MIN_EFFECTIVE_ROWS = 200.0


#: Fewer (estimated) rows of a treatment level than this inside a level of a binary or
#: categorical covariate flag a level that the treatment level does not reach.
MIN_ARM_ROWS = 5.0


def _level_counts(names: tuple[str, ...], groups: tuple[int, ...], U: FloatArray,
                  d: IntArray, n_levels: int) -> tuple[list[str], FloatArray]:
    """Rows of every treatment level in every level of the 0/1-coded covariate groups.

    A group of dummy columns (a factor's treatment coding) gives one level per column and
    its base level (every dummy zero); a single 0/1 column gives its two values. Returns
    the labels and the counts, shape ``(n_levels, len(labels))``. The column counts come
    from one product with the treatment's indicator matrix, so no copy of the design is
    made (a 30-level factor on a million rows stays cheap).
    """
    if U.shape[1] == 0:
        return [], np.zeros((n_levels, 0))
    # 0/1 columns: within [0, 1] and sum of squares equal to sum (u^2 < u inside (0, 1));
    # exact in floating point for 0/1 values, and no n x p temporary
    def zero_one(V: FloatArray) -> np.ndarray:
        # within [0, 1] with the sum of squares equal to the sum (u^2 < u inside (0, 1)):
        # exact in floating point for 0/1 values, and whole-array passes, no temporary
        return ((V.min(axis=0) >= 0.0) & (V.max(axis=0) <= 1.0)
                & (np.einsum("ij,ij->j", V, V) == V.sum(axis=0)))

    # a continuous column shows itself in the first rows: designs without 0/1 columns
    # cost nothing more
    binary = zero_one(U[:1000])
    if not binary.any():
        return [], np.zeros((n_levels, 0))
    binary &= zero_one(U)
    arm_rows = np.bincount(d, minlength=n_levels).astype(float)
    onehot = np.zeros((d.size, n_levels))
    onehot[np.arange(d.size), d] = 1.0
    ones = onehot.T @ U  # (n_levels, columns): rows of each arm with the column at 1
    labels: list[str] = []
    counts: list[FloatArray] = []
    for g in dict.fromkeys(groups):
        cols = [j for j, gj in enumerate(groups) if gj == g]
        if not binary[cols].all():
            continue
        names_g = [names[j] for j in cols]
        base = arm_rows - ones[:, cols].sum(axis=1)
        if np.any(base < 0.0):
            continue  # overlapping columns: not the dummies of one factor
        if len(cols) == 1:
            labels += [f"{names_g[0]} == 1", f"{names_g[0]} == 0"]
            counts += [ones[:, cols[0]], base]
        else:
            labels += [*names_g, f"the base level of {names_g[0].split('[')[0]}"]
            counts += [*(ones[:, j] for j in cols), base]
    if not labels:
        return [], np.zeros((n_levels, 0))
    return labels, np.column_stack(counts)


def arms_missing_from_levels(model: TreatmentModel) -> list[tuple[str, str, float, float]]:
    r"""Levels of 0/1-coded covariates that some treatment level (almost) never reaches.

    For every level of a factor (or value of a binary column), the rows of each treatment
    level in it, counted where the release shows them: public columns, and private ones
    at ``alpha = 1``. Returns ``(treatment level, covariate level, rows of the treatment
    level there, rows there in all)`` wherever the first is below :data:`MIN_ARM_ROWS`
    while the level itself holds at least twice as many rows. There the nuisance fits can
    only extrapolate from other levels (a ridge keeps the representer finite, so the Riesz
    moments do not show it), and the effects in the level are not estimated but assumed.

    Private levels below ``alpha = 1`` are left to the check of the Riesz values at the
    reference draws (:func:`diagnose`): their counts can only be estimated by
    :math:`Q_X^{-1}`, and those estimates are too noisy for a rule per level (on the
    validation design ``factor_12`` at ``alpha = 0.5``, :math:`n = 4000`, a level with 38
    controls was estimated to have -2). Empty for a Dask frame (its rows stay in
    partitions).
    """
    x = model.inputs
    if x.totals is not None:
        return []
    spec = x.spec
    found = []
    parts = [(spec.public_names, spec.public_groups, x.U_pub)]
    if model.mechanism.alpha == 1.0:
        parts.insert(0, (spec.private_names, spec.private_groups, x.U_priv))
    for names, groups, U in parts:
        labels, counts = _level_counts(names, groups, U, x.d, x.n_levels)
        totals = counts.sum(axis=0)
        for k, j in zip(*np.nonzero(counts < MIN_ARM_ROWS), strict=True):
            if totals[j] >= 2 * MIN_ARM_ROWS:
                found.append((str(x.levels[k]), labels[j], float(counts[k, j]),
                              float(totals[j])))
    return found


def warn_arms_missing_from_levels(model: TreatmentModel) -> str | None:
    """An :class:`OverlapWarning` (and a summary note) for :func:`arms_missing_from_levels`."""
    found = arms_missing_from_levels(model)
    if not found:
        return None
    shown = "; ".join(
        f"treatment level {arm!r} has {count:.0f} row(s) where {label} (of {total:.0f})"
        for arm, label, count, total in found[:4]
    )
    more = f" (and {len(found) - 4} more)" if len(found) > 4 else ""
    warnings.warn(
        f"{model._name}: few or no rows of a treatment level in a covariate level: "
        f"{shown}{more}. There the nuisance fits extrapolate from other levels, so the "
        "effects in that level are assumed, not estimated, and the interval does not "
        "account for it. Restrict the rows by a public rule to levels where every "
        "treatment level occurs, or merge the level.",
        OverlapWarning,
        stacklevel=user_stacklevel(),
    )
    return (f"Few or no rows of a treatment level in {len(found)} covariate level(s): "
            "effects there extrapolated.")


def _fmt(moments: dict[str, float]) -> str:
    """``{'rho[0]': 2.21e+07, 'rho[1]': 2.95e+03}``: three significant digits each."""
    return "{" + ", ".join(f"{k!r}: {v:.3g}" for k, v in moments.items()) + "}"


def diagnose(
    model: TreatmentModel,
    reps: list[SplitFit],
    names: list[str],
    ref: ReferenceMoments,
    est: FloatArray,
) -> Diagnostics:
    """The diagnostics record of a fit; issues the overlap and Gram-repair warnings."""
    o, alpha = model.options, model.mechanism.alpha
    first = reps[0]
    errors: dict[str, float] = {}
    notes: list[str] = []
    if o.outcome_model == "kernel":
        notes.append("Kernel outcome regression: reference error not decomposed.")
        floored = max(r.kernel_floored for r in reps)
        if floored:
            notes.append(
                f"Kernel outcome regression: {floored} held-out row(s) had a kernel "
                "denominator below its floor (too few training rows of their treatment "
                "level nearby) and were predicted by that level's mean response; a larger "
                "kernel_bandwidth gives fewer."
            )
    elif o.riesz == "auto" and not ref.exact:
        assert first.terms is not None
        scale = (1.0 - alpha) / alpha / first.n
        errors = model._reference_errors(first.terms, first.contrast, ref, scale, names)
    elif o.riesz == "auto":
        errors = dict.fromkeys(names, 0.0)
    else:
        notes.append(
            "Reference error of the propensity route not decomposed; index-expectation "
            f"interpolation error <= {max(r.interp_err for r in reps):.2g}."
        )
    r2m = riesz_moments(model, first)
    r2ref = riesz_reference_moments(model, first)
    if any(v > OVERLAP_LIMIT for v in r2m.values() if np.isfinite(v)):
        msg = (
            f"{model._name}: the estimated Riesz second moments {_fmt(r2m)} exceed "
            f"{OVERLAP_LIMIT:g}: "
            "weak overlap between treatment levels (propensities near 0 or 1 somewhere in "
            "the covariates' range); estimates may be unstable. Consider restricting the "
            "rows, by a rule on public columns, to where every treatment level occurs "
            "(pi.PublicTrimming: the rule of Crump et al., 2009, on a public propensity)."
        )
        warnings.warn(msg, OverlapWarning, stacklevel=user_stacklevel())
        notes.append("Weak overlap: large Riesz second moment.")
    elif alpha < 1.0 and any(v > OVERLAP_LIMIT for v in r2ref.values() if np.isfinite(v)):
        warnings.warn(
            f"{model._name}: the Riesz representers are large where the reference puts "
            f"mass ({_fmt(r2ref)}, above {OVERLAP_LIMIT:g}): private overlap is poor, and the "
            "privatisation noise of the estimate is driven by these values. Consider a "
            "reference closer to the data, trimming rows by a public rule (pi.PublicTrimming "
            "on a public propensity, or public bounds) or a larger alpha.",
            OverlapWarning,
            stacklevel=user_stacklevel(),
        )
        notes.append("Poor private overlap: large Riesz values at the reference draws.")
    else:
        few = effective_rows_note(model, r2m)
        if few:
            notes.append(few)
    no_overlap = warn_arms_missing_from_levels(model)
    if no_overlap:
        notes.append(no_overlap)
    repairs = tuple(g for r in reps for g in r.repairs)
    n_clipped = int(sum(r.n_clipped for r in reps))
    warn_repairs_and_clipping(model, repairs, n_clipped, first.n * len(reps))
    if first.indefinite:
        # Below alpha = 1 a deconvolved Gram matrix of a rich sieve is indefinite in
        # nearly every fit: the noise guard's ridges handle it by design (no floor), so
        # it is a note, not a warning. Only a last-resort floor warns (above).
        smallest = min(v for _, v in first.indefinite)
        notes.append(
            f"{len(first.indefinite)} deconvolved Gram matrix(es) indefinite (smallest "
            f"eigenvalue {smallest:.3g}); regularised by ridges above the noise level."
        )
    spread = {nm: float(est[:, j].max() - est[:, j].min()) for j, nm in enumerate(names)}
    return Diagnostics(
        gram_repairs=repairs,
        n_clipped=n_clipped,
        clip=o.clip if o.riesz == "propensity" else None,
        outcome_r2=float(np.median([r.r2 for r in reps])),
        riesz_second_moment=r2m,
        reference_error=errors,
        reference_points=ref.n_points,
        reference_exact=ref.exact,
        rep_spread=spread,
        notes=tuple(notes),
        riesz_reference_moment=r2ref,
    )


def riesz_reference_moments(model: TreatmentModel, first: SplitFit) -> dict[str, float]:
    r""":math:`\frac1n\sum_i 1\{d_i=k\}E_{\bar Q}\rho_k(V_i, \cdot)^2` (0 where not fitted).

    The influence value of a row is :math:`(s - (1-\alpha)\bar Q s)/\alpha`, and
    :math:`\bar Q s` evaluates the Riesz representer where the reference puts mass:
    private overlap lives at the reference draws (Kormos and van der Vaart, 2026).
    """
    riesz_names = [f"rho[{v}]" for v in model.inputs.levels]
    if model._odds:
        riesz_names.append("w (ATT)")
    if model.options.riesz != "auto":
        return {}
    return {
        nm: float(v)
        for nm, v in zip(riesz_names, first.riesz_ref2[: len(riesz_names)], strict=True)
    }


def riesz_moments(model: TreatmentModel, first: SplitFit) -> dict[str, float]:
    r"""Private estimates of :math:`E\rho^2` per Riesz representer (overlap check)."""
    riesz_names = [f"rho[{v}]" for v in model.inputs.levels]
    if model._odds:
        riesz_names.append("w (ATT)")
    r2m = {
        nm: float(v) for nm, v in zip(riesz_names, first.riesz2[: len(riesz_names)], strict=True)
    }
    if model.options.riesz == "propensity" and model._odds:
        r2m["w (ATT)"] = float("nan")  # not reported on the propensity route
    return r2m


def effective_rows_note(model: TreatmentModel, r2m: dict[str, float]) -> str:
    r"""Warn when a Riesz representer has few effective rows; the note for the summary.

    :math:`n_{\mathrm{eff}} = n / \hat E[\rho^2]` is Kish's effective sample size of the
    representer's weights: for the arm mean :math:`E[Y(1)]`, :math:`\rho = D/\pi(X)` and
    :math:`n / E[1/\pi(X)]` rows carry the information of the weighted treated rows.
    With limited overlap and few such rows the one-step estimate is a weighted mean of a
    handful of heavily weighted rows, its errors are heavy-tailed and the
    influence-function standard error understates its spread, although no Riesz second
    moment is large in itself (:data:`OVERLAP_LIMIT`). Below
    :data:`MIN_EFFECTIVE_ROWS` an :class:`~privinfer.exceptions.OverlapWarning` names the
    number of rows that would lift it there; returns ``""`` when no warning is due.

    Examples
    --------
    >>> class M:
    ...     _name = "PrivatePOM"
    ...     class inputs:
    ...         n_obs = 1000
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     note = effective_rows_note(M, {"rho[0]": 2.0, "rho[1]": 6.5})
    >>> note
    'Limited overlap for n: 154 effective rows behind rho[1].'
    >>> "n >= 1300" in str(w[0].message)
    True
    """
    n = float(model.inputs.n_obs)
    finite = {k: v for k, v in r2m.items() if np.isfinite(v) and v > 0}
    if not finite:
        return ""
    worst = max(finite, key=finite.__getitem__)
    n_eff = n / finite[worst]
    if n_eff >= MIN_EFFECTIVE_ROWS:
        return ""
    need = int(np.ceil(MIN_EFFECTIVE_ROWS * finite[worst]))
    warnings.warn(
        f"{model._name}: the Riesz representer {worst} has E[rho^2] = {finite[worst]:.3g}, "
        f"so only n / E[rho^2] = {n_eff:.0f} effective rows carry the estimate (Kish's "
        "effective sample size of its weights): overlap is limited for this sample size, "
        "the estimate rests on a few heavily weighted rows, and its errors can be "
        "heavier-tailed than the interval assumes. About n >= "
        f"{need} rows ({MIN_EFFECTIVE_ROWS:.0f} effective rows) would lift it; or restrict "
        "the rows, by a rule on public columns, to where every treatment level occurs.",
        OverlapWarning,
        stacklevel=user_stacklevel(),
    )
    return f"Limited overlap for n: {n_eff:.0f} effective rows behind {worst}."


def weights_n_eff_fact(n_eff: float, n_obs: int) -> tuple[str, str]:
    r"""The summary's line on Kish's :math:`n_{\mathrm{eff}}` of the sampling weights.

    Examples
    --------
    >>> weights_n_eff_fact(1334.6, 1500)
    ('Kish n_eff (weights):', '1335 of 1500 rows')
    """
    return ("Kish n_eff (weights):", f"{n_eff:.0f} of {n_obs} rows")


def warn_few_weighted_rows(owner: str, weights: str, n_eff: float, n_obs: int) -> None:
    r"""Warn when the sampling weights leave few effective rows.

    :math:`n_{\mathrm{eff}} = (\sum_i w_i)^2 / \sum_i w_i^2` (Kish, 1965;
    :func:`~privinfer.models._inputs.kish_n_eff`) is the number of equally weighted rows
    that carry the information of the weighted ones. Below :data:`MIN_EFFECTIVE_ROWS` a
    few heavily weighted rows carry the estimate and the standard error, estimated from
    the same rows, understates its spread: a
    :class:`~privinfer.exceptions.FewEffectiveRowsWarning` names the number of rows,
    :math:`200\, n / n_{\mathrm{eff}}`, that would give 200 effective rows at the same
    spread of the weights.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_few_weighted_rows("PrivateATE", "wt", 50.0, 1000)
    >>> "n >= 4000" in str(w[0].message)
    True
    """
    if n_eff >= MIN_EFFECTIVE_ROWS:
        return
    need = int(np.ceil(MIN_EFFECTIVE_ROWS * n_obs / max(n_eff, 1.0)))
    warnings.warn(
        f"{owner}: the sampling weights {weights!r} leave Kish's effective sample size "
        f"n_eff = (sum w)^2 / sum w^2 = {n_eff:.1f} of the {n_obs} rows (Kish, 1965), "
        f"below {MIN_EFFECTIVE_ROWS:.0f}: a few heavily weighted rows carry the estimate, "
        "and its standard error, estimated from those same rows, is too small and noisy. "
        "Check the weights for outliers and trim or cap extreme ones; at this spread of "
        f"the weights about n >= {need} rows would be needed. Read the interval as "
        "indicative.",
        FewEffectiveRowsWarning,
        stacklevel=user_stacklevel(),
    )


def warn_repairs_and_clipping(
    model: TreatmentModel, repairs: tuple[GramRepair, ...], n_clipped: int, n_rows: int
) -> None:
    flagged = [g for g in repairs if g.min_eigenvalue < 0 or g.ill_conditioned]
    if flagged:
        warnings.warn(
            f"{model._name}: {len(flagged)} deconvolved Gram matrix(es) were indefinite or "
            "near-singular (smallest eigenvalue "
            f"{min(g.min_eigenvalue for g in repairs):.3g}); eigenvalues were floored "
            "(last resort). See results.diagnostics.gram_repairs.",
            IndefiniteGramWarning,
            stacklevel=user_stacklevel(),
        )
    if model.options.riesz == "propensity" and n_clipped > 0.01 * n_rows:
        warnings.warn(
            f"{model._name}: {n_clipped} released propensity value(s) hit the clip "
            f"{model.options.clip:g}.",
            OverlapWarning,
            stacklevel=user_stacklevel(),
        )
