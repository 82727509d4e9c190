"""End-to-end speed of PrivTree: n = 1e6, d = 3, eps = 1 should take under 5 s.

Times privtree_synthesize (rescaling, tree growth, integer leaf noise, tree projection)
on uniform and on curve data, best of --reps runs, and the W1 tree bound for reference.

Usage:  python benchmarks/speed_privtree.py [--quick] [--reps R]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer.transport.privtree import grid_synthesize, privtree_synthesize

TARGET_S = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run per case")
    parser.add_argument("--reps", type=int, default=None)
    args = parser.parse_args()
    reps = args.reps or (1 if args.quick else 3)
    n, d, eps = 1_000_000, 3, 1.0
    rng = np.random.default_rng(0)
    t = rng.uniform(size=(n, 1))
    cases = {
        "uniform": rng.uniform(size=(n, d)),
        "curve": np.column_stack([t[:, 0], t[:, 0] ** 2, 0.5 + 0.4 * np.sin(6 * t[:, 0])]),
    }
    bounds = [(0.0, 1.0)] * d
    print(f"n = {n:.0e}, d = {d}, eps = {eps}, best of {reps}")
    print(
        f"{'data':<10}{'method':<10}{'fit [s]':>10}{'atoms':>10}{'W1 bound':>11}{'bound [s]':>11}  status"
    )
    worst = 0.0
    for name, x in cases.items():
        for method, fn in (("privtree", privtree_synthesize), ("grid", grid_synthesize)):
            times = []
            for r in range(reps):
                t0 = time.perf_counter()
                extra = {"n_bound": n} if method == "grid" else {}  # grid: public n
                nu, diag = fn(x, eps, bounds, random_state=r, **extra)
                times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            w1 = nu.wasserstein(x, method="tree", unit_cube=True)
            tw = time.perf_counter() - t0
            best = min(times)
            if method == "privtree":
                worst = max(worst, best)
            status = (
                ("PASS" if best < TARGET_S else "FAIL") if method == "privtree" else "(baseline)"
            )
            print(
                f"{name:<10}{method:<10}{best:>10.3f}{diag.n_leaves:>10d}{w1:>11.4f}{tw:>11.3f}  {status}"
            )
    print(f"\nPrivTree end-to-end: {worst:.3f} s (target < {TARGET_S} s)")


if __name__ == "__main__":
    main()
