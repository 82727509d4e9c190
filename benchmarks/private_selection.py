"""What selecting rows on a private column does to an estimate, and what the check prevents.

Each replication draws n rows (x ~ U(-1, 1) private, w ~ N(0, 1) public, a randomised
treatment, ATE 1 and ATE 0.75 among x < 0.5), releases them at ``alpha = 0.6`` with a
U(-1, 1) reference and fits ``PrivateATE`` (``y ~ d | x + w``, influence-function SEs) on
three sets of rows: the whole release, the rows with a public ``w < 1`` and the rows with
a released ``x < 0.5``. The models refuse the last set (the reference-share floor test,
:mod:`privinfer.mechanisms._consistency`); the script switches the test off to show what
it prevents. Prints the mean estimate, its Monte Carlo sd, the mean SE, and the coverage
of the population ATE (1) and of the selected subpopulation's (0.75 for ``x < 0.5``).

Usage::

    python benchmarks/private_selection.py            # 40 replications, about 25 s
    python benchmarks/private_selection.py --quick    # 10
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

import privinfer as pi
import privinfer.mechanisms.alpha_identity as alpha_identity


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--quick", action="store_true", help="10 replications")
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args()
    reps = 10 if args.quick else args.reps
    warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
    # measure what the check prevents: switch it off for this process
    alpha_identity.check_reference_share = lambda *a, **k: None  # type: ignore[assignment]
    rng = np.random.default_rng(args.seed)
    mech = pi.AlphaIdentity(0.6, {"x": pi.reference.Uniform(-1, 1)})
    rows = []
    for _ in range(reps):
        n = args.n
        x, w = rng.uniform(-1, 1, n), rng.normal(size=n)
        d = (rng.random(n) < 0.5).astype(int)
        raw = pd.DataFrame({"y": d * (1 + x) + x + rng.normal(size=n), "d": d, "x": x, "w": w})
        rel = mech.privatize(raw, public=["y", "d", "w"], random_state=rng)
        for label, rows_of, sub_truth in (
            ("whole release", rel, 1.0),
            ("public w < 1", rel[rel.w < 1], 1.0),
            ("released x < 0.5", rel[rel.x < 0.5], 0.75),
        ):
            res = pi.PrivateATE.from_formula(
                "y ~ d | x + w", rows_of, mechanism=mech, variance="influence"
            ).fit(random_state=rng)
            est, se = float(res.params.iloc[0]), float(res.bse.iloc[0])
            rows.append({"rows": label, "est": est, "se": se,
                         "cover_pop": abs(est - 1.0) <= 1.96 * se,
                         "cover_sub": abs(est - sub_truth) <= 1.96 * se})  # fmt: skip
    table = (
        pd.DataFrame(rows)
        .groupby("rows", sort=False)
        .agg(
            mean=("est", "mean"),
            mc_sd=("est", "std"),
            mean_se=("se", "mean"),
            cover_ATE_1=("cover_pop", "mean"),
            cover_subpop=("cover_sub", "mean"),
        )
        .round(3)
    )
    print(f"{reps} releases of {args.n} rows at alpha = 0.6 (the check switched off):")
    print(table.to_string())


if __name__ == "__main__":
    main()
