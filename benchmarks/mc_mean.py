"""Risk and coverage of PrivateMean across eps and c.

Usage: python benchmarks/mc_mean.py [--quick]

Prints the empirical risk n E(theta_hat - theta)^2 / b^2 next to its bound 1/eta_TV^2
(exactly 1/eta^2 - ((theta - m)/b)^2 in theory), and the coverage of 95% normal, exact
(Clopper-Pearson) and Hoeffding intervals.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer.pml import PrivateMean, eps_star

B = 1.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    reps, n = (400, 500) if args.quick else (4000, 1000)
    rng = np.random.default_rng(7)
    theta = 2 * 2 / 7 - 1  # Beta(2, 5) rescaled to [-1, 1]
    print(f"[-b, b] = [-{B}, {B}], X = 2 Beta(2, 5) - 1 (theta = {theta:.4f}), n = {n}, "
          f"reps = {reps}")
    print(f"{'eps':>5} {'c':>5} {'eps*':>6} {'eta_TV':>7} {'1/eta^2':>8} {'theory':>8} "
          f"{'risk':>8} {'normal':>7} {'exact':>7} {'hoeff':>7}")
    for c in (0.0, 0.2, 0.4):
        for eps in (0.25, 0.5, 1.0, 2.0, 4.0):
            pm = PrivateMean(bounds=(-B, B), eps=eps, c=c)
            x = 2 * rng.beta(2, 5, size=(reps, n)) - 1
            bits = pm.privatize(x.ravel(), random_state=rng).reshape(reps, n)
            res = [pm.estimate(b) for b in bits]
            est = np.array([r.params["mean"] for r in res])
            risk = n * np.mean((est - theta) ** 2) / B**2
            cover = {}
            for method in ("normal", "exact", "hoeffding"):
                ci = np.array([r.conf_int(0.05, method=method).iloc[0].to_numpy() for r in res])
                cover[method] = np.mean((ci[:, 0] <= theta) & (theta <= ci[:, 1]))
            theory = 1 / pm.eta**2 - (theta / B) ** 2
            print(f"{eps:5.2f} {c:5.2f} {eps_star(c, 2 * B):6.2f} {pm.eta:7.3f} "
                  f"{1 / pm.eta**2:8.2f} {theory:8.2f} {risk:8.2f} {cover['normal']:7.3f} "
                  f"{cover['exact']:7.3f} {cover['hoeffding']:7.3f}")


if __name__ == "__main__":
    main()
