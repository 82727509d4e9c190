"""Speed of the private binned kernel fit against a plain O(n^2) reference.

Part 1: n = 1e5, d = 2 private covariates, alpha = 0.6: wall time of one private
Nadaraya-Watson and one local-linear fit-and-predict at all n released rows (binned:
linear binning + FFT; target < 5 s).

Part 2: n = 5000: the plain O(n^2) private fit (direct double sum, ``method="exact"``)
next to the binned one, with their wall times and their agreement (max and RMS
difference of the predictions, relative to the response's SD).

Usage: ``python benchmarks/speed_kernel.py``.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer.nuisance import KernelReference, private_kernel_regression

ALPHA = 0.6


def make(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (n, 2))
    y = np.sin(3 * x[:, 0]) + x[:, 1] ** 2 + 0.2 * rng.normal(size=n)
    z = np.where(rng.random((n, 1)) < ALPHA, x, rng.uniform(0, 1, (n, 2)))
    return y, z


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    ref = KernelReference.uniform_grid([(0.0, 1.0), (0.0, 1.0)], m=128)
    y, z = make(100_000)
    print("Part 1: n = 100000, d = 2, alpha = 0.6, predict at all rows (binned)")
    for kind in ("nw", "local_linear"):
        res, t = timed(lambda k=kind: private_kernel_regression(
            y, z, alpha=ALPHA, reference=ref, bandwidth=0.06, kind=k))
        print(f"  {kind:13s} {t:6.3f} s   grid {res.diagnostics.grid_shape}, "
              f"floored {res.diagnostics.n_floored}")
    y, z = make(5000, seed=1)
    print("\nPart 2: n = 5000, plain O(n^2) double sum vs binned, predictions at all rows")
    print(f"  {'kind':13s} {'exact (s)':>10s} {'binned (s)':>11s} {'speed-up':>9s} "
          f"{'max |diff|/sd':>14s} {'rms diff/sd':>12s}")
    sd = float(y.std())
    for kind in ("nw", "local_linear"):
        kw = {"alpha": ALPHA, "reference": ref, "bandwidth": 0.08, "kind": kind}
        ex, te = timed(lambda kw=kw: private_kernel_regression(y, z, method="exact", **kw))
        bn, tb = timed(lambda kw=kw: private_kernel_regression(y, z, method="binned", **kw))
        d = bn.predictions - ex.predictions
        print(f"  {kind:13s} {te:10.3f} {tb:11.3f} {te / tb:9.0f} "
              f"{np.max(np.abs(d)) / sd:14.2e} {np.sqrt(np.mean(d**2)) / sd:12.2e}")


if __name__ == "__main__":
    main()
