r"""Does the estimate drift when the release is privatised again? A SIMEX probe (issue 14).

The alpha-identity composes: releasing the released covariates once more through an
alpha-identity with keep-probability :math:`a` and the same reference gives exactly a
release at :math:`\alpha a` (a row keeps its true value with probability :math:`\alpha a`,
otherwise it holds a fresh reference draw). Anyone holding a release can therefore
simulate releases with *more* privatisation noise, at no privacy cost (post-processing),
and watch what the estimator does as the noise grows: the idea of simulation
extrapolation (SIMEX; Cook and Stefanski, 1994) for measurement error.

A regularisation bias that the privatisation noise causes (fits shrunk in the directions
the noise swamps) grows with the noise. With :math:`\lambda(\alpha) = 1/\alpha^2 - 1` (the
variance inflation of a deconvolved moment), the script fits, per release, a line through
:math:`(\lambda(\alpha), \hat\theta)` and :math:`(\lambda(\alpha a_j), \bar\theta_j)`, the
mean of ``--draws`` fits on re-privatised copies at each level :math:`a_j` of
``--levels``, and extrapolates it to :math:`\lambda = 0` (no privatisation):
:math:`\hat b = \text{slope}\cdot\lambda(\alpha)` estimates the part of the estimate's bias
that the privatisation noise causes. Per cell (design x alpha x parameter) it prints, in
units of the mean standard error: the bias of the estimates, the mean drift
:math:`\bar\theta_j - \hat\theta` at each level, the mean of :math:`\hat b` with its Monte
Carlo SE, its spread over releases, the share of releases with :math:`|\hat b| > 0.5` SE
(how often a rule on it would fire), and the bias of :math:`\hat\theta - \hat b` (the
SIMEX-corrected estimate) with the spread of the corrected estimates over that of the
uncorrected ones.

This is a research probe of the validation suite (the package does not run it): it
asks whether the drift under extra noise sees the confident regularisation bias of the
held-out ``wiggle_confound`` below ``alpha = 1``, which neither the bias bound nor the
fold-block bootstrap sees (validation page of the user guide). The fits use
``variance="influence"`` (the estimates are the package defaults'; only the standard
errors skip the bootstrap, for speed), so the SE units are the influence-function ones.
Releases and fitting streams are ``validate.py``'s at the same ``--seed``.

Usage::

    python benchmarks/noise_sensitivity.py --quick   # wiggle_confound and kink_mixed, 6 reps
    python benchmarks/noise_sensitivity.py --designs wiggle_confound,kink_mixed,nsw_censored \
        --alphas 0.7 --reps 16 --estimand POM --jobs 2 --out sens.csv
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

# the sibling modules, and this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import validate as V
from validate_designs import privatize

import privinfer as pi

#: |b| above this many standard errors counts as "a rule would fire"
FIRE = 0.5


def noise_level(alpha: float) -> float:
    """:math:`\\lambda(\\alpha) = 1/\\alpha^2 - 1`, the variance inflation of deconvolution."""
    return 1.0 / alpha**2 - 1.0


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame's columns without its release description (so it can be released again)."""
    out = pd.DataFrame({c: frame[c].to_numpy() for c in frame.columns})
    out.attrs = {}
    return out


