r"""Where does a design's bias come from? The same releases refitted with one piece changed.

For one design of the validation suite, one estimand and one ``alpha``, every replication
(the releases and fitting streams of ``validate.py`` at the same ``--seed``) is fitted
with the package's defaults and with each requested variant of its nuisance stage, and
the script prints, per variant and parameter (its position in the results' ``params``:
for ``POM`` 0 is :math:`E[Y(0)]`, 1 is :math:`E[Y(1)]`), the bias over the mean standard
error, the Monte Carlo sd of the estimates, SE / MC sd, the coverage, the mean interval
length, and the share of the fits' CV choices (outcome and Riesz fits, all arms and
folds' choices of one estimate) that took the largest sieve candidate their arm's cap
allows (``top``). The variants
change the private cross-validated series fits (``privinfer.nuisance.regularize.
fit_crossfit``) as the models call them; they are research probes, not options:

* ``guard-outcome=S`` / ``guard-riesz=S``: the noise guard of the outcome (Riesz) fits
  at ``S`` times its size (``0``: no guard);
* ``ridge-max=R``: relative ridges of at most ``R`` on the CV grid (both fits; the noise
  guard still floors them); ``outcome-ridge-max=R`` / ``riesz-ridge-max=R``: the same
  for the outcome (Riesz) fits only;
* ``largest``: every fit on the largest sieve candidate, the one with the most functions
  its arm's cap allows (the CV chooses the ridge only; before 2026-12-07's second session
  the probe took the last candidate listed, which is the top level *without* the
  interaction block whenever that level's "+ interactions" candidate is over the cap);
* ``split``: ``split_nuisances=True`` (outcome and Riesz fits on separate halves);
* ``folds=K``: ``n_folds=K``;
* ``plausible-se=K``: the bias bound's comparison fit may have a CV loss up to ``K``
  fold standard errors above the chosen fit's (instead of 1;
  :func:`privinfer.nuisance.regularize.loosest_plausible`);
* ``nested-cv``: each estimation fold's sieve and ridge chosen by a CV on the other
  folds only (the package chooses once, on all folds, so the choice has seen the
  held-out fold it is evaluated on); the comparison fits stay the package's;
* ``riesz-loose=S``: the bias bound's comparison keeps the chosen outcome fits and
  loosens the Riesz fits only: the chosen candidate at the smallest positive ridge of
  the grid and the noise guard at ``S`` times its size (the shift is then the outcome
  fit's error times the Riesz fits' change);
* ``influence``: ``variance="influence"`` (no fold-block bootstrap; the estimates are
  the same, only faster);
* ``balance=M``: each Riesz fit moved to solve the Riesz equations along ``M`` pieces
  of its arm's outcome fit (the outcome coefficients cut into ``M`` blocks; ATE and
  POM), so the remainder loses its part along them (:func:`_balance`);
* ``rows-per-function=R``: the sieve's size cap at ``R`` effective rows per function
  instead of 10 (``privinfer.models._nuisances._SIEVE_ROWS_PER_BASIS``);
* ``bump=L``: the sieve's interaction block also holds the products of two columns'
  bumps of the same level, up to level ``L`` (``privinfer.nuisance.sieve.BUMP_BY_LINEAR
  = "bump"`` with ``BUMP_BY_BUMP_LEVEL = L``);
* ``triples=K``: the interaction block also holds products of three columns
  (``privinfer.nuisance.sieve.TRIPLES = K``, ``linear`` or ``bump``);
* ``index=L``: single-index atoms up to ladder level ``L`` (``P_2``, ``P_3`` and bumps
  of linear indices of the private columns fitted on the release:
  ``privinfer.nuisance.sieve.INDEX_ATOMS = True`` with ``INDEX_TOP = L``; the default
  adds them at ``alpha = 1`` only), ``index=0`` none at any alpha.

Each fit gets a fresh copy of the replication's fitting stream. ``validate.py`` fits the
estimands of a replication one after another from one ``SeedSequence``, and a fit spawns
its folds' and bootstrap's streams from it, so its second and third fits (the ATT and the
potential-outcome means after the ATE) draw other folds than a fit on its own: their
figures here can differ from ``validate.py``'s for that reason alone (``u_propensity``'s
ATT at ``alpha = 1``, :math:`n = 1000`, 30 releases: coverage 0.90 here, 0.77 there).

With ``--oracle`` (``ATE`` and ``POM``, binary or multi-valued designs) every fit is also
taken apart against the design's known nuisances, on a large draw of the population: the
fitted outcome regressions :math:`\hat\mu_k` and Riesz weights :math:`\hat g_k` of the
first split's folds, evaluated at the true covariates, give the one-step estimate's
remainder given its fits,

.. math:: R_k = E[\pi_k(X)\,(g_k - \hat g_k)(\hat\mu_k - \mu_k)], \qquad
          g_k = 1/\pi_k,

(averaged over the folds; the held-out mean of the scores has expectation
:math:`E[Y(k)] + R_k` given the fits). The script prints, per arm and in units of the
parameter's mean SE, the mean remainder (``rem``), its part that the fits' average over
releases already carries (``sys``: the product of the fold-averaged fits' mean errors)
and the rest (``noise``: the covariance of their release-to-release errors, which two
fits from the same noisy statistics share), the remainder the chosen sieves would leave
if each fit were the population projection onto its own columns (``proj``), and the
:math:`\pi_k`-weighted root mean squared errors of the two fits and of the two
projections. A ``rem`` near the bias says the bias is the product of the nuisance errors;
``proj`` near zero says the sieves could represent both nuisances and the product comes
from how they were fitted (``bias_by_region.py`` splits the same remainder by bins of a
covariate, for the chosen and the comparison fits). ``expo`` (no oracle needed) is the
part of the estimate that rests on the outcome fit where the Riesz fit leaves the
held-out moments unbalanced, :math:`\sum_f w_f\hat\beta_{kf}'(M_f -
G_{kf}\hat\theta_{kf})`, in SE: the outcome fit's errors in those directions reach the
estimate in proportion to it. The oracle draw is ``ORACLE_SIZE`` covariate rows (seed
``ORACLE_SEED``, unweighted; hidden columns enter the true propensity and means).

Variants combine with ``+`` (``largest+ridge-max=0.01+guard-outcome=0.3``). Used on the
eleventh round's ``wiggle_confound`` (validation page of the user guide):

    python benchmarks/bias_sources.py --design wiggle_confound --alpha 0.7 --reps 16 \
        --variants guard-outcome=0.3,guard-riesz=0.3,ridge-max=0.03,largest,split,folds=10

and with the oracle, on the potential-outcome means (the eleventh round's finding):

    python benchmarks/bias_sources.py --design wiggle_confound --estimand POM --alpha 0.7 \
        --reps 16 --oracle

Usage:  python benchmarks/bias_sources.py --design D --alpha A [--estimand ATE]
            [--n 4000] [--reps 16] [--seed 1101] [--variants v1,v2,...] [--jobs 2]
            [--oracle]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

# the sibling modules, and this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import validate as V
from bias_by_region import Capture, design_values


def _parse(variant: str) -> dict[str, Any]:
    """The probe settings of ``variant`` (``"default"``: none)."""
    out: dict[str, Any] = {}
    if variant == "default":
        return out
    for part in variant.split("+"):
        key, _, value = part.partition("=")
        if key in ("guard-outcome", "guard-riesz", "ridge-max", "rows-per-function",
                   "plausible-se", "riesz-loose", "outcome-ridge-max", "riesz-ridge-max"):
            out[key] = float(value)
        elif key in ("balance", "bump", "index"):
            out[key] = int(value)
        elif key == "folds":
            out["n_folds"] = int(value)
        elif key == "triples":
            out[key] = value
        elif key in ("largest", "split", "nested-cv", "influence"):
            out[key] = True
        else:
            raise ValueError(f"unknown variant {part!r}")
    return out


#: per fit of this worker: whether its CV chose the largest candidate it was offered
_AT_TOP: list[bool] = []


def _install(probe: dict[str, Any]) -> None:
    """Wrap the models' series fits with the probe (in this worker process)."""
    import privinfer.models._nuisances as nuisances
    from privinfer.nuisance.regularize import DEFAULT_RIDGE_GRID, fit_crossfit

    def wrapped(*args: Any, **kw: Any) -> Any:
        # the Riesz (and odds) fits are the ones the models give their support folds
        riesz = kw.get("support_folds") is not None
        share = probe.get("guard-riesz" if riesz else "guard-outcome")
        if share is not None:
            kw["noise_share"] = kw["noise_share"] * share
        if "ridge-max" in probe:
            kw["ridges"] = tuple(r for r in DEFAULT_RIDGE_GRID if r <= probe["ridge-max"])
        own = probe.get("riesz-ridge-max" if riesz else "outcome-ridge-max")
        if own is not None:
            kw["ridges"] = tuple(r for r in DEFAULT_RIDGE_GRID if r <= own)
        cands = kw.get("candidates")
        if probe.get("largest") and cands is not None:
            # the candidate with the most functions (the last one listed can be a larger
            # level without the interaction block, when that level's "+ interactions"
            # candidate is over the cap)
            top = max(range(len(cands)), key=lambda i: (cands[i].size, i))
            kw["candidates"] = [cands[top]]
            kw["margins"] = None
            if kw.get("spare") is not None:
                kw["spare"] = [kw["spare"][top]]
        if probe.get("nested-cv"):
            return _nested(fit_crossfit, *args, **kw)
        out = fit_crossfit(*args, **kw)
        offered = kw.get("candidates")
        if out.choice is not None and offered is not None and kw.get("with_loose", True):
            sizes = [len(c) for c in offered]
            _AT_TOP.append(sizes[out.choice.candidate] == max(sizes))
        if "riesz-loose" in probe and out.choice is not None:
            if not riesz:
                return dataclasses.replace(out, loose=out.coefs.copy())
            smallest = min(r for r in DEFAULT_RIDGE_GRID if r > 0)
            loose_kw = {**kw, "with_loose": False, "spectra_cache": None, "margins": None,
                        "noise_share": kw["noise_share"] * probe["riesz-loose"],
                        "ridges": (smallest,)}
            if cands is not None:
                c = out.choice.candidate
                loose_kw["candidates"] = [kw["candidates"][c]]
                if kw.get("spare") is not None:
                    loose_kw["spare"] = [kw["spare"][c]]
            loose = fit_crossfit(*args, **loose_kw).coefs
            return dataclasses.replace(out, loose=loose)
        return out

    nuisances.fit_crossfit = wrapped
    if "balance" in probe:
        import privinfer.models._onestep as onestep

        plain_series = onestep.fit_series

        def balanced(*args: Any, **kw: Any) -> Any:
            return _balance(plain_series(*args, **kw), probe["balance"], bool(probe.get("split")))

        onestep.fit_series = balanced
    if "plausible-se" in probe:
        import privinfer.nuisance.regularize as regularize

        plain = regularize.loosest_plausible
        k = probe["plausible-se"]

        def looser(choice: Any, loosen: float = regularize.LOOSEN) -> tuple[int, float]:
            # the fold SEs scaled by k widen the tolerance loss + fold_se to loss + k fold_se
            cols = {key: np.asarray(v) for key, v in choice.columns.items()}
            cols["fold_se"] = k * cols["fold_se"].astype(float)
            return plain(dataclasses.replace(choice, columns=cols), loosen)

        regularize.loosest_plausible = looser
    if "rows-per-function" in probe:
        nuisances._SIEVE_ROWS_PER_BASIS = probe["rows-per-function"]
    from privinfer.nuisance import sieve

    if "bump" in probe:
        sieve.BUMP_BY_LINEAR = "bump"
        sieve.BUMP_BY_BUMP_LEVEL = probe["bump"]
    if "triples" in probe:
        sieve.TRIPLES = probe["triples"]
    if "index" in probe:  # 0: none at any alpha; L > 0: at every alpha, up to level L
        sieve.INDEX_ATOMS = probe["index"] > 0
        sieve.INDEX_TOP = probe["index"] or sieve.INDEX_TOP


