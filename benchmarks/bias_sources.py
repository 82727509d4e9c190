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
  guard still floors them);
* ``largest``: every fit on the largest sieve candidate (the CV chooses the ridge only);
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
* ``rows-per-function=R``: the sieve's size cap at ``R`` effective rows per function
  instead of 10 (``privinfer.models._nuisances._SIEVE_ROWS_PER_BASIS``).

Each fit gets a fresh copy of the replication's fitting stream. ``validate.py`` fits the
estimands of a replication one after another from one ``SeedSequence``, and a fit spawns
its folds' and bootstrap's streams from it, so its second and third fits (the ATT and the
potential-outcome means after the ATE) draw other folds than a fit on its own: their
figures here can differ from ``validate.py``'s for that reason alone (``u_propensity``'s
ATT at ``alpha = 1``, :math:`n = 1000`, 30 releases: coverage 0.90 here, 0.77 there).

Variants combine with ``+`` (``largest+ridge-max=0.01+guard-outcome=0.3``). Used on the
eleventh round's ``wiggle_confound`` (validation page of the user guide):

    python benchmarks/bias_sources.py --design wiggle_confound --alpha 0.7 --reps 16 \
        --variants guard-outcome=0.3,guard-riesz=0.3,ridge-max=0.03,largest,split,folds=10

Usage:  python benchmarks/bias_sources.py --design D --alpha A [--estimand ATE]
            [--n 4000] [--reps 16] [--seed 1101] [--variants v1,v2,...] [--jobs 2]
"""

from __future__ import annotations

import argparse
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


def _parse(variant: str) -> dict[str, Any]:
    """The probe settings of ``variant`` (``"default"``: none)."""
    out: dict[str, Any] = {}
    if variant == "default":
        return out
    for part in variant.split("+"):
        key, _, value = part.partition("=")
        if key in ("guard-outcome", "guard-riesz", "ridge-max", "rows-per-function",
                   "plausible-se", "riesz-loose"):
            out[key] = float(value)
        elif key == "folds":
            out["n_folds"] = int(value)
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
        cands = kw.get("candidates")
        if probe.get("largest") and cands is not None:
            kw["candidates"] = [cands[-1]]
            kw["margins"] = None
            if kw.get("spare") is not None:
                kw["spare"] = [kw["spare"][-1]]
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


def _one(task: tuple[str, str, float, int, int, int, str]) -> list[tuple[float, ...]]:
    design, estimand, alpha, n, seed, rep, variant = task
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
    res = model.fit(random_state=np.random.default_rng(s_fit))
    # fits with comparison fits: the estimate's own, and bootstrap refits that redo them
    top = float(np.mean(_AT_TOP)) if _AT_TOP else float("nan")
    ci = res.conf_int()
    return [
        (res.params[p] - truths[p], res.bse[p], ci.loc[p].iloc[0] - truths[p],
         ci.loc[p].iloc[1] - truths[p], top)
        for p in res.params.index
    ]  # fmt: skip


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
    args = parser.parse_args()
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
            tasks = [(args.design, args.estimand, args.alpha, args.n, args.seed, r, v)
                     for r in range(args.reps)]
            out = np.asarray(list(pool.map(_one, tasks)))  # (reps, params, 5)
            for j in range(out.shape[1]):
                err, se, lo, hi, top = out[:, j].T
                sd = err.std(ddof=1)
                print(f"{v:44}{j:>8}{err.mean() / se.mean():>+9.2f}{sd:>9.4f}"
                      f"{se.mean() / sd:>9.2f}{np.mean((lo <= 0) & (hi >= 0)):>7.2f}"
                      f"{np.mean(hi - lo):>9.3f}{np.nanmean(top):>6.2f}", flush=True)
    print(f"time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
