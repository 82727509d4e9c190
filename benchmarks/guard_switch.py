r"""A per-fit switch between the common noise guard and one per eigen-direction, on
recorded replications.

The common guard's bias shows up as a halved-guard move (``bound_guard``, recorded by
``benchmarks/validate.py``); the per-direction guard (``--guard-directions``) removes
that bias but costs variance where the common guard's shrinkage was cheap. The rule
measured here takes, for each fit (design, alpha, n, estimand and replication), the
per-direction run's estimate and interval when the common run's largest
``bound_guard / se`` over the fit's parameters exceeds a threshold ``t``, and the common
run's otherwise. Both runs must hold the same releases (same ``--seed``); the rule uses
only what the common fit itself reports, so it is a rule a fit could apply. Prints, per
threshold, the share of fits switched, the cells passing and the ratios of interval
length and root mean squared error over the common run (:func:`compare_runs.compare`).

``--mse`` switches a flagged fit only where the other fit also reports a smaller error:
:math:`\sum_p (se_p^2 + B_p^2) / se_{p,common}^2` over its parameters, with
:math:`B_p` the largest recorded bias-bound part (``bound_shift``, ``bound_cap``,
``bound_guard``), below the common fit's. The second run may also be an in-model switch
run (``validate.py --guard-switch``), whose switched fits are per-direction fits.

::

    python benchmarks/validate.py --designs factor_cells --alphas 0.7,0.5 --n 16000 \
        --reps 16 --seed 1301 --out common.csv
    python benchmarks/validate.py --designs factor_cells --alphas 0.7,0.5 --n 16000 \
        --reps 16 --seed 1301 --guard-directions --out directions.csv
    python benchmarks/guard_switch.py common_reps.csv directions_reps.csv --thresholds 0.1,0.25,0.5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_runs import compare_many, print_summary

FIT = ["design", "alpha", "n", "estimand", "rep"]


def switched(
    common: pd.DataFrame, other: pd.DataFrame, threshold: float, mse: bool = False
) -> pd.DataFrame:
    """The replications of the switch rule: ``other``'s rows where the common fit's
    largest ``bound_guard / se`` exceeds ``threshold`` (and, with ``mse``, ``other``'s
    fit reports the smaller error), ``common``'s elsewhere."""
    order = [*FIT, "param"]
    a = common.sort_values(order).reset_index(drop=True)
    b = other.sort_values(order).reset_index(drop=True)
    if not a[order].equals(b[order]):
        raise ValueError("the runs do not hold the same cells and replications")
    share = (a.bound_guard / a.se).fillna(0.0)
    by_fit = [a[k] for k in FIT]
    flag = share.groupby(by_fit).transform("max").to_numpy() > threshold
    if mse:
        err_other = _error(b, a).groupby(by_fit).transform("sum").to_numpy()
        err_common = _error(a, a).groupby(by_fit).transform("sum").to_numpy()
        flag &= err_other < err_common
    out = a.copy()
    for col in ("est", "se", "lower", "upper", "status"):
        out.loc[flag, col] = b.loc[flag, col].to_numpy()
    out["switched"] = flag
    return out


def _error(run: pd.DataFrame, common: pd.DataFrame) -> pd.Series:
    """A fit's reported squared error per parameter, in the common fit's variances:
    ``(se^2 + B^2) / se_common^2``, ``B`` its largest recorded bias-bound part."""
    parts = [c for c in ("bound_shift", "bound_cap", "bound_guard") if c in run.columns]
    B = run[parts].fillna(0.0).max(axis=1)
    return (run.se**2 + B**2) / common.se**2


def main(argv: list[str] | None = None) -> None:
    """Print the switch rule's table for each threshold."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("common", help="*_reps.csv of the common guard's run")
    parser.add_argument("directions", help="*_reps.csv of the per-direction run")
    parser.add_argument("--thresholds", default="0.1,0.25,0.5")
    parser.add_argument(
        "--mse",
        action="store_true",
        help="switch a flagged fit only where the other fit reports the smaller se^2 + bound^2",
    )
    args = parser.parse_args(argv)
    a, b = pd.read_csv(args.common), pd.read_csv(args.directions)
    runs, names = [a, b], ["common", "directions"]
    for t in (float(x) for x in args.thresholds.split(",")):
        s = switched(a, b, t, mse=args.mse)
        print(f"threshold {t:g}: {s.switched.mean():.0%} of fits switched")
        runs.append(s)
        names.append(f"switch {t:g}")
    print_summary(compare_many(runs, names), names)


if __name__ == "__main__":
    main()