def _balance(fits: Any, m: int, split: bool = False) -> Any:
    r"""The Riesz fits of ``fits`` moved to balance ``m`` pieces of the outcome fits.

    For estimation fold ``f`` and arm ``k``, with :math:`G, e` the training folds' Gram
    matrix and Riesz moments, the nonzero coefficients of :math:`\hat\beta` are cut into
    ``m`` contiguous blocks, :math:`D` holds :math:`\hat\beta` restricted to each block
    (one column per block), and :math:`\hat\theta + D\gamma` with
    :math:`D'GD\gamma = D'(e - G\hat\theta)` solves the Riesz equations along those
    directions: the one-step estimate's remainder then loses its part along the pieces of
    the outcome fit (zero if the outcome fit's error lay in their span). With ``split``
    the Riesz fit's own training folds (half of the others) give :math:`G, e`.
    """
    from privinfer.models._crossfit import training_folds

    if not fits.riesz or fits.odds is not None:
        return fits
    w = np.asarray(fits.n_rows, dtype=float)
    F = len(fits.held_out)
    riesz = []
    for k, rz in enumerate(fits.riesz):
        coefs = rz.coefs.copy()
        for f in range(F):
            tw = np.where(training_folds(f, F, split)[1], w, 0.0)
            tw = tw / tw.sum()
            G = sum(t * h.G[k] for t, h in zip(tw, fits.held_out, strict=True))
            e = sum(t * h.e_phi for t, h in zip(tw, fits.held_out, strict=True))
            beta, theta = fits.outcome[k].coefs[f], coefs[f]
            idx = np.flatnonzero(beta)
            blocks = [b for b in np.array_split(idx, min(m, idx.size)) if b.size]
            D = np.zeros((beta.size, len(blocks)))
            for j, b in enumerate(blocks):
                D[b, j] = beta[b]
            gamma = np.linalg.lstsq(D.T @ G @ D, D.T @ (e - G @ theta), rcond=1e-10)[0]
            coefs[f] = theta + D @ gamma
        riesz.append(dataclasses.replace(rz, coefs=coefs))
    return dataclasses.replace(fits, riesz=tuple(riesz))


