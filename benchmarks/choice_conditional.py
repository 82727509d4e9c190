"""Errors of one validation cell conditional on what the private CV chose, release by release.

An estimator whose interval covers 95% over all releases can still be biased given
what it chose: if the CV takes a coarse fit in some releases and that fit carries a
bias, those releases' intervals miss together while the others cover. This script refits
the releases of one cell of ``validate.py`` (the same seeds, so replication ``k`` is
the release ``validate.py`` fits as its ``k``-th), reads each nuisance fit's chosen sieve
size and ridge from the summary's regularisation lines (``Outcome[k]``, ``Riesz[k]``,
``Odds (ATT)``), and prints, per fit, the error over the standard error, the coverage
and the mean standard error for each chosen size, with the correlation of the error and
the log standard error over all releases (near zero where the standard error is a
fixed precision; strongly negative where the releases whose fits are coarse report small
standard errors and miss on one side).

``--variants`` refits every release with other model options (a JSON list of option
dicts) and prints the mean absolute change of the estimate in standard errors and its
correlation with the default's error: a bias that every variant shares is a property of
the release, not of a choice the variant changes.

Usage::

    python benchmarks/choice_conditional.py --design dollar_scale --alpha 0.7 \\
        --estimand ATT --reps 40 --seed 1501 --jobs 2
    python benchmarks/choice_conditional.py --design dollar_scale --alpha 0.7 \\
        --estimand ATT --reps 8 --seed 1501 \\
        --variants '[{"split_nuisances": false}, {"degree": 5, "ridge": "cv"}]'

Writes every release's row to ``--out`` (CSV).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from validate import DESIGNS, MODELS, replication

_FIT_LINE = re.compile(r"(\d+) fns, ridge ([0-9.e+-]+)")


def _fit(design: str, alpha: float, n: int, seed: int, rep: int, estimand: str,
         options: dict[str, Any]) -> tuple[Any, dict[str, float]]:  # fmt: skip
    """One release's results and truths."""
    d = DESIGNS[design]
    mech, released, s_fit, truths = replication(seed, design, alpha, n, rep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MODELS[estimand].from_formula(
            d.formula, released, mechanism=mech, **{**d.model_options, **options}
        )
        res = model.fit(random_state=np.random.default_rng(s_fit))
    return res, truths


def release_rows(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of the releases ``task["reps"]``: estimate, truth, SE, and each fit's choice
    (single-threaded BLAS: the chunks run in parallel).
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _release_rows(task)


def _release_rows(task: dict[str, Any]) -> list[dict[str, Any]]:
    d = DESIGNS[task["design"]]
    rows = []
    for rep in task["reps"]:
        res, truths = _fit(
            task["design"], task["alpha"], task["n"], task["seed"], rep, task["estimand"], {}
        )
        # each variant refitted once per release (all its parameters read from that fit)
        alts = [
            _fit(task["design"], task["alpha"], task["n"], task["seed"], rep,
                 task["estimand"], opts)[0]
            for opts in task["variants"]
        ]  # fmt: skip
        fits: dict[str, Any] = {}
        ci = res.conf_int()  # bias-aware where the bias bound widened it
        for key, value in res._record.facts:
            m = _FIT_LINE.match(str(value))
            if m:
                name = key.rstrip(":").replace(" (ATT)", "")
                fits[f"{name} size"] = int(m.group(1))
                fits[f"{name} ridge"] = float(m.group(2))
        for name in d.param_names(task["estimand"]):
            row = {"rep": rep, "param": name, "truth": truths[name],
                   "est": float(res.params[name]), "se": float(res.bse[name]),
                   "lower": float(ci.loc[name, "lower"]), "upper": float(ci.loc[name, "upper"])}  # fmt: skip
            for j, alt in enumerate(alts):
                row[f"variant{j}"] = float(alt.params[name])
            rows.append({**row, **fits})
    return rows


def tables(df: pd.DataFrame, variants: list[dict[str, Any]]) -> str:
    """Per fit and chosen size: releases, mean error/SE, coverage, mean SE."""
    df = df.assign(t=(df.est - df.truth) / df.se, err=df.est - df.truth)
    df["covered"] = ((df.lower <= df.truth) & (df.truth <= df.upper)).astype(float)
    out = []
    for name, g in df.groupby("param"):
        corr = float(np.corrcoef(g.err, np.log(g.se))[0, 1]) if len(g) > 2 else float("nan")
        out.append(f"{name}: {len(g)} releases, mean error/SE {g.t.mean():+.2f}, coverage "
                   f"{g.covered.mean():.3f}, corr(error, log SE) {corr:+.2f}")  # fmt: skip
        for col in [c for c in g.columns if c.endswith(" size")]:
            t = g.groupby(col).agg(
                releases=("t", "size"), mean_t=("t", "mean"), coverage=("covered", "mean"),
                mean_se=("se", "mean"), mean_error=("err", "mean"),
            )  # fmt: skip
            out.append(f"  by {col}:")
            out.append("    " + t.round(3).to_string().replace("\n", "\n    "))
        for j, opts in enumerate(variants):
            move = (g[f"variant{j}"] - g.est) / g.se
            corr_v = np.corrcoef(g[f"variant{j}"] - g.truth, g.err)[0, 1]
            out.append(f"  variant {json.dumps(opts)}: mean |change| {move.abs().mean():.2f} SE, "
                       f"corr(variant error, error) {corr_v:+.2f}")  # fmt: skip
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", required=True)
    ap.add_argument("--alpha", type=float, default=0.7)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--estimand", default="ATT", choices=sorted(MODELS))
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--first-rep", type=int, default=0)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--variants", default="[]", help="JSON list of model-option dicts")
    ap.add_argument("--out", default="choice_conditional.csv")
    args = ap.parse_args(argv)
    variants = json.loads(args.variants)
    reps = list(range(args.first_rep, args.first_rep + args.reps))
    chunks = [reps[i :: max(args.jobs, 1)] for i in range(max(args.jobs, 1))]
    tasks = [
        {"design": args.design, "alpha": args.alpha, "n": args.n, "seed": args.seed,
         "estimand": args.estimand, "reps": c, "variants": variants}
        for c in chunks if c
    ]  # fmt: skip
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            rows = [r for part in pool.map(release_rows, tasks) for r in part]
    else:
        rows = [r for t in tasks for r in release_rows(t)]
    df = pd.DataFrame(rows).sort_values(["param", "rep"])
    df.to_csv(args.out, index=False)
    print(f"{args.design}, alpha {args.alpha:g}, n {args.n}, {args.estimand}, seed {args.seed}")
    print(tables(df, variants))


if __name__ == "__main__":
    main()
