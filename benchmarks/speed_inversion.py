"""Time of a private (deconvolved) Gram matrix next to the plain ``B.T @ B``.

n = 1e6 released rows, 50 basis functions, reference moments from M = 8192 Sobol points.
The private Gram applies Q_X^{-1} to the whole product b b' separably: one pass over the
rows plus the reference moments computed once, so its cost is the plain Gram's plus
O(M J^2). Usage: ``python benchmarks/speed_inversion.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer.inversion import ReferenceMoments, private_gram


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, J, M = (200_000 if args.quick else 1_000_000), 50, 8192
    rng = np.random.default_rng(0)
    B = rng.uniform(-1, 1, (n, J))
    ref_pts = rng.uniform(-1, 1, (M, J))
    t_ref = best_of(lambda: ReferenceMoments.from_features(ref_pts, np.full(M, 1 / M)), 3)
    ref = ReferenceMoments.from_features(ref_pts, np.full(M, 1 / M))
    t_plain = best_of(lambda: B.T @ B / n, 3)
    t_priv = best_of(lambda: private_gram(B, ref, 0.5), 3)
    print(f"n = {n:,}, J = {J}, M = {M}")
    print(f"  plain B.T @ B / n          : {t_plain:.3f} s")
    print(
        f"  private Gram (Q_X^-1 whole): {t_priv:.3f} s   (+ reference moments once: {t_ref:.3f} s)"
    )
    print(f"  ratio private / plain      : {t_priv / t_plain:.2f}")
    print(f"  ratio incl. reference      : {(t_priv + t_ref) / t_plain:.2f}")


if __name__ == "__main__":
    main()