def _nested(fit: Any, G: Any, rhs: Any, n_rows: Any, masks: Any, **kw: Any) -> Any:
    """``fit`` (``fit_crossfit``) with each fold's choice made by a CV on the others."""
    full = fit(G, rhs, n_rows, masks, **kw)
    cands = kw.get("candidates")
    if full.choice is None or cands is None:
        return full
    F = G.shape[0]
    coefs = full.coefs.copy()
    for f in range(F):
        keep = np.arange(F) != f
        inner_kw = {**kw, "with_loose": False, "spectra_cache": None}
        for name in ("const_folds", "support_folds"):
            if kw.get(name) is not None:
                inner_kw[name] = kw[name][keep]
        inner = fit(G[keep], rhs[keep], n_rows[keep], ~np.eye(F - 1, dtype=bool), **inner_kw)
        c, rel = inner.choice.candidate, inner.choice.relative_ridge
        fixed_kw = {**kw, "candidates": [cands[c]], "ridges": (rel,), "margins": None,
                    "with_loose": False, "spectra_cache": None}
        if kw.get("spare") is not None:
            fixed_kw["spare"] = [kw["spare"][c]]
        coefs[f] = fit(G, rhs, n_rows, masks, **fixed_kw).coefs[f]
    return dataclasses.replace(full, coefs=coefs)


