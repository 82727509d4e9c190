"""Scale: PrivateATE on pandas and on Dask, wall time and peak RSS, per-row cost across n.

Data: 20 private covariates uniform on [-1, 1], binary treatment, alpha = 0.5, series
degree 2 (231 basis functions per arm), 5 folds. The released rows are generated
partition by partition (``ROWS_PER_PARTITION`` rows each, from a child seed per
partition, with the alpha-identity release simulated directly); the Dask frame is built
lazily from that generator and never materialised, the pandas frame is the concatenation
of the same partitions, so both fits see the same rows. Each row also carries a public
fold label ``f``: with ``--folds column`` both backends use it (and the script checks that
the estimates agree to rounding); the default ``--folds drawn`` draws the folds from the
fit's random stream (per partition on Dask, over the whole frame with pandas: other
folds, so the estimates differ by a fraction of a standard error).

Part 1 (``--compare``): n rows, pandas vs Dask, each in a fresh subprocess: wall time of
``fit`` (construction included) and the process's peak RSS.
Part 2 (``--scale``): Dask only at several n: wall time, peak RSS and microseconds per
row (linear cost means a flat per-row column).

Usage::

    python benchmarks/scale.py --quick                 # n = 1e5 / 2e5, minutes
    python benchmarks/scale.py --compare 1e7           # the issue's comparison
    python benchmarks/scale.py --compare 0 --scale 1e6 1e7 1e8   # the out-of-core run
    python benchmarks/scale.py --compare 1e6 --scale 1e6 --folds column   # exact agreement

Every run is a subprocess ``python benchmarks/scale.py --one BACKEND N PER FOLDS``.
"""

from __future__ import annotations

import argparse
import json
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
ALPHA = 0.5
ROWS_PER_PARTITION = 250_000
COLS = [f"x{j}" for j in range(K)]


def mechanism() -> pi.AlphaIdentity:
    return pi.AlphaIdentity(ALPHA, {c: pi.reference.Uniform(-1, 1) for c in COLS})


def partition(i: int, rows: int) -> pd.DataFrame:
    """Released rows of partition ``i``, drawn from seed ``i``.

    The alpha-identity release of uniform covariates, simulated directly: each row keeps
    its covariates with probability alpha, otherwise all are redrawn from the reference
    (uniform on [-1, 1]), exactly the distribution ``mechanism().privatize`` produces.
    """
    rng = np.random.default_rng([2026, i])
    X = rng.uniform(-1, 1, (rows, K))
    score = X[:, :5] @ np.array([0.5, -0.5, 0.3, 0.2, -0.2])
    d = (rng.random(rows) < 1 / (1 + np.exp(-score))).astype(np.int64)
    y = d * (1 + X[:, 0]) + X[:, 1] ** 2 + X[:, :10].sum(axis=1) + rng.normal(size=rows)
    replaced = rng.random(rows) >= ALPHA
    X[replaced] = rng.uniform(-1, 1, (int(replaced.sum()), K))
    out = pd.DataFrame(X, columns=COLS, copy=False)  # no copy of the covariates
    out["y"], out["d"] = y, d
    out["f"] = rng.integers(0, 5, rows)  # a public fold label
    return out


def sizes(n: int, per: int) -> list[int]:
    full, rest = divmod(n, per)
    return [per] * full + ([rest] if rest else [])


def one(backend: str, n: int, per: int, folds: str = "drawn") -> dict[str, float | str]:
    """Fit once in this process; wall time of construction + fit, peak RSS."""
    parts = sizes(n, per)
    mech = mechanism()
    if backend == "pandas":
        data = pd.concat([partition(i, r) for i, r in enumerate(parts)], ignore_index=True)
    else:
        import dask.dataframe as dd

        meta = partition(0, 1).iloc[:0]
        data = dd.from_map(lambda ir: partition(*ir), list(enumerate(parts)), meta=meta)
    rss_data = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
        res = pi.PrivateATE(
            data, outcome="y", treatment="d", covariates=COLS, mechanism=mech, degree=2
        ).fit(random_state=0, folds="f" if folds == "column" else None)
    wall = time.perf_counter() - t0
    return {
        "backend": backend,
        "n": n,
        "wall_s": wall,
        "us_per_row": 1e6 * wall / n,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "rss_after_data_gb": rss_data,
        "ate": float(res.params.iloc[0]),
        "se": float(res.bse.iloc[0]),
    }


def run(backend: str, n: int, per: int, folds: str) -> dict[str, float | str]:
    out = subprocess.run(
        [sys.executable, __file__, "--one", backend, str(n), str(per), folds],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def header() -> None:
    print(f"{'backend':>8} {'n':>11} {'wall s':>9} {'us/row':>8} {'peak RSS GB':>12} {'ATE':>10}")


def show(r: dict[str, float | str]) -> dict[str, float | str]:
    print(
        f"{r['backend']:>8} {int(r['n']):>11,d} {r['wall_s']:>9.1f} {r['us_per_row']:>8.2f} "
        f"{r['peak_rss_gb']:>12.2f} {r['ate']:>10.5f}",
        flush=True,
    )
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small n (minutes)")
    ap.add_argument("--compare", type=float, help="pandas vs Dask at this n")
    ap.add_argument("--scale", type=float, nargs="+", help="Dask at these n")
    ap.add_argument(
        "--partition-rows", type=float, default=ROWS_PER_PARTITION, help="rows per partition"
    )
    ap.add_argument(
        "--folds", choices=["drawn", "column"], default="drawn",
        help="folds drawn from the fit's stream (default) or read from the column f",
    )  # fmt: skip
    ap.add_argument("--one", nargs=4, metavar=("BACKEND", "N", "PER", "FOLDS"),
                    help=argparse.SUPPRESS)  # fmt: skip
    args = ap.parse_args()
    if args.one:
        b, n, per, folds = args.one
        print(json.dumps(one(b, int(float(n)), int(float(per)), folds)))
        return
    per = int(args.partition_rows)
    compare = int(args.compare) if args.compare is not None else (200_000 if args.quick else 10**7)
    scale = [int(v) for v in args.scale] if args.scale else (
        [100_000, 200_000] if args.quick else [10**6, 10**7, 10**8]
    )  # fmt: skip
    if compare > 0:
        print(f"Part 1: pandas vs Dask, n = {compare:,d} (partitions of {per:,d} rows)")
        header()
        p, d = show(run("pandas", compare, per, args.folds)), show(run("dask", compare, per, args.folds))
        print(
            f"Dask / pandas: wall {d['wall_s'] / p['wall_s']:.2f}x (target <= 1.5), peak RSS "
            f"{d['peak_rss_gb'] / p['peak_rss_gb']:.2f}x (target < 0.5); "
            f"|ATE difference| = {abs(d['ate'] - p['ate']):.1e} ({args.folds} folds)",
            flush=True,
        )
    print(f"Part 2: Dask, lazily generated partitions of {per:,d} rows (never materialised)")
    header()
    for n in scale:
        show(run("dask", n, per, args.folds))


if __name__ == "__main__":
    main()
