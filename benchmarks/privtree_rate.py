"""W1 error of PrivTree synthetic measures against n: intrinsic vs ambient dimension.

For data on a curve (s = 1) and on a plane (s = 2) embedded in d = 3 and d = 6, uniform data
and clustered data, this script releases a synthetic measure with PrivTree (He, 2026) and
with the uniform-grid construction of He, Vershynin and Zhu at the same eps, and reports
W1(mu_n, nu) against n with fitted log-log slopes next to the theory's exponents:
-1/max(s, 2) (intrinsic; the Laplacian complexity saturates at the parametric rate for
s <= 2, He 2026, §3.2) and -1/d (ambient).

W1 is measured two ways: "exact" (POT ot.emd2; only where the cost matrix has at most 2.5e7
entries) and "bound" (SyntheticMeasure.wasserstein(method="tree"): point-to-representative
cost plus the tree-ultrametric distance, a rigorous upper bound available at every n).
Distances are in unit-cube coordinates.

Usage:  python benchmarks/privtree_rate.py [--quick] [--reps R] [--eps EPS]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer.exceptions import SeedReleaseWarning
from privinfer.transport.measures import _EXACT_MAX_ENTRIES
from privinfer.transport.privtree import grid_synthesize, privtree_synthesize

OUT = Path(__file__).resolve().parent / "out"


def curve(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    t = rng.uniform(size=(n, 1))
    freq = rng.integers(1, 4, size=d)
    phase = rng.uniform(0, 2 * np.pi, size=d)
    return 0.5 + 0.4 * np.sin(2 * np.pi * freq * t + phase)


def plane(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    basis, _ = np.linalg.qr(rng.normal(size=(d, 2)))
    t = rng.uniform(size=(n, 2)) - 0.5
    return 0.5 + 0.7 * t @ basis.T


def uniform(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(size=(n, d))


def clustered(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.uniform(0.2, 0.8, size=(5, d))
    labels = rng.integers(0, 5, size=n)
    return np.clip(centres[labels] + rng.normal(0, 0.02, size=(n, d)), 0, 1)


# name, generator, ambient d, intrinsic s (clusters are full-dimensional at small scales)
DATASETS = [
    ("curve", curve, 3, 1),
    ("curve", curve, 6, 1),
    ("plane", plane, 3, 2),
    ("plane", plane, 6, 2),
    ("uniform", uniform, 3, 3),
    ("clustered", clustered, 3, 3),
]


def slope(n: np.ndarray, w: np.ndarray) -> float:
    ok = np.isfinite(w)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(n[ok]), np.log(w[ok]), 1)[0])


warnings.simplefilter("ignore", category=SeedReleaseWarning)  # seeded research runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n up to 3e4, fewer reps")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--eps", type=float, default=1.0)
    args = parser.parse_args()
    ns = [1_000, 3_000, 10_000, 30_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    reps = args.reps or 2
    rows = []
    start = time.perf_counter()
    for k, (name, gen, d, s) in enumerate(DATASETS):
        data = gen(max(ns), d, np.random.default_rng(100 + k))
        bounds = [(0.0, 1.0)] * d
        for n in ns:
            x = data[:n]
            for rep in range(reps):
                for method, fn in (("privtree", privtree_synthesize), ("grid", grid_synthesize)):
                    extra = {"n_bound": n} if method == "grid" else {}  # a public n, as HVZ
                    t0 = time.perf_counter()
                    nu, diag = fn(x, args.eps, bounds, random_state=1000 * rep + n, **extra)
                    fit_s = time.perf_counter() - t0
                    bound = nu.wasserstein(x, method="tree", unit_cube=True)
                    support = int((nu.weights > 0).sum())
                    exact = (
                        nu.wasserstein(x, method="exact", unit_cube=True)
                        if n * support <= _EXACT_MAX_ENTRIES and n <= 10_000
                        else np.nan
                    )
                    rows.append(
                        dict(
                            data=name,
                            d=d,
                            s=s,
                            method=method,
                            n=n,
                            rep=rep,
                            w1_exact=exact,
                            w1_bound=bound,
                            atoms=diag.n_leaves,
                            fit_s=fit_s,
                        )
                    )
        print(f"[{time.perf_counter() - start:6.1f}s] {name} d={d} done", flush=True)
    res = pd.DataFrame(rows)
    table = (
        res.groupby(["data", "d", "method", "n"], sort=False)[
            ["w1_exact", "w1_bound", "atoms", "fit_s"]
        ]
        .mean()
        .reset_index()
    )
    pd.set_option("display.width", 160)
    print(f"\nW1(mu_n, nu) in unit-cube units, eps = {args.eps}, mean of {reps} reps")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    slopes = []
    for (name, d, s, method), g in table.assign(
        s=table.merge(res[["data", "d", "s"]].drop_duplicates(), on=["data", "d"])["s"]
    ).groupby(["data", "d", "s", "method"], sort=False):
        slopes.append(
            dict(
                data=name,
                d=d,
                s=s,
                method=method,
                slope_exact=slope(g["n"].to_numpy(float), g["w1_exact"].to_numpy()),
                slope_bound=slope(g["n"].to_numpy(float), g["w1_bound"].to_numpy()),
                theory_intrinsic=-1 / max(s, 2),
                theory_ambient=-1 / d,
                ratio_grid_over_privtree=np.nan,
            )
        )
    slopes = pd.DataFrame(slopes)
    last = table[table["n"] == max(ns)].pivot_table(
        index=["data", "d"], columns="method", values="w1_bound"
    )
    ratio = (last["grid"] / last["privtree"]).rename("ratio")
    slopes["ratio_grid_over_privtree"] = [ratio.loc[(r.data, r.d)] for r in slopes.itertuples()]
    print("\nFitted log-log slopes of W1 against n (theory: -1/max(s,2) intrinsic, -1/d ambient);")
    print(f"last column: grid W1 bound / PrivTree W1 bound at n = {max(ns):.0e}")
    print(slopes.to_string(index=False, float_format=lambda v: f"{v:.3f}"))

    OUT.mkdir(exist_ok=True)
    suffix = "_quick" if args.quick else ""
    res.to_csv(OUT / f"privtree_rate{suffix}.csv", index=False)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), sharex=True)
    for ax, (name, _, d, s) in zip(axes.ravel(), DATASETS, strict=True):
        for method, style in (("privtree", "o-"), ("grid", "s--")):
            g = table[(table["data"] == name) & (table["d"] == d) & (table["method"] == method)]
            ax.loglog(g["n"], g["w1_bound"], style, label=f"{method} (bound)")
            if g["w1_exact"].notna().any():
                ax.loglog(g["n"], g["w1_exact"], style, alpha=0.4, label=f"{method} (exact)")
        n0, w0 = (
            table["n"].min(),
            table[(table["data"] == name) & (table["d"] == d)]["w1_bound"].max(),
        )
        nn = np.array([n0, max(ns)], float)
        ax.loglog(nn, w0 * (nn / n0) ** (-1 / max(s, 2)), "k:", lw=1, label="-1/max(s,2)")
        ax.loglog(nn, w0 * (nn / n0) ** (-1 / d), "k-.", lw=1, label="-1/d")
        ax.set_title(f"{name}, d={d}, s={s}")
        ax.set_xlabel("n")
        ax.set_ylabel("W1")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    path = OUT / f"privtree_rate{suffix}.png"
    fig.savefig(path, dpi=120)
    print(f"\nplot: {path}")


if __name__ == "__main__":
    main()
