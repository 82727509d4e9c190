"""Speed of PrivateATE against DoubleML's IRM on the same data, in the same process.

Part 1: n = 1e5, 20 covariates, degree-2 series (231 basis functions per arm), 5 folds,
alpha = 0.5 for privinfer; DoubleMLIRM with degree-2 polynomial features,
LinearRegression (outcome) and LogisticRegression (propensity) on the same released
data. Prints both wall times and the ratio (target: privinfer <= 0.5 x DoubleML).

Part 2: n = 1e6 in a fresh subprocess: wall time of ``fit`` and the process's peak RSS
(targets: < 20 s, < 1.5 GB). Usage: ``python benchmarks/speed_ate.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import privinfer as pi

K = 20


def make_data(
    n: int, seed: int = 0, public: int = 0, alpha: float = 0.5
) -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    """Released data of ``n`` rows and its mechanism; the last ``public`` covariates are
    published unchanged (no reference), the others released at ``alpha``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, K))
    score = X[:, :5] @ np.array([0.5, -0.5, 0.3, 0.2, -0.2])
    d = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(int)
    y = d * (1 + X[:, 0]) + X[:, 1] ** 2 + X[:, :10].sum(axis=1) + rng.normal(size=n)
    cols = [f"x{j}" for j in range(K)]
    raw = pd.DataFrame(X, columns=cols).assign(y=y, d=d)
    private, pub = cols[: K - public], cols[K - public :]
    mech = pi.AlphaIdentity(alpha, {c: pi.reference.Uniform(-1, 1) for c in private})
    return mech.privatize(raw, public=["y", "d", *pub], random_state=seed + 1), mech


def fit_privinfer(data: pd.DataFrame, mech: pi.AlphaIdentity) -> tuple[float, float]:
    cols = [f"x{j}" for j in range(K)]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
        res = pi.PrivateATE(
            data, outcome="y", treatment="d", covariates=cols, mechanism=mech, degree=2
        ).fit(random_state=0)
    return time.perf_counter() - t0, float(res.params.iloc[0])


def fit_doubleml(data: pd.DataFrame) -> tuple[float, float]:
    import doubleml
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    cols = [f"x{j}" for j in range(K)]
    t0 = time.perf_counter()
    dml_data = doubleml.DoubleMLData(data[["y", "d", *cols]], y_col="y", d_cols="d", x_cols=cols)
    ml_g = make_pipeline(PolynomialFeatures(2, include_bias=False), LinearRegression())
    ml_m = make_pipeline(
        PolynomialFeatures(2, include_bias=False),
        StandardScaler(),
        LogisticRegression(C=np.inf, max_iter=1000),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dml = doubleml.DoubleMLIRM(dml_data, ml_g=ml_g, ml_m=ml_m, n_folds=5).fit()
    return time.perf_counter() - t0, float(dml.coef[0])


def big(n: int) -> None:
    data, mech = make_data(n, seed=3)
    t, est = fit_privinfer(data, mech)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(
        f"  n = {n:,}: PrivateATE fit {t:.1f} s, ATE = {est:.4f}, peak RSS of the process {rss:.2f} GB"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--big", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.big:
        big(args.big)
        return
    n = 20_000 if args.quick else 100_000
    data, mech = make_data(n)
    print(f"Part 1: n = {n:,}, {K} covariates, degree 2, 5 folds, alpha = 0.5 (same released data)")
    t_pi, e_pi = fit_privinfer(data, mech)
    t_dml, e_dml = fit_doubleml(data)
    print(f"  privinfer PrivateATE : {t_pi:7.2f} s  (ATE {e_pi:.4f})")
    print(
        f"  DoubleMLIRM          : {t_dml:7.2f} s  (ATE {e_dml:.4f}, non-private method on privatised data)"
    )
    print(f"  ratio privinfer / DoubleML = {t_pi / t_dml:.3f}")
    n_big = 200_000 if args.quick else 1_000_000
    print(f"Part 2: n = {n_big:,} in a fresh process")
    subprocess.run([sys.executable, __file__, "--big", str(n_big)], check=True)


if __name__ == "__main__":
    main()
