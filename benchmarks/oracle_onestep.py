"""The one-step estimator with the true nuisances, next to the package's, on the validation designs.

The package's one-step estimator of a potential-outcome mean applies ``Q_X^{-1}`` to the
score ``s = mu_k + 1{d = k} (y - mu_k) / pi_k`` with *estimated* nuisances, regularised
by private cross-validation. This script computes the same estimator with the *true*
outcome regression and Riesz representer (an oracle no analyst has): for each
replication it draws true data from a design of ``validate_designs.py``, releases it
through the alpha-identity, and computes

    theta = mean_i (s(X~_i, V_i) - (1 - alpha) E_ref[s(X', V_i)]) / alpha,

with the reference expectation estimated per row from ``--ref-draws`` fresh reference
draws (unbiased, so the oracle is exactly unbiased). Per row because the true ``mu_k``
and ``pi_k`` of the designs with public covariates are not separable in the private and
public ones; the package itself never needs this (its series nuisances are separable). Its Monte Carlo standard deviation
is the spread the package would have if its nuisance fits were exact. Comparing it with
the package's spread (``benchmarks/validate.py``) shows where the fits are regularised
far from the truth: a package spread several times smaller than the oracle's means the
Riesz fit is held well below ``1 / pi_k`` where the reference puts mass, and any bias
then depends on how well the outcome fit does there. The oracle is not the efficiency
bound of the private model (its tangent space is smaller than the non-private one, so
other influence functions exist): where ``1 / pi_k`` is unbounded on the reference's
support the oracle's variance is infinite while a regularised estimator can be fine.

Usage::

    python benchmarks/oracle_onestep.py --designs lognormal_clip,factor_12 \
        --alphas 1,0.7,0.5 --n 4000 --reps 400
    python benchmarks/oracle_onestep.py --designs proxy_public --alphas 1 --n 16000 \
        --reps 400 --seed 401                       # a held-out design, by name
    python benchmarks/oracle_onestep.py --quick

Prints one row per design x alpha x n x estimand: the oracle's bias (with its Monte Carlo
SE) and its standard deviation.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from holdout_designs import HOLDOUT
from validate_designs import DESIGNS, available, privatize

import privinfer as pi

DESIGNS.update(HOLDOUT)  # the held-out designs too, selected by name (as in validate.py)


def oracle_estimates(
    design_name: str, alpha: float, n: int, reps: int, ref_draws: int, seed: int
) -> pd.DataFrame:
    """Errors of the oracle one-step estimates of E[Y(0)] and E[Y(1)], one row per replication."""
    design = DESIGNS[design_name]
    mech = pi.AlphaIdentity(alpha, design.reference())
    _, _, pom = design.truths()
    private = list(mech.private_columns)
    rows = []
    for rep in range(reps):
        rng = np.random.default_rng([seed, rep])
        raw = design.simulate(n, rng)
        rel = privatize(mech, raw, design.public, rng)
        X = rel.drop(columns=["y", "d"])
        d, y = rel["d"].to_numpy(), rel["y"].to_numpy()
        # K reference draws per row: private columns from the reference, public ones kept
        Xr = X.loc[X.index.repeat(ref_draws)].reset_index(drop=True)
        draws = mech.reference.sample(len(Xr), random_state=rng)
        for c in private:
            Xr[c] = draws[c].to_numpy()
        p, p_ref = design.propensity(X), design.propensity(Xr).reshape(n, ref_draws)
        out = {"rep": rep}
        for k in (0, 1):
            mu = design.mean(X, k)
            mu_ref = design.mean(Xr, k).reshape(n, ref_draws)
            pk, pk_ref = (p, p_ref) if k == 1 else (1 - p, 1 - p_ref)
            hit = (d == k).astype(float)
            s = mu + hit * (y - mu) / pk
            s_ref = (mu_ref + hit[:, None] * (y[:, None] - mu_ref) / pk_ref).mean(axis=1)
            out[f"E[Y({k})]"] = float(np.mean((s - (1 - alpha) * s_ref) / alpha)) - pom[k]
        rows.append(out)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", default="lognormal_clip,factor_12,overlap_s,topcoded_income")
    ap.add_argument("--alphas", default="1,0.7,0.5")
    ap.add_argument("--n", default="4000")
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--ref-draws", type=int, default=32)
    ap.add_argument("--seed", type=int, default=61)
    ap.add_argument("--quick", action="store_true", help="100 reps, n = 4000, alpha 0.5")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps, args.alphas, args.n = 100, "0.5", "4000"
    names = [d for d in args.designs.split(",") if d in available() or d in HOLDOUT]
    out = []
    t0 = time.perf_counter()
    for name in names:
        for alpha in (float(a) for a in args.alphas.split(",")):
            for n in (int(v) for v in args.n.split(",")):
                err = oracle_estimates(name, alpha, n, args.reps, args.ref_draws, args.seed)
                for par in ("E[Y(0)]", "E[Y(1)]"):
                    e = err[par].to_numpy()
                    out.append(
                        {
                            "design": name,
                            "alpha": alpha,
                            "n": n,
                            "param": par,
                            "R": e.size,
                            "oracle bias": e.mean(),
                            "±MCSE": e.std(ddof=1) / np.sqrt(e.size),
                            "oracle sd": e.std(ddof=1),
                        }
                    )
                print(f"  {name} alpha={alpha:g} n={n}  ({time.perf_counter() - t0:.0f} s)",
                      flush=True)  # fmt: skip
    table = pd.DataFrame(out)
    signed = "{:+.4f}".format
    print(table.to_string(index=False, formatters={"oracle bias": signed, "±MCSE": "{:.4f}".format,
                                                    "oracle sd": "{:.4f}".format}))  # fmt: skip


if __name__ == "__main__":
    main()