#: covariate rows of the oracle's population draw, and its seed
ORACLE_SIZE = 50_000
ORACLE_SEED = 20261205


def _exposure(fits: Any) -> np.ndarray:
    r"""Per arm, :math:`\sum_f w_f\hat\beta_{kf}'(M_f - G_{kf}\hat\theta_{kf})`: the part of
    the one-step estimate that rests on the outcome fit where the Riesz fit leaves the
    held-out moments unbalanced (zero if :math:`\hat\theta` solved the Riesz equations):
    the models' bilinear form (``SeriesFits.fold_values``) less its weighting part
    :math:`\sum_f w_f\hat\theta_{kf}'c_{kf}`."""
    w = fits.n_rows / fits.n_rows.sum()
    L = len(fits.outcome)
    weighting = sum(
        w[g] * np.array([fits.riesz[k].coefs[g] @ ho.c[k] for k in range(L)])
        for g, ho in enumerate(fits.held_out)
    )
    return fits.fold_values("coefs")[:, :L].sum(axis=0) - weighting


def _oracle(design: Any, model: Any, basis: Any, fits: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Per arm: remainder, fit and projection errors; and the fold-averaged fits' errors.

    ``basis`` and ``fits`` are the sieve and the series fits of the model's first split
    (:class:`bias_by_region.Capture`). Returns ``(stats, errors)``: ``stats`` of shape
    ``(L, 6)`` holds per arm the remainder :math:`R_k`, the remainder of the chosen
    sieves' projections, the :math:`\pi_k`-weighted RMS errors of the outcome and Riesz
    fits and of their projections; ``errors`` of shape ``(L, 3, ORACLE_SIZE)`` the
    fold-averaged outcome and Riesz errors and :math:`\pi_k` at the oracle rows.
    """
    rng = np.random.default_rng(ORACLE_SEED)
    X = design.covariates(ORACLE_SIZE, rng)
    ps = np.asarray(design.propensity(X), dtype=float)
    L = len(fits.outcome)
    arm_p = ps if ps.ndim == 2 else np.column_stack([1.0 - ps, ps])
    # a frame the model's formula reads: the true covariates (declared as kept: alpha = 1,
    # so the release checks pass), every arm present
    d = np.arange(ORACLE_SIZE) % L
    frame = X.drop(columns=list(design.hidden)).assign(y=0.0, d=d)
    plain = type(model.mechanism)(1.0, model.mechanism.reference)
    big = type(model).from_formula(design.formula, frame, mechanism=plain)
    Phi = design_values(basis, big)
    stats, errors = np.zeros((L, 6)), np.zeros((L, 3, ORACLE_SIZE))
    for k in range(L):
        pk, mu = arm_p[:, k], np.asarray(design.mean(X, k), dtype=float)
        g, W = 1.0 / pk, np.sqrt(pk)

        def wnorm(v: np.ndarray, pk: np.ndarray = pk) -> float:
            return float(np.sqrt(np.mean(pk * v**2)))

        def projection(f: np.ndarray, coefs: np.ndarray, W: np.ndarray = W) -> np.ndarray:
            cols = np.flatnonzero(coefs != 0)
            c = np.linalg.lstsq(Phi[:, cols] * W[:, None], f * W, rcond=None)[0]
            return Phi[:, cols] @ c

        per_fold = []
        B, T = fits.outcome[k].coefs, fits.riesz[k].coefs
        F = B.shape[0]
        for f in range(F):
            em = Phi @ B[f] - mu
            eg = g - Phi @ T[f]
            pm = projection(mu, B[f]) - mu
            pg = g - projection(g, T[f])
            per_fold.append((np.mean(pk * em * eg), np.mean(pk * pm * pg), wnorm(em),
                             wnorm(eg), wnorm(pm), wnorm(pg)))
            errors[k, 0] += em / F
            errors[k, 1] += eg / F
        errors[k, 2] = pk
        stats[k] = np.mean(per_fold, axis=0)
    return stats, errors


def _one(task: tuple[str, str, float, int, int, int, str, bool]) -> tuple[Any, ...]:
    design, estimand, alpha, n, seed, rep, variant, oracle = task
    warnings.simplefilter("ignore")
    probe = _parse(variant)
    _install(probe)
    options: dict[str, Any] = {}
    if probe.get("split"):
        options["split_nuisances"] = True
    if "n_folds" in probe:
        options["n_folds"] = probe["n_folds"]
    if probe.get("influence"):
        options["variance"] = "influence"
    mech, released, s_fit, truths = V.replication(seed, design, alpha, n, rep)
    d = V.DESIGNS[design]
    model = V.MODELS[estimand].from_formula(d.formula, released, mechanism=mech, **options)
    _AT_TOP.clear()
    with Capture() if oracle else contextlib.nullcontext() as cap:
        res = model.fit(random_state=np.random.default_rng(s_fit))
    # fits with comparison fits: the estimate's own, and bootstrap refits that redo them
    top = float(np.mean(_AT_TOP)) if _AT_TOP else float("nan")
    ci = res.conf_int()
    rows = [
        (res.params[p] - truths[p], res.bse[p], ci.loc[p].iloc[0] - truths[p],
         ci.loc[p].iloc[1] - truths[p], top)
        for p in res.params.index
    ]  # fmt: skip
    if not oracle:
        return rows, None
    stats, errors = _oracle(d, model, cap.basis, cap.fits)  # the first split's fits
    return rows, (stats, errors, _exposure(cap.fits))


def _print_oracle(out: np.ndarray, oracle: list[Any], estimand: str) -> None:
    """The oracle's decomposition per arm, in units of the parameter's mean SE."""
    stats = np.asarray([o[0] for o in oracle])  # (reps, L, 6)
    errors = np.asarray([o[1] for o in oracle])  # (reps, L, 3, N)
    reps, L = stats.shape[:2]
    expo = np.asarray([o[2] for o in oracle])  # (reps, L)
    print(f"{'':8}{'arm':>4}{'rem':>8}{'sys':>8}{'noise':>8}{'proj':>8}"
          f"{'|mu err|':>10}{'|g err|':>9}{'|mu-Pmu|':>10}{'|g-Pg|':>8}{'expo':>7}")
    for k in range(L):
        # the SE of this arm's mean (POM) or of the effect the arms enter (ATE)
        j = k if estimand == "POM" else max(k - 1, 0)
        se = out[:, j, 1].mean()
        em, eg, pk = errors[:, k, 0], errors[:, k, 1], errors[0, k, 2]
        mem, meg = em.mean(axis=0), eg.mean(axis=0)
        fold_avg = np.mean(pk * em * eg, axis=1).mean()
        sys_part = float(np.mean(pk * mem * meg))
        rem = stats[:, k, 0].mean()
        print(f"{'':8}{k:>4}{rem / se:>+8.2f}{sys_part / se:>+8.2f}"
              f"{(fold_avg - sys_part) * reps / (reps - 1) / se:>+8.2f}"
              f"{stats[:, k, 1].mean() / se:>+8.2f}"
              + "".join(f"{v:>{w}.3f}" for v, w in zip(stats[:, k, 2:].mean(axis=0),
                                                         (10, 9, 10, 8), strict=True))
              + f"{expo[:, k].mean() / se:>+7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", required=True)
    parser.add_argument("--estimand", default="ATE", help="ATE, ATT or POM")
    parser.add_argument("--alpha", type=float, required=True)
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--reps", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1101, help="validate.py's seed")
    parser.add_argument("--variants", default="", help="comma list (default first)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--oracle", action="store_true",
                        help="the remainder of the fits against the design's nuisances")
    args = parser.parse_args()
    if args.oracle and args.estimand not in ("ATE", "POM"):
        parser.error("--oracle needs --estimand ATE or POM (the ATT's odds weight differs)")
    variants = ["default", *[v for v in args.variants.split(",") if v]]
    for v in variants:
        _parse(v)  # fail early on a typo
    start = time.perf_counter()
    print(f"{args.design} {args.estimand} alpha={args.alpha:g} n={args.n} "
          f"{args.reps} replications (seed {args.seed})")
    print(f"{'variant':44}{'param':>8}{'bias/SE':>9}{'MC sd':>9}{'SE/MCsd':>9}"
          f"{'cover':>7}{'CI len':>9}{'top':>6}")
    with ProcessPoolExecutor(args.jobs) as pool:
        for v in variants:
            tasks = [(args.design, args.estimand, args.alpha, args.n, args.seed, r, v,
                      args.oracle) for r in range(args.reps)]
            got = list(pool.map(_one, tasks))
            out = np.asarray([g[0] for g in got])  # (reps, params, 5)
            for j in range(out.shape[1]):
                err, se, lo, hi, top = out[:, j].T
                sd = err.std(ddof=1)
                # general formats: designs in raw units (dollars) keep their columns apart
                print(f"{v:44}{j:>8}{err.mean() / se.mean():>+9.2f}{sd:>9.4g}"
                      f"{se.mean() / sd:>9.2f}{np.mean((lo <= 0) & (hi >= 0)):>7.2f}"
                      f"{np.mean(hi - lo):>9.4g}{np.nanmean(top):>6.2f}", flush=True)
            if args.oracle:
                _print_oracle(out, [g[1] for g in got], args.estimand)
    print(f"time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
