"""The private kernel CV's admissibility rule against the plain minimum, by the true error.

``private_cv_kernel`` chooses, among the candidate bandwidths, the one with the lowest
private held-out risk *among those whose risk is non-negative and no worse than the zero
fit's on every fold* (the private risk is unbiased but unbounded below; at small
bandwidths floored denominators push it far below zero). This script measures what the
rule buys: for each release it fits every candidate bandwidth on all rows and computes
its true mean squared error against the regression function at the true covariates, then
reports the median and mean over releases of that error for

* ``plain``: the bandwidth with the lowest mean private risk (the rule switched off),
* ``rule``: the bandwidth ``private_cv_kernel`` chooses,
* ``oracle``: the best candidate by the true error.

Design: two private covariates (``2 Beta(2, 2) - 1`` and ``2 Beta(1.5, 3) - 1``, the
snapshot tests' design), ``mu(x) = sin(2 x1) + x2^2``, unit noise, a uniform reference on
[-1, 1]^2, Scott's rule times seven factors, three folds.

Usage: ``python benchmarks/cv_kernel_rule.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer.nuisance import KernelReference, private_cv_kernel, private_kernel_regression

SETTINGS = ((400, 0.5), (800, 0.8), (2000, 0.5), (2000, 0.8))


def mu(x: np.ndarray) -> np.ndarray:
    return np.sin(2 * x[:, 0]) + x[:, 1] ** 2


def reference() -> KernelReference:
    g = np.linspace(-1, 1, 41)
    grid = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    return KernelReference(grid, None, np.full(len(grid), 1 / len(grid)))


def one_release(n: int, alpha: float, seed: int, ref: KernelReference) -> tuple[float, ...]:
    """True MSE of the plain-minimum, the chosen and the best candidate bandwidth."""
    rng = np.random.default_rng(seed)
    x = np.column_stack([2 * rng.beta(2, 2, n) - 1, 2 * rng.beta(1.5, 3, n) - 1])
    y = mu(x) + rng.normal(size=n)
    z = np.where(rng.random((n, 1)) < alpha, x, rng.uniform(-1, 1, (n, 2)))
    cv = private_cv_kernel(y, z, alpha=alpha, reference=ref, n_folds=3, random_state=seed)
    mse = np.array(
        [
            np.mean(
                (
                    private_kernel_regression(
                        y, z, alpha=alpha, reference=ref, x_eval=x, bandwidth=np.array(h),
                        on_floor="clip", warn=False,
                    ).predictions
                    - mu(x)
                )
                ** 2
            )
            for h in cv.table.bandwidth
        ]
    )  # fmt: skip
    return mse[int(np.argmin(cv.table.risk))], mse[cv.best_index], mse.min()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 releases per setting")
    parser.add_argument("--reps", type=int, default=12, help="releases per setting")
    args = parser.parse_args()
    reps = 4 if args.quick else args.reps
    ref = reference()
    warnings.simplefilter("ignore")
    print(f"True MSE of the chosen fit, median (mean) over {reps} releases")
    print(f"{'n':>6} {'alpha':>5} {'plain':>16} {'rule':>16} {'oracle':>16}  rule better/worse")
    for n, alpha in SETTINGS:
        res = np.array([one_release(n, alpha, seed, ref) for seed in range(reps)])
        cells = "".join(
            f" {np.median(res[:, k]):7.3f} ({np.mean(res[:, k]):6.3f})" for k in range(3)
        )
        better = int(np.sum(res[:, 1] < res[:, 0] - 1e-12))
        worse = int(np.sum(res[:, 1] > res[:, 0] + 1e-12))
        print(f"{n:>6} {alpha:>5.1f}{cells}  {better}/{worse}", flush=True)


if __name__ == "__main__":
    main()
