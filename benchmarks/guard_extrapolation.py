r"""How many times should the halved-guard move count in the bias bound?

Below ``alpha = 1`` the bias bound of the automatic route includes the move of the
estimate when every fit's noise guard is halved (``privinfer.models._onestep``,
``_GUARD_SENSITIVITY``). The move is the guard's bias *less* the bias of half the guard.
With both fits shrunk by :math:`g/(\lambda_j + g)` in eigen-direction ``j`` of the Gram
matrix, the one-step estimate's bias there is of order :math:`b_j(g) = (g/(\lambda_j +
g))^2`, and the move recovers :math:`1 - b_j(g/2)/b_j(g)` of it: 3/4 where
:math:`\lambda_j \gg g`, 0.56 at :math:`\lambda_j = g`, 0.44 at :math:`\lambda_j = g/2`
and nothing where the direction is swamped (:math:`\lambda_j \ll g`). Counting the move
``K`` times (Richardson's extrapolation of a halving; ``K = 4/3`` for directions well
above the guard, ``K = 2`` for directions near it) is the candidate rule
``_GUARD_EXTRAPOLATION = K``.

The rule only changes the critical value of the bias-aware interval, never the estimate
or its standard error, and only in fits where the guard bites. So it is measured on the
replications of ``benchmarks/validate.py`` runs (which record the bound's parts in the
columns ``bound_shift``, ``bound_cap``, ``bound_guard``) without refitting: per rule the
bound :math:`B = \max(B_{shift}, B_{cap}, K B_{guard})`, zero where :math:`B/\mathrm{se}
\le 0.25`, and the interval :math:`\hat\psi \pm c(B/\mathrm{se})\,\mathrm{se}` with the
bias-aware critical value :math:`c` (Armstrong and Kolesár, 2020). The rule ``K = 1`` must
reproduce the recorded intervals (checked). Prints, per cell: the coverage and the mean
interval length of every rule relative to ``K = 1``, and every rule's verdict against the
bands of the validation suite.

::

    python benchmarks/validate.py --designs factor_cells --alphas 0.7,0.5 --n 16000 \
        --reps 16 --estimands ATE,ATT,POM --jobs 2 --seed 1301 --out fc.csv
    python benchmarks/guard_extrapolation.py fc_reps.csv [more_reps.csv ...] [--rules 1,1.333,2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import summarise

from privinfer._critical import bias_aware_critical_value
from privinfer.models._onestep import _BIAS_NOTE_SHARE

#: bounds at or below this share of the standard error do not widen the interval
NOTE_SHARE = _BIAS_NOTE_SHARE
#: the rule the runs were made with (``--guard-extrapolation``, default 1)
RECORDED = 1.0


def intervals(reps: pd.DataFrame, k: float, recorded: float = RECORDED) -> pd.DataFrame:
    """The replications with the intervals of rule ``K = k`` (bound's parts required)."""
    out = reps.copy()
    guard = out["bound_guard"].fillna(0.0) * (k / recorded)
    B = np.maximum.reduce(
        [
            out["bound_shift"].fillna(0.0).to_numpy(),
            out["bound_cap"].fillna(0.0).to_numpy(),
            guard.to_numpy(),
        ]
    )
    se = out["se"].to_numpy()
    t = np.where(se > 0, B / np.where(se > 0, se, 1.0), 0.0)
    t = np.where(t > NOTE_SHARE, t, 0.0)
    c = bias_aware_critical_value(t, 0.05)
    out["lower"] = out["est"] - c * se
    out["upper"] = out["est"] + c * se
    return out


def main(argv: list[str] | None = None) -> None:
    """Compare rules on recorded replications; print one table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reps", nargs="+", help="*_reps.csv files of benchmarks/validate.py")
    parser.add_argument("--rules", default="1,1.333,2", help="comma list of K")
    parser.add_argument("--out", default=None, help="write the table as CSV here too")
    args = parser.parse_args(argv)
    reps = pd.concat([pd.read_csv(p) for p in args.reps], ignore_index=True)
    missing = {"bound_shift", "bound_cap", "bound_guard"} - set(reps.columns)
    if missing:
        raise SystemExit(f"these replications do not record the bound's parts: {missing}")
    rules = [float(v) for v in args.rules.split(",")]
    ok = reps.status == "ok"
    check = intervals(reps[ok], RECORDED)
    err = np.max(
        np.abs(check[["lower", "upper"]].to_numpy() - reps.loc[ok, ["lower", "upper"]].to_numpy())
    )
    scale = float(np.median(reps.loc[ok, "se"]))
    print(
        f"K = {RECORDED:g} reproduces the recorded intervals to {err:.2e} (median SE {scale:.3g})"
    )
    keys = ["design", "alpha", "n", "param"]
    tables = {k: summarise(intervals(reps, k)).set_index(keys) for k in rules}
    base = tables[rules[0]]
    # the share of fits whose guard part alone would widen the interval
    bites = (
        (reps.bound_guard.fillna(0.0) > NOTE_SHARE * reps.se)
        .groupby([reps[k] for k in keys])
        .mean()
    )
    rows = []
    for key in base.index:
        row = dict(zip(keys, key, strict=True))
        row["bias/SE"] = base.loc[key, "bias_se"]
        row["SE/MCsd"] = base.loc[key, "se_ratio"]
        row["guard bites"] = float(bites.loc[key])
        for k in rules:
            t = tables[k].loc[key]
            row[f"cover K={k:g}"] = t.coverage
            row[f"CI len K={k:g}"] = t.ci_length / base.loc[key, "ci_length"]
            row[f"verdict K={k:g}"] = t.verdict
        rows.append(row)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    for k in rules:
        v = table[f"verdict K={k:g}"]
        print(
            f"K = {k:g}: {int((v == 'pass').sum())} of {len(v)} cells pass; "
            f"median CI length {table[f'CI len K={k:g}'].median():.3f} x, "
            f"max {table[f'CI len K={k:g}'].max():.3f} x"
        )
    if args.out:
        table.to_csv(args.out, index=False, float_format="%.3f")


if __name__ == "__main__":
    main()
