r"""Does the bias bound of a fit with a fixed ridge see the bias that ridge causes? (issue 14)

A user may fix ``ridge`` (relative to the mean eigenvalue of each Gram matrix) instead of
letting the private cross-validation choose it. The bias bound behind the bias-aware
interval compares the estimate with a comparison fit. Two rules for that comparison are
run on the same releases (:data:`privinfer.nuisance.regularize.FIXED_COMPARE_CV`):

* ``cv`` (the default): where the fixed ridge is heavier than the ridge the private CV
  would choose, the comparison fit is that CV choice (its sieve and ridge);
* ``old``: the full basis at the fixed ridge divided by 100, as before.

A lighter fixed ridge gets the ``old`` comparison under both rules, so there the two rows
agree.

Two designs with known ATE:

* ``overlap``: ``alpha = 1``, :math:`n = 1000`, a propensity in [0.03, 0.97] through a
  private covariate and an S-shaped outcome, ATE = 1 (the design of
  ``tests/models/test_foldboot.py``'s bias-bound tests, seeds 300-329);
* ``skewed``: ``alpha = 0.7``, :math:`n = 4000`, a lognormal covariate under a uniform
  reference on [0, 10], a sine outcome, ATE = :math:`1 + 0.3\,E[x]` (the design of that
  file's bootstrap tests). Below ``alpha = 1`` a fixed ridge that leaves a Gram matrix
  below its privatisation noise is refused (``refused``).

Per design, ridge and rule it prints: the fits, the refusals, the mean error over the
standard error, the share of fits whose interval widened for bias (``widened``), the
median bound in SE and over the fit's actual error (``bound/err``), the coverage of the
widened and of the plain intervals, and the mean interval length.

Usage::

    python benchmarks/fixed_ridge.py --quick      # ridge 1 on overlap, 8 releases
    python benchmarks/fixed_ridge.py              # the tables of the regularisation page
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

# the sibling modules, and this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _designs import limited_overlap, skewed_wide_reference

import privinfer as pi
from privinfer.nuisance import regularize


def _skewed_ate() -> float:
    x = np.minimum(np.random.default_rng(9).lognormal(0.0, 0.6, 4_000_000), 10.0)
    return float(1.0 + 0.3 * x.mean())


DESIGNS = {
    # name: (alpha, n, covariates, reference, draw, truth, first seed)
    "overlap": (1.0, 1000, "x1 + x2",
                {"x1": pi.reference.Uniform(-1, 1), "x2": pi.reference.Uniform(-1, 1)},
                limited_overlap, lambda: 1.0, 300),
    "skewed": (0.7, 4000, "x + z",
               {"x": pi.reference.Uniform(0, 10), "z": pi.reference.Uniform(-1, 1)},
               skewed_wide_reference, _skewed_ate, 100),
}  # fmt: skip


def run_cell(design: str, ridge: float, rule: str, reps: int) -> dict[str, object]:
    """Fits of one design, ridge and comparison rule; one summary row."""
    alpha, n, covs, ref, draw, truth_of, first = DESIGNS[design]
    truth = truth_of()
    mech = pi.AlphaIdentity(alpha, ref)
    before = regularize.FIXED_COMPARE_CV
    regularize.FIXED_COMPARE_CV = rule == "cv"
    rows, refused = [], 0
    try:
        for seed in range(first, first + reps):
            raw = draw(n, np.random.default_rng(seed))
            rel = (
                raw
                if alpha == 1
                else mech.privatize(
                    raw, public=["d", "y"], random_state=np.random.default_rng(seed + 900)
                )
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = pi.PrivateATE.from_formula(
                        f"y ~ d | {covs}", rel, mechanism=mech, ridge=ridge
                    )
                    res = model.fit(random_state=np.random.default_rng(seed + 1))
                except pi.exceptions.SingularDesignError:
                    refused += 1
                    continue
            est, se = float(res.params.iloc[0]), float(res.bse.iloc[0])
            lo, hi = res.conf_int().iloc[0].to_numpy(dtype=float)
            bound = float(res._record.bias_bound.iloc[0])
            rows.append((est - truth, se, bound, lo <= truth <= hi, hi - lo))
    finally:
        regularize.FIXED_COMPARE_CV = before
    out: dict[str, object] = {"design": design, "alpha": alpha, "n": n, "ridge": ridge,
                              "rule": rule, "fits": len(rows), "refused": refused}  # fmt: skip
    if rows:
        err, se, bound, covers, length = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
        out.update(
            {
                "bias/SE": float(np.mean(err / se)),
                "widened": float(np.mean(bound > 0)),
                "bound/SE": float(np.median(bound / se)),
                "bound/err": float(np.median(bound / np.abs(err))),
                "cover": float(np.mean(covers)),
                "plain": float(np.mean(np.abs(err) <= 1.96 * se)),
                "CI len": float(np.mean(length)),
            }
        )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--designs", default="overlap,skewed")
    ap.add_argument("--ridges", default=None, help="comma list (default: per design)")
    ap.add_argument("--reps", type=int, default=None, help="default: 30 overlap, 12 skewed")
    ap.add_argument("--quick", action="store_true", help="ridge 1 on overlap, 8 releases")
    ap.add_argument("--out", default=None, help="CSV of the table")
    a = ap.parse_args(argv)
    default_ridges = {"overlap": [1.0, 0.3, 0.1, 0.01], "skewed": [10.0, 3.0]}
    default_reps = {"overlap": 30, "skewed": 12}
    designs = ["overlap"] if a.quick else a.designs.split(",")
    t0 = time.perf_counter()
    table = []
    for design in designs:
        ridges = [1.0] if a.quick else (
            [float(r) for r in a.ridges.split(",")] if a.ridges else default_ridges[design]
        )  # fmt: skip
        reps = 8 if a.quick else (a.reps or default_reps[design])
        for ridge in ridges:
            for rule in ("cv", "old"):
                table.append(run_cell(design, ridge, rule, reps))
    df = pd.DataFrame(table)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df.round(3).to_string(index=False))
    print(f"{time.perf_counter() - t0:.0f} s")
    if a.out:
        df.to_csv(a.out, index=False)


if __name__ == "__main__":
    main()
