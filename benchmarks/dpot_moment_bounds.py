"""Clip the DPOT cost estimate to the moment bounds of W (measured, not adopted; issue 19).

For the squared-Euclidean cost every coupling of the source and target splits into the
squared distance of their means and the cost between the centred measures, and the
centred cost lies between 0 and ``v_s + v_t`` (the independent coupling), so

    ||m_s - m_t||^2  <=  W  <=  ||m_s - m_t||^2 + v_s + v_t.

Both ends have unbiased estimates from the release: the mean part from the column
differences of the means (``CostEstimate.mean_terms``), the source spread ``v_s`` from
the published rows (the noise's share taken off) and ``v_t`` from the public target.
This script clips the ``estimator="auto"`` estimate to the estimated interval (and,
separately, to the estimated lower end only) on the releases of ``dpot_err.py`` (same
seeds) and prints the relative bias, its Monte Carlo standard error and the paper's Err
of each.

Usage: ``python benchmarks/dpot_moment_bounds.py [--designs gauss2,blobs5] [--eps
0.5,1,2,5,50] [--reps 40] [--jobs 2]`` (about 2 minutes with the defaults on two cores).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import dpot_err as de

from privinfer.exceptions import SeedReleaseWarning
from privinfer.transport import DPOTSource, estimate_transport_cost
from privinfer.transport.dpot import _deconvolution_space, _mean_part_terms

# research runs: every release below is seeded on purpose, for reproducibility
warnings.simplefilter("ignore", SeedReleaseWarning)

DESIGNS = "gauss2,blobs5,gauss10,clust2,cube3,small4,tdist8,ring2,heavy3"


def one_release(args: tuple[str, float, int]) -> tuple[float, float, float, float]:
    """(auto estimate, mean part, source spread, target spread) of one release."""
    name, eps, seed = args
    Xs, Xt, ell = de.design(name, True)
    pub = DPOTSource(eps, de.DELTA, ell, random_state=seed).publish(Xs)
    est = estimate_transport_cost(pub, Xt, estimator="auto", random_state=seed)
    a, b = np.full(len(Xs), 1.0 / len(Xs)), np.full(len(Xt), 1.0 / len(Xt))
    terms, _ = _mean_part_terms(pub.rows, Xt @ pub.projection, pub.sigma, a, b)
    space, _ = _deconvolution_space(pub.rows, pub.projection, pub.sigma, a, "bench")
    v_s = space.spread if space is not None else np.nan
    v_t = float(b @ np.sum((Xt - b @ Xt) ** 2, axis=1))
    return est.estimate, float(terms.mean()), v_s, v_t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", default=DESIGNS)
    parser.add_argument("--eps", default="0.5,1,2,5,50")
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    eps_set = {float(e) for e in args.eps.split(",")}
    rows = []
    for name in args.designs.split(","):
        W = de.true_cost(name, True)
        for i, eps in enumerate(de.EPS):  # seeds as in dpot_err.py: the same releases
            if eps not in eps_set:
                continue
            tasks = [(name, eps, 10_000 * i + r) for r in range(args.reps)]
            with ProcessPoolExecutor(args.jobs) as pool:
                est, mp, v_s, v_t = np.array(list(pool.map(one_release, tasks))).T
            lower = np.maximum(mp, 0.0)
            upper = np.where(np.isfinite(v_s), mp + np.maximum(v_s, 0.0) + v_t, np.inf)
            row = {"design": name, "eps": eps, "upper/W": np.nanmean(upper) / W}
            for label, e in (
                ("estimate", est),
                ("clipped", np.clip(est, lower, upper)),
                ("lower only", np.maximum(est, lower)),
            ):
                row[f"bias {label}"] = (e.mean() - W) / W
                row[f"mcse {label}"] = e.std(ddof=1) / np.sqrt(args.reps) / W
                row[f"Err {label}"] = np.abs(e - W).mean() / W
            rows.append(row)
            print(pd.DataFrame([row]).round(3).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    cols = [
        "design",
        "eps",
        "bias estimate",
        "bias clipped",
        "bias lower only",
        "mcse clipped",
        "Err estimate",
        "Err clipped",
        "upper/W",
    ]
    print("\n" + table[cols].to_string(index=False, float_format=lambda v: f"{v:+.3f}"))


if __name__ == "__main__":
    main()
