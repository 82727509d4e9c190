"""Size of the outcome fits' spared noise guard against the common one (issue 14).

Below alpha = 1 the outcome fits of the sieve's public-lead candidates lift only the
functions of private covariates, by a guard ``g`` from their innovations given the
public functions (``privinfer.nuisance.regularize.guard_lift``); the other fits floor the
ridge of every function at the common guard. The innovations divide by the public block
of the Gram matrix, so a public direction that few rows of an arm inform could make
``g`` large. This script fits ``PrivateATE`` on releases of a validation design and, for
every lifted candidate and training fold, compares ``g`` with the common guard of the same
training matrix, both in units of the mean eigenvalue of the penalised block.

Usage: ``python benchmarks/guard_size.py --designs public_tail_arm,public_many,public_heavy
[--alphas 0.7,0.5] [--reps 2] [--seed 211]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from validate import DESIGNS, replication

import privinfer as pi
import privinfer.nuisance.regularize as rg


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--designs", default="public_tail_arm,public_many,public_heavy")
    parser.add_argument("--alphas", default="0.7,0.5")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--seed", type=int, default=211)
    args = parser.parse_args()
    rows: list[tuple[np.ndarray, np.ndarray]] = []
    plain = rg._fold_spectra

    def recording(G_folds, n_rows, G_train, idx, min_ridge, noise_share, guarded=None):
        sp = plain(G_folds, n_rows, G_train, idx, min_ridge, noise_share, guarded)
        if sp is not None and sp.lift is not None:
            common = plain(G_folds, n_rows, G_train, idx, min_ridge, noise_share, None)
            rows.append((sp.lift.max(axis=1) / sp.scale, common.guard / sp.scale))
        return sp

    rg._fold_spectra = recording
    warnings.simplefilter("ignore")
    print("design           alpha rep  lifted  ratio of guards: median   p95    max")
    for design in args.designs.split(","):
        for alpha in (float(a) for a in args.alphas.split(",")):
            for rep in range(args.reps):
                rows.clear()
                mech, rel, _, _ = replication(args.seed, design, alpha, 4000, rep)
                formula = DESIGNS[design].formula
                pi.PrivateATE.from_formula(formula, rel, mechanism=mech).fit(random_state=7)
                g = np.concatenate([r[0] for r in rows])
                c = np.concatenate([r[1] for r in rows])
                q = [np.median(g) / np.median(c)]
                q += [np.quantile(g, 0.95) / np.quantile(c, 0.95), g.max() / c.max()]
                print(
                    f"{design:16s} {alpha:5g} {rep:3d} {len(rows):7d}"
                    f"{q[0]:25.2f}{q[1]:7.2f}{q[2]:7.2f}"
                )


if __name__ == "__main__":
    main()
