"""Width of the default (bootstrap) standard error on a benign design below alpha = 1.

The regression-test design of the treatment snapshots: two private covariates
(``x1 = 2 Beta(2, 2) - 1``, ``x2 = 2 Beta(1.5, 3) - 1``) under U(-1, 1) references, a
logistic propensity ``0.2 + 0.8 x1 - 0.6 x2``, outcome ``(1 + x1) d + sin(2 x1) + x2^2 +
N(0, 1)``, so ``E[Y(0)] = E[x2^2]``, ``E[Y(1)] = 1 + E[x2^2]`` and ATE = 1. Each
replication draws fresh data, releases it at ``--alpha`` and fits ``PrivatePOM`` and
``PrivateATE`` twice on the same release: with the default ``variance="auto"`` (the
fold-block bootstrap below ``n alpha^2 = 20000``, never below the influence standard
error) and with ``variance="influence"``, from the same seed: the estimates are the
same (checked), and the table gives
bias / SE, SE / Monte Carlo sd and coverage of the 95% interval for both standard
errors. No peer: the point is the default against the influence function on the same
fits.

Usage: ``python benchmarks/bootstrap_width.py [--quick] [--reps 40] [--n 2400]
[--alpha 0.8] [--jobs 2] [--seed 0]``.
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
from scipy import stats

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import privinfer as pi

#: E[x2^2] for x2 = 2 B - 1, B ~ Beta(1.5, 3).
EX2 = float(stats.beta(1.5, 3).expect(lambda b: (2 * b - 1) ** 2))
TRUTH = {"E[Y(0)]": EX2, "E[Y(1)]": 1.0 + EX2, "ATE": 1.0}


def _data(n: int, rng: np.random.Generator) -> pd.DataFrame:
    x1 = 2 * rng.beta(2, 2, n) - 1
    x2 = 2 * rng.beta(1.5, 3, n) - 1
    d = (rng.random(n) < 1 / (1 + np.exp(-(0.2 + 0.8 * x1 - 0.6 * x2)))).astype(int)
    y = (1.0 + x1) * d + np.sin(2 * x1) + x2**2 + rng.normal(size=n)
    return pd.DataFrame({"y": y, "d": d, "x1": x1, "x2": x2})


def replication(args: tuple[int, int, float, int]) -> list[dict]:
    """One release, four fits: (POM, ATE) x (auto, influence)."""
    from threadpoolctl import threadpool_limits

    seed, n, alpha, rep = args
    ss = np.random.SeedSequence([seed, rep])
    s_data, s_rel, s_fit = ss.spawn(3)
    mech = pi.AlphaIdentity(
        alpha, {"x1": pi.reference.Uniform(-1, 1), "x2": pi.reference.Uniform(-1, 1)}
    )
    raw = _data(n, np.random.default_rng(s_data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = mech.privatize(raw, public=["y", "d"], random_state=np.random.default_rng(s_rel))
    # an int seed: a SeedSequence (or a generator made from one) is advanced by the fits
    # that spawn from it, so a second fit would get other folds
    fit_seed = int(s_fit.generate_state(1)[0])
    rows = []
    for model in (pi.PrivatePOM, pi.PrivateATE):
        for variance in ("auto", "influence"):
            with warnings.catch_warnings(), threadpool_limits(1):
                warnings.simplefilter("ignore")
                res = model.from_formula(
                    "y ~ d | x1 + x2", rel, mechanism=mech, variance=variance
                ).fit(random_state=fit_seed)
            for name in res.params.index:
                rows.append(
                    {
                        "rep": rep,
                        "param": str(name),
                        "variance": variance,
                        "est": float(res.params[name]),
                        "se": float(res.bse[name]),
                    }
                )
    return rows


def summarise(reps: pd.DataFrame) -> pd.DataFrame:
    """Bias / SE, SE / MC sd and coverage per parameter and standard-error rule."""
    out = []
    for (param, variance), g in reps.groupby(["param", "variance"], sort=False):
        err = g["est"].to_numpy() - TRUTH[param]
        se = g["se"].to_numpy()
        out.append(
            {
                "param": param,
                "variance": variance,
                "R": len(g),
                "bias/SE": err.mean() / se.mean(),
                "SE/MCsd": se.mean() / err.std(ddof=1),
                "cover": float(np.mean(np.abs(err) <= 1.959963984540054 * se)),
                "mean SE": se.mean(),
                "MC sd": err.std(ddof=1),
            }
        )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 replications")
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--n", type=int, default=2400)
    parser.add_argument("--alpha", type=float, default=0.8)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the replications here (CSV)")
    args = parser.parse_args(argv)
    reps = 8 if args.quick else args.reps
    if not 0 < args.alpha < 1:
        parser.error("--alpha must be in (0, 1): at alpha = 1 the default is the influence SE")
    tasks = [(args.seed, args.n, args.alpha, r) for r in range(reps)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as ex:
        rows = [row for out in ex.map(replication, tasks) for row in out]
    reps_df = pd.DataFrame(rows)
    est = reps_df.pivot_table(index=["rep", "param"], columns="variance", values="est")
    if not np.allclose(est["auto"], est["influence"], rtol=1e-9, atol=1e-12):
        raise RuntimeError("the two fits of a release differ: they must share their streams")
    if args.out:
        reps_df.to_csv(args.out, index=False)
    table = summarise(reps_df)
    print(
        f"n = {args.n}, alpha = {args.alpha} (n alpha^2 = {args.n * args.alpha**2:.0f}), "
        f"{reps} releases, seed {args.seed}, {time.perf_counter() - t0:.0f} s"
    )
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    wide = table.pivot(index="param", columns="variance", values="SE/MCsd")
    print("SE / MC sd, default over influence: " + ", ".join(
        f"{p} {wide.loc[p, 'auto'] / wide.loc[p, 'influence']:.2f}" for p in wide.index
    ))  # fmt: skip


if __name__ == "__main__":
    main()
