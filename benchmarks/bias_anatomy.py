"""The cells of ``benchmarks/validate.py`` runs that fail the bias band, against the bias bound.

For every cell below ``alpha = 1`` whose bias exceeds 0.15 standard errors by more than
two Monte Carlo standard errors (the issue's band, as in ``validate.py``), prints the
bias in units of the mean standard error and of its Monte Carlo standard error, the mean
bias bound of the fits (``bound_shift + bound_cap + bound_guard``, the three parts the
bias-aware interval adds up) and each part in SE, the shortfall ``|bias| - bound`` in SE
(positive: the bound under-reads the bias), the share of intervals widened for bias and
the coverage. It reads the ``*_reps.csv`` files that ``validate.py`` writes; nothing is
refitted.

Usage::

    python benchmarks/bias_anatomy.py RUN_reps.csv [MORE_reps.csv ...] [--out table.csv]
"""

from __future__ import annotations

import argparse

import pandas as pd
from validate import Z95, band_failures, summarise

#: the parts of the bias bound that ``validate.py`` records per fit
PARTS = ("bound_shift", "bound_cap", "bound_guard")


def anatomy(reps: pd.DataFrame) -> pd.DataFrame:
    """One row per failing cell below ``alpha = 1`` (see the module docstring).

    The cell metrics and the bias band are ``validate.py``'s own (:func:`summarise`,
    :func:`band_failures`); only the bound parts and the widening are read here.

    Examples
    --------
    >>> rows = [dict(design="d", alpha=0.5, n=4000, estimand="ATE", param="ATE", rep=r,
    ...              truth=0.0, est=1.0 + 0.1 * (r % 2), se=1.0, lower=1.0 - Z95,
    ...              upper=1.1 + Z95, status="ok", warnings="", names_n=False, seconds=1.0,
    ...              bound_shift=0.1, bound_cap=0.2, bound_guard=0.0)
    ...         for r in range(10)]
    >>> t = anatomy(pd.DataFrame(rows))
    >>> t[["bias/SE", "bound/SE", "shortfall/SE", "widened"]].round(2).values.tolist()
    [[1.05, 0.3, 0.75, 1.0]]
    """
    keys = ["design", "alpha", "n", "estimand", "param"]
    cells = summarise(reps[reps.alpha < 1])
    cells = cells[["bias" in band_failures(r) for r in cells.itertuples()]]
    d = reps[(reps.status == "ok") & (reps.alpha < 1)].copy()
    d["bound"] = d[list(PARTS)].sum(axis=1)
    d["widened"] = (d.upper - d.lower) / 2 > Z95 * d.se * (1 + 1e-9)
    parts = d.groupby(keys, sort=True)[["bound", *PARTS, "widened"]].mean().reset_index()
    t = cells.merge(parts, on=keys)
    out = pd.DataFrame(
        {
            **{k: t[k] for k in ("design", "alpha", "n", "param")},
            "R": t.reps,
            "bias/SE": t.bias_se,
            "bias/MCSE": t.bias / t.bias_mcse,
            "bound/SE": t.bound / t.mean_se,
            **{f"{p.removeprefix('bound_')}/SE": t[p] / t.mean_se for p in PARTS},
            "shortfall/SE": (t.bias.abs() - t.bound) / t.mean_se,
            "widened": t.widened,
            "cover": t.coverage,
        }
    )
    return out.reset_index(drop=True)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    """Command line: the failing cells of each run, one table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reps", nargs="+", help="*_reps.csv files of validate.py runs")
    ap.add_argument("--out", help="write the table as CSV here too")
    args = ap.parse_args(argv)
    tables = []
    for path in args.reps:
        t = anatomy(pd.read_csv(path))
        t.insert(0, "run", path.rsplit("/", 1)[-1].removesuffix("_reps.csv"))
        tables.append(t)
    table = pd.concat(tables, ignore_index=True)
    shown = table.copy()
    for c in shown.columns:
        if shown[c].dtype == float and c != "alpha":
            shown[c] = shown[c].map(lambda v: f"{v:.2f}")
    print(shown.to_string(index=False))
    under = table["shortfall/SE"] > 0
    print(
        f"\n{len(table)} failing cells; the mean bound under-reads the bias in {int(under.sum())}"
        f" (by at most {table['shortfall/SE'].max():.2f} SE); coverage below 0.90 in "
        f"{int((table.cover < 0.9).sum())}"
    )
    if args.out:
        shown.to_csv(args.out, index=False)
    return table


if __name__ == "__main__":
    main()
