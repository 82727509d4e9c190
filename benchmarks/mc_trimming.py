"""Monte Carlo study of the public trimming rule (``privinfer.PublicTrimming``, issue 14).

On designs whose overlap problem sits (at least partly) in a public covariate, each
replication draws a release exactly as ``validate.py`` does (same seeds), fits the rule
of Crump, Hotz, Imbens and Mitnik (2009) on the public columns of the release, and fits
``PrivateATE`` twice: on all rows (target: the population ATE) and on the rows the rule
keeps (target: the ATE of the subpopulation the rule defines, computed for that
replication's rule over a population draw of two million rows). Designs with a
multi-valued treatment (``public_arms``) fit the multinomial rule (keep the rows whose
every level has public probability at least gamma) and report every effect
``ATE[k vs 0]``. ``--estimand ATT`` fits
``PrivateATT`` and trims one side (``side="upper"``: propensities near 1 leave the
treated without controls); its targets weight the effects by the true propensity. Per
cell it prints the
bias in SEs, SE / Monte Carlo sd of the errors, the coverage of the 95% interval, the mean
interval length and the share of rows kept, for both fits side by side.

Usage::

    python benchmarks/mc_trimming.py --quick            # 12 replications per cell
    python benchmarks/mc_trimming.py --reps 60 --jobs 2 --out trimming.csv
    python benchmarks/mc_trimming.py --estimand ATT --designs public_tail_arm
    python benchmarks/mc_trimming.py --designs public_arms      # three treatment levels
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import validate as V

import privinfer as pi

#: designs with a public confounder behind (part of) the limited overlap
DESIGNS = ("public_overlap", "public_tail_arm", "public_arms")
POPULATION = 2_000_000


def _formula_public(design: Any) -> str:
    """``d ~ public covariates`` of a design (linear terms; splines for continuous ones)."""
    sample = design.covariates(1000, np.random.default_rng(0))
    terms = []
    for c in design.public_covariates:
        if c in design.model_options.values():  # a cluster label or weights: not a confounder
            continue
        many = sample[c].nunique() > 10
        terms.append(f"bs({c}, df=4, extrapolation='clip')" if many else c)
    return "d ~ " + (" + ".join(terms) if terms else "1")


def run_cell(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Replications of one (design, alpha, estimand): rows for the full and the trimmed fit."""
    from threadpoolctl import threadpool_limits

    name, alpha, n, seed = task["design"], task["alpha"], task["n"], task["seed"]
    estimand = task.get("estimand", "ATE")
    model, side = (pi.PrivateATT, "upper") if estimand == "ATT" else (pi.PrivateATE, "both")
    design = V.DESIGNS[name]
    pop = design.covariates(POPULATION, np.random.default_rng(777))
    params = design.param_names(estimand)  # ["ATE"], ["ATT"] or ["ATE[1 vs 0]", ...]
    base = design.mean(pop, 0)
    taus = {p: design.mean(pop, k + 1) - base for k, p in enumerate(params)}
    # the ATT weights the effects by the propensity (a population, not a sample, target)
    weight = design.propensity(pop) if estimand == "ATT" else np.ones(len(pop))
    targets_full = {p: float(np.sum(weight * t) / np.sum(weight)) for p, t in taus.items()}
    formula = _formula_public(design)
    rows = []
    with threadpool_limits(limits=1):
        for rep in task["reps"]:
            mech, released, s_fit, _ = V.replication(seed, name, alpha, n, rep)
            rule = pi.PublicTrimming.from_formula(formula, released).fit(side=side)
            kept = rule.apply(released)
            k = rule.keep(pop)
            targets_trim = {
                p: float(np.sum(weight[k] * t[k]) / np.sum(weight[k])) for p, t in taus.items()
            }
            for label, data, truths in (
                ("full", released, targets_full),
                ("trimmed", kept, targets_trim),
            ):
                t0 = time.perf_counter()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    res = model.from_formula(design.formula, data, mechanism=mech).fit(
                        random_state=np.random.default_rng(s_fit)
                    )
                ci = res.conf_int()
                for p in params:
                    rows.append(
                        {
                            "design": name, "alpha": alpha, "n": n, "rep": rep, "fit": label,
                            "estimand": p,
                            "truth": truths[p], "est": float(res.params[p]),
                            "se": float(res.bse[p]), "lower": float(ci.loc[p, "lower"]),
                            "upper": float(ci.loc[p, "upper"]), "kept": len(data) / n,
                            "gamma": rule.threshold,
                            "warned": ";".join(sorted({w.category.__name__ for w in caught})),
                            "seconds": time.perf_counter() - t0,
                        }
                    )  # fmt: skip
    return rows


def summarise(reps: pd.DataFrame) -> pd.DataFrame:
    """Bias / SE, SE / MC sd, coverage and CI length per design x estimand x alpha x fit."""
    out = []
    for (d, e, a, f), g in reps.groupby(["design", "estimand", "alpha", "fit"], sort=True):
        err = (g.est - g.truth).to_numpy()
        se = g.se.to_numpy()
        cover = np.mean((g.lower <= g.truth) & (g.truth <= g.upper))
        out.append(
            {
                "design": d, "estimand": e, "alpha": a, "fit": f, "reps": len(g),
                "truth": float(g.truth.mean()), "bias/SE": err.mean() / se.mean(),
                "SE/MCsd": se.mean() / err.std(ddof=1), "coverage": cover,
                "±MCSE": np.sqrt(0.95 * 0.05 / len(g)),
                "CI len": float((g.upper - g.lower).mean()), "kept": float(g.kept.mean()),
                "gamma": float(g.gamma.mean()),
                "warned": float(np.mean(g.warned.str.len() > 0)),
            }
        )  # fmt: skip
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--alphas", default="1,0.7,0.5")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--seed", type=int, default=401)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--estimand", default="ATE", choices=("ATE", "ATT"))
    ap.add_argument("--quick", action="store_true", help="12 replications per cell")
    ap.add_argument("--out", default=None, help="CSV of the summary (and <out>_reps.csv)")
    a = ap.parse_args(argv)
    reps = 12 if a.quick else a.reps
    tasks = []
    for d in a.designs.split(","):
        for alpha in (float(x) for x in a.alphas.split(",")):
            for lo in range(0, reps, 10):
                tasks.append(
                    {"design": d, "alpha": alpha, "n": a.n, "seed": a.seed, "estimand": a.estimand,
                     "reps": list(range(lo, min(lo + 10, reps)))}
                )  # fmt: skip
    t0 = time.perf_counter()
    if a.jobs > 1:
        with ProcessPoolExecutor(a.jobs) as ex:
            rows = [r for part in ex.map(run_cell, tasks) for r in part]
    else:
        rows = [r for t in tasks for r in run_cell(t)]
    reps_df = pd.DataFrame(rows)
    table = summarise(reps_df)
    pd.set_option("display.width", 200)
    print(table.round(3).to_string(index=False))
    print(f"\n{reps_df.groupby(['design', 'alpha']).rep.nunique().sum()} replications in "
          f"{time.perf_counter() - t0:.0f} s")
    if a.out:
        table.to_csv(a.out, index=False)
        reps_df.to_csv(a.out.replace(".csv", "_reps.csv"), index=False)


if __name__ == "__main__":
    main()
