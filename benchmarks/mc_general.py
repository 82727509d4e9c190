"""Monte Carlo study of every shipped functional and nuisance route.

Functionals: ATE, ATT, the potential-outcome mean E[Y(1)] (PrivatePOM); nuisance routes:
series outcome regression with the default degree, series degree chosen by private
cross-validation (``degree="cv"``), and the private Nadaraya-Watson outcome regression
(``outcome_model="kernel"``); all with the automatic Riesz representer. Designs
``nonlinear`` and ``heterogeneous`` of ``_designs.py`` (two continuous private covariates),
alpha in {1, 0.6}, n = 8000.

Usage::

    python benchmarks/mc_general.py --quick     # 60 replications per cell
    python benchmarks/mc_general.py             # 300 replications per cell
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))
from _designs import FORMULAS, mechanism, simulate, truth

import privinfer as pi

ROUTES = {
    "series": {},
    "series, degree=cv": {"degree": "cv"},
    "kernel": {"outcome_model": "kernel"},
}


def _truth_pom1(design: str) -> float:
    rng = np.random.default_rng(99)
    big = simulate(design, 1_000_000, rng)
    x1, x2 = big["x1"].to_numpy(), big["x2"].to_numpy()
    if design == "nonlinear":
        return float(np.mean(1.0 + np.sin(2 * x1) + x2**2 + 0.5 * x1 * x2))
    return float(np.mean((1.0 + x1 + 0.5 * x2**2) + x1 + x2 + x1**2))


def one_cell(args: tuple) -> dict:
    design, functional, route, alpha, n, reps, seed = args
    rng = np.random.default_rng(seed)
    mech = mechanism(design, alpha)
    target = _truth_pom1(design) if functional == "E[Y(1)]" else truth(design, functional)
    model = {"ATE": pi.PrivateATE, "ATT": pi.PrivateATT, "E[Y(1)]": pi.PrivatePOM}[functional]
    est, se = [], []
    for _ in range(reps):
        released = mech.privatize(simulate(design, n, rng), publish_undeclared=True,
                                  random_state=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
            res = model.from_formula(FORMULAS[design], released, mechanism=mech,
                                     **ROUTES[route]).fit(random_state=rng)
        name = "E[Y(1)]" if functional == "E[Y(1)]" else functional
        est.append(float(res.params[name]))
        se.append(float(res.bse[name]))
    est, se = np.array(est), np.array(se)
    return {
        "design": design, "functional": functional, "route": route, "alpha": alpha, "n": n,
        "reps": reps, "bias": est.mean() - target, "bias/SE": (est.mean() - target) / se.mean(),
        "MC sd": est.std(ddof=1), "mean SE": se.mean(), "SE/MC sd": se.mean() / est.std(ddof=1),
        "coverage": float(np.mean(np.abs(est - target) <= 1.959964 * se)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--n", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    reps = args.reps or (60 if args.quick else 300)
    cells, seed = [], 100
    for design in ("nonlinear", "heterogeneous"):
        for functional in ("ATE", "ATT", "E[Y(1)]"):
            for route in ROUTES:
                for alpha in (1.0, 0.6):
                    seed += 1
                    cells.append((design, functional, route, alpha, args.n, reps, seed))
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(one_cell, cells))
    pd.set_option("display.width", 200)
    print(f"Functionals x nuisance routes ({reps} reps per cell, {time.perf_counter() - t0:.0f} s)")
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
