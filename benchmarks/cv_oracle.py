"""Private cross-validation against an oracle cross-validation on the true covariates.

For alpha in {1, 0.8, 0.6, 0.4} and a few seeds, the data are released by the
alpha-identity mechanism; private CV (on released Z, through Q_X^{-1}) picks a series
basis + ridge (default ladder: polynomials of degree 1-4, cubic B-splines with 1-8 knots,
4 ridges) and a Nadaraya-Watson bandwidth (Scott's rule x 7 factors). The oracle runs
ordinary CV on the true X with the same folds and candidates. Reported per alpha: how
often the two picks agree (exactly / within one step of the ladder), and the oracle
risk of the private pick relative to the oracle's best ("regret", in %).

Usage: ``python benchmarks/cv_oracle.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
import pandas as pd

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer.nuisance import (
    KernelReference,
    private_cv_kernel,
    private_cv_series,
    scott_bandwidth,
)
from privinfer.nuisance.crossval import DEFAULT_BANDWIDTH_FACTORS

REF = np.linspace(-1, 1, 1025)[:, None]
REF_W = np.full(REF.shape[0], 1 / REF.shape[0])


def release(n: int, alpha: float, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 1))
    y = np.exp(x[:, 0]) * np.sin(2.5 * x[:, 0]) + 0.3 * rng.normal(size=n)
    z = np.where(rng.random((n, 1)) < alpha, x, rng.uniform(-1, 1, (n, 1)))
    return x, y, z


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 5000 if args.quick else 20_000
    seeds = range(2 if args.quick else 5)
    rows = []
    ref_k = KernelReference(REF, None, REF_W)
    for alpha in (1.0, 0.8, 0.6, 0.4):
        for seed in seeds:
            x, y, z = release(n, alpha, seed)
            folds = np.random.default_rng(100 + seed).permutation(n) % 5
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ps = private_cv_series(y, z, alpha=alpha, ref_private=REF, ref_weights=REF_W,
                                       folds=folds)
                os_ = private_cv_series(y, x, alpha=1.0, ref_private=REF, ref_weights=REF_W,
                                        folds=folds)
                # the same bandwidth candidates for both (Scott's rule on X x the defaults)
                hs = [float(scott_bandwidth(x)[0]) * f for f in DEFAULT_BANDWIDTH_FACTORS]
                pk = private_cv_kernel(y, z, alpha=alpha, reference=ref_k, folds=folds,
                                       bandwidths=hs)
                ok = private_cv_kernel(y, x, alpha=1.0, reference=ref_k, folds=folds,
                                       bandwidths=hs)
            o_risk = os_.table.risk.to_numpy()
            rows.append({
                "alpha": alpha, "seed": seed,
                "series_same": ps.best_index == os_.best_index,
                "series_basis_same": ps.table.basis[ps.best_index] == os_.table.basis[os_.best_index],
                "series_regret": 100 * (o_risk[ps.best_index] / o_risk.min() - 1),
                "bw_step": abs(pk.best_index - ok.best_index),
                "bw_regret": 100 * (ok.table.risk[pk.best_index] / ok.table.risk.min() - 1),
                "private_pick": f"{ps.table.basis[ps.best_index]} r={ps.ridge:g}",
                "oracle_pick": f"{os_.table.basis[os_.best_index]} r={os_.ridge:g}",
            })
    df = pd.DataFrame(rows)
    summary = df.groupby("alpha", sort=False).agg(
        series_same=("series_same", "mean"),
        series_basis_same=("series_basis_same", "mean"),
        series_regret_pct=("series_regret", "mean"),
        bw_same=("bw_step", lambda s: float(np.mean(s == 0))),
        bw_within1=("bw_step", lambda s: float(np.mean(s <= 1))),
        bw_regret_pct=("bw_regret", "mean"),
    )
    print(f"n = {n}, {len(seeds)} seeds per alpha, 5 folds (same folds for private and oracle)")
    print(summary.to_string(float_format=lambda v: f"{v:.2f}"))
    print("\nPicks (series):")
    print(df[["alpha", "seed", "private_pick", "oracle_pick"]].to_string(index=False))


if __name__ == "__main__":
    main()
