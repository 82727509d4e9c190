r"""Two runs of ``benchmarks/validate.py`` on the same releases, cell by cell.

Runs with the same ``--seed``, designs, alphas and ``n`` fit the same releases, so a
variant (a model option, a research switch) can be compared release by release: per
cell, each run's coverage and verdict, and the ratios (second run over first) of the
mean interval length and of the root mean squared error. Prints the table and a summary
(cells passing in each run, the median and extreme ratios).

::

    python benchmarks/validate.py --alphas 1 --n 4000 --reps 12 --seed 1402 --out a.csv
    python benchmarks/validate.py --alphas 1 --n 4000 --reps 12 --seed 1402 \
        --model-options '{"n_folds": 10}' --out b.csv
    python benchmarks/compare_runs.py a_reps.csv b_reps.csv --names five,ten

More than two runs compare each of the others with the first, side by side.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import summarise

KEYS = ["design", "alpha", "n", "param"]


def compare(a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str]) -> pd.DataFrame:
    """Per cell: coverage and verdict of both runs, CI length and RMSE ratios (b over a).

    The two runs must hold the same releases: the same cells, replications and truths.
    """
    on = [*KEYS, "rep"]
    left = a[[*on, "truth"]].sort_values(on).reset_index(drop=True)
    right = b[[*on, "truth"]].sort_values(on).reset_index(drop=True)
    if not left.equals(right):
        raise ValueError("the runs do not hold the same cells, replications and truths")
    sa, sb = summarise(a).set_index(KEYS), summarise(b).set_index(KEYS)

    def rmse(t: pd.DataFrame) -> pd.Series:
        ok = t[t.status == "ok"]
        return ((ok.est - ok.truth) ** 2).groupby([ok[k] for k in KEYS]).mean() ** 0.5

    ra, rb = rmse(a), rmse(b)
    x, y = names
    out = pd.DataFrame(
        {
            f"bias/SE {x}": sa.bias_se,
            f"bias/SE {y}": sb.bias_se,
            f"cover {x}": sa.coverage,
            f"cover {y}": sb.coverage,
            f"CI len {y}/{x}": sb.ci_length / sa.ci_length,
            f"RMSE {y}/{x}": rb / ra,
            f"verdict {x}": sa.verdict,
            f"verdict {y}": sb.verdict,
        }
    )
    return out.reset_index()


def compare_many(runs: list[pd.DataFrame], names: list[str]) -> pd.DataFrame:
    """:func:`compare` of every run after the first against the first, side by side."""
    x = names[0]
    table = None
    for run, y in zip(runs[1:], names[1:], strict=True):
        t = compare(runs[0], run, (x, y))
        if table is None:
            table = t
        else:
            base = [f"bias/SE {x}", f"cover {x}", f"verdict {x}"]
            table = table.merge(t.drop(columns=base), on=KEYS)
    assert table is not None
    lead = [*KEYS, f"bias/SE {x}", f"cover {x}", f"verdict {x}"]
    return table[lead + [c for c in table.columns if c not in lead]]


def print_summary(table: pd.DataFrame, names: list[str]) -> None:
    """Cells passing in each run of a :func:`compare_many` table, and the median and
    extreme ratios of every other run over the first."""
    for label in names:
        v = table[f"verdict {label}"]
        print(f"{label}: {int((v == 'pass').sum())} of {len(v)} cells pass")
    x = names[0]
    for y in names[1:]:
        for col in (f"CI len {y}/{x}", f"RMSE {y}/{x}"):
            r = table[col].to_numpy()
            print(
                f"{col}: median {np.nanmedian(r):.3f}, min {np.nanmin(r):.3f}, "
                f"max {np.nanmax(r):.3f}"
            )


def main(argv: list[str] | None = None) -> None:
    """Print the paired table of two (or more) runs and its summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("first", help="*_reps.csv of the first run")
    parser.add_argument(
        "others", nargs="+", help="*_reps.csv of the other runs (the same releases)"
    )
    parser.add_argument("--names", default=None, help="labels, comma-separated")
    parser.add_argument("--out", default=None, help="write the table as CSV here too")
    args = parser.parse_args(argv)
    files = [args.first, *args.others]
    names = (
        args.names.split(",") if args.names else ["first", *(f"run{i}" for i in range(2, 99))]
    )[: len(files)]
    if len(names) != len(files):
        parser.error(f"--names needs {len(files)} labels")
    table = compare_many([pd.read_csv(f) for f in files], names)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    print_summary(table, names)
    if args.out:
        table.to_csv(args.out, index=False, float_format="%.3f")


if __name__ == "__main__":
    main()
