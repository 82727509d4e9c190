"""Scale: PrivateGMM (OLS and logit) on pandas and on Dask, wall time and peak RSS.

The data of ``benchmarks/scale.py``: 20 private covariates uniform on [-1, 1] released at
alpha = 0.5, generated partition by partition (the Dask frame lazily, never
materialised; the pandas frame is the concatenation of the same partitions). Models:
``y ~ x0 + ... + x19`` (OLS, robust covariance) and ``d ~ x0 + ... + x19`` (logit, its
columns persisted for the Newton steps). Each fit runs in a fresh subprocess: wall time
of construction + fit and the process's peak RSS; the script also prints the largest
difference between the pandas and Dask estimates.

Usage::

    python benchmarks/scale_gmm.py --quick               # n = 2e5, about a minute
    python benchmarks/scale_gmm.py --compare 1e6         # pandas vs Dask
    python benchmarks/scale_gmm.py --compare 0 --scale 1e6 1e7   # Dask only
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

import privinfer as pi

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import COLS, ROWS_PER_PARTITION, mechanism, partition, sizes

FORMULAS = {"ols": "y ~ " + " + ".join(COLS), "logit": "d ~ " + " + ".join(COLS)}


def one(backend: str, route: str, n: int, per: int) -> dict[str, float | str]:
    """Build and fit once in this process; wall time and peak RSS."""
    parts = sizes(n, per)
    mech = mechanism()
    if backend == "pandas":
        data = pd.concat([partition(i, r) for i, r in enumerate(parts)], ignore_index=True)
    else:
        import dask.dataframe as dd

        meta = partition(0, 1).iloc[:0]
        data = dd.from_map(lambda ir: partition(*ir), list(enumerate(parts)), meta=meta)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
        build = pi.PrivateGMM.ols if route == "ols" else pi.PrivateGMM.logit
        res = build(FORMULAS[route], data, mechanism=mech).fit(random_state=0)
    wall = time.perf_counter() - t0
    return {
        "backend": backend,
        "route": route,
        "n": n,
        "wall_s": wall,
        "us_per_row": 1e6 * wall / n,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "params": res.params.tolist(),
        "bse": res.bse.tolist(),
    }


def run(backend: str, route: str, n: int, per: int) -> dict[str, float | str]:
    out = subprocess.run(
        [sys.executable, __file__, "--one", backend, route, str(n), str(per)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def show(r: dict[str, float | str]) -> dict[str, float | str]:
    print(
        f"{r['route']:>6} {r['backend']:>7} {int(r['n']):>11,d} {r['wall_s']:>9.1f} "
        f"{r['us_per_row']:>8.2f} {r['peak_rss_gb']:>12.2f}",
        flush=True,
    )
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 2e5")
    ap.add_argument("--compare", type=float, help="pandas vs Dask at this n")
    ap.add_argument("--scale", type=float, nargs="+", help="Dask only at these n")
    ap.add_argument("--routes", nargs="+", default=["ols", "logit"], choices=list(FORMULAS))
    ap.add_argument(
        "--partition-rows", type=float, default=ROWS_PER_PARTITION, help="rows per partition"
    )
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        backend, route, n, per = args.one
        print(json.dumps(one(backend, route, int(float(n)), int(float(per)))))
        return
    per = int(args.partition_rows)
    quick_n = 200_000
    compare = int(args.compare) if args.compare is not None else (quick_n if args.quick else 10**6)
    scale = [int(v) for v in args.scale] if args.scale else []
    print(f"{'route':>6} {'backend':>7} {'n':>11} {'wall s':>9} {'us/row':>8} {'peak RSS GB':>12}")
    for route in args.routes:
        if compare > 0:
            p = show(run("pandas", route, compare, per))
            d = show(run("dask", route, compare, per))
            diff = max(abs(a - b) for a, b in zip(p["params"], d["params"], strict=True))
            diff_se = max(abs(a - b) for a, b in zip(p["bse"], d["bse"], strict=True))
            print(
                f"{route}: Dask / pandas wall {d['wall_s'] / p['wall_s']:.2f}x, peak RSS "
                f"{d['peak_rss_gb'] / p['peak_rss_gb']:.2f}x; max |param difference| "
                f"{diff:.1e}, max |SE difference| {diff_se:.1e}",
                flush=True,
            )
        for n in scale:
            show(run("dask", route, n, per))


if __name__ == "__main__":
    main()
