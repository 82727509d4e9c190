"""Speed of PrivateGMM.ols: 20 private regressors, n = 1e6, next to numpy lstsq.

Run: python benchmarks/speed_gmm.py [--n 1000000] [--k 20] [--alpha 0.5]

The private fit makes two chunked passes over the rows (second moments, then the
private moment rows for the robust sandwich and the influence values), so the memory
beyond the data and the n x k influence values is O(chunk x k). Timed: model build from
the formula (formulaic materialisation included) and fit; not timed: simulation and
privatisation.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import privinfer as pi


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n, k = args.n, args.k
    names = [f"x{j}" for j in range(k)]
    X = rng.uniform(0, 1, (n, k))
    beta = np.linspace(-1, 1, k)
    raw = pd.DataFrame(X, columns=names)
    raw["y"] = 1.0 + X @ beta + rng.normal(size=n)
    mech = pi.AlphaIdentity(args.alpha, {c: pi.reference.Uniform(0, 1) for c in names})
    released = mech.privatize(raw, public=["y"], random_state=args.seed + 1)
    formula = "y ~ " + " + ".join(names)

    t0, c0 = time.perf_counter(), time.process_time()
    res = pi.PrivateGMM.ols(formula, released, mechanism=mech).fit(random_state=0)
    t_priv, c_priv = time.perf_counter() - t0, time.process_time() - c0
    # memory in a second, untimed run (tracemalloc slows numpy allocations down)
    tracemalloc.start()
    pi.PrivateGMM.ols(formula, released, mechanism=mech).fit(random_state=0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    Z = np.column_stack([np.ones(n), released[names].to_numpy()])
    t0, c0 = time.perf_counter(), time.process_time()
    np.linalg.lstsq(Z, released["y"].to_numpy(), rcond=None)
    t_lstsq, c_lstsq = time.perf_counter() - t0, time.process_time() - c0

    err = np.max(np.abs(res.params.to_numpy()[1:] - beta) / res.bse.to_numpy()[1:])
    data_mb = released.memory_usage(deep=True).sum() / 2**20
    print(f"n = {n:,}, {k} private regressors, alpha = {args.alpha}")
    print(f"PrivateGMM.ols (build + fit, robust SE): {t_priv:6.2f} s   (target < 3 s)")
    print(
        f"numpy lstsq on the released data       : {t_lstsq:6.2f} s   (ratio {t_priv / t_lstsq:.2f})"
    )
    print(
        f"CPU time (all threads): PrivateGMM {c_priv:.2f} s, lstsq {c_lstsq:.2f} s "
        f"(wall time is inflated when the machine is shared; see os.getloadavg() = "
        f"{os.getloadavg()[0]:.1f})"
    )
    print(
        f"peak traced memory of build + fit      : {peak / 2**20:7.0f} MiB (data frame {data_mb:.0f} MiB)"
    )
    print(f"max |beta_hat - beta| / SE             : {err:6.2f}")


if __name__ == "__main__":
    main()