def _fit(design: Any, estimand: str, data: pd.DataFrame, mech: pi.AlphaIdentity, rng: Any):
    options = {**design.model_options, "variance": "influence"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = (
            V.MODELS[estimand]
            .from_formula(design.formula, data, mechanism=mech, **options)
            .fit(random_state=rng)
        )
    return res.params.to_numpy(), res.bse.to_numpy()


def extrapolated_bias(alpha: float, levels: list[float], est: float, means: list[float]) -> float:
    """The line through (lambda, estimate) points, extrapolated: slope * lambda(alpha)."""
    lam = np.array([noise_level(alpha)] + [noise_level(alpha * a) for a in levels])
    y = np.array([est, *means])
    slope = np.polyfit(lam, y, 1)[0]
    return float(slope * noise_level(alpha))


def replication(task: dict[str, Any]) -> list[dict[str, Any]]:
    """One release: the estimate, the re-privatised fits' means and the extrapolated bias."""
    from threadpoolctl import threadpool_limits

    name, alpha, n, rep = task["design"], task["alpha"], task["n"], task["rep"]
    levels, draws, estimand = task["levels"], task["draws"], task["estimand"]
    design = V.DESIGNS[name]
    with threadpool_limits(1):
        mech, released, s_fit, truths = V.replication(task["seed"], name, alpha, n, rep)
        names = design.param_names(estimand)
        s_own, s_more = s_fit.spawn(2)
        est, se = _fit(design, estimand, released, mech, np.random.default_rng(s_own))
        plain = _plain(released)
        means = np.zeros((len(levels), len(names)))
        for j, (a, s_level) in enumerate(zip(levels, s_more.spawn(len(levels)), strict=True)):
            again, to = (
                pi.AlphaIdentity(a, design.reference()),
                pi.AlphaIdentity(alpha * a, design.reference()),
            )
            fits = []
            for s_draw in s_level.spawn(draws):
                s_rel, s_f = s_draw.spawn(2)
                more = _plain(privatize(again, plain, design.public, np.random.default_rng(s_rel)))
                fits.append(_fit(design, estimand, more, to, np.random.default_rng(s_f))[0])
            means[j] = np.mean(fits, axis=0)
    rows = []
    for p, param in enumerate(names):
        b = extrapolated_bias(alpha, levels, est[p], list(means[:, p]))
        row = {
            "design": name, "alpha": alpha, "n": n, "rep": rep, "param": param,
            "truth": truths[param], "est": est[p], "se": se[p], "b": b,
        }  # fmt: skip
        for j, a in enumerate(levels):
            row[f"mean_{a:g}"] = means[j, p]
        rows.append(row)
    return rows


def summarise(reps: pd.DataFrame, levels: list[float]) -> pd.DataFrame:
    """Per cell: bias, drifts, the extrapolated bias and the corrected estimate, in SE."""
    out = []
    for (design, alpha, param), g in reps.groupby(["design", "alpha", "param"], sort=False):
        se = g["se"].mean()
        err = g["est"] - g["truth"]
        corrected = err - g["b"]
        row = {
            "design": design, "alpha": alpha, "param": param, "reps": len(g),
            "bias/SE": err.mean() / se,
        }  # fmt: skip
        for a in levels:
            row[f"drift {a:g}/SE"] = (g[f"mean_{a:g}"] - g["est"]).mean() / se
        row["b/SE"] = g["b"].mean() / se
        row["b mcse"] = g["b"].std(ddof=1) / np.sqrt(len(g)) / se
        row["b sd/SE"] = g["b"].std(ddof=1) / se
        row["fires"] = float((g["b"].abs() > FIRE * g["se"]).mean())
        row["corrected bias/SE"] = corrected.mean() / se
        row["sd ratio"] = corrected.std(ddof=1) / err.std(ddof=1)
        out.append(row)
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--designs", default="wiggle_confound,kink_mixed,nsw_censored,overlap_s")
    ap.add_argument("--alphas", default="0.7")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--reps", type=int, default=16)
    ap.add_argument("--levels", default="0.85,0.7", help="extra keep-probabilities a_j")
    ap.add_argument("--draws", type=int, default=4, help="re-privatised copies per level")
    ap.add_argument("--estimand", default="POM", choices=sorted(V.MODELS))
    ap.add_argument("--seed", type=int, default=1101)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="two designs, 6 reps")
    ap.add_argument("--out", default=None, help="CSV of the cells (and <out>_reps.csv)")
    args = ap.parse_args(argv)
    designs = args.designs.split(",")
    reps = args.reps
    if args.quick:
        designs, reps = ["wiggle_confound", "kink_mixed"], 6
    levels = [float(a) for a in args.levels.split(",")]
    if not all(0.0 < a < 1.0 for a in levels):
        raise SystemExit("--levels: keep-probabilities strictly between 0 and 1")
    tasks = [
        {"design": d, "alpha": float(a), "n": args.n, "rep": r, "seed": args.seed,
         "levels": levels, "draws": args.draws, "estimand": args.estimand}
        for d in designs for a in args.alphas.split(",") for r in range(reps)
    ]  # fmt: skip
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.jobs) as ex:
        for k, out in enumerate(ex.map(replication, tasks), 1):
            rows += out
            print(f"\r{k}/{len(tasks)} releases", end="", file=sys.stderr)
    print(file=sys.stderr)
    table = summarise(pd.DataFrame(rows), levels)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.round(2).to_string(index=False))
    print(f"{len(tasks)} releases x {1 + len(levels) * args.draws} fits in "
          f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
    if args.out:
        table.to_csv(args.out, index=False)
        pd.DataFrame(rows).to_csv(args.out.replace(".csv", "") + "_reps.csv", index=False)


if __name__ == "__main__":
    main()
