"""Side by side at alpha = 1: privinfer's default fit and DoubleML's IRM on the same data.

For every design of ``validate_designs.py`` and replication, the same raw data (the same
seeds as ``validate.py``'s alpha = 1 cells) go to

* :class:`privinfer.PrivateATE` / :class:`privinfer.PrivateATT` with default options (or
  ``--model-options``), through the alpha = 1 mechanism (the data are released unchanged);
* ``doubleml.DoubleMLIRM`` (scores ``ATE`` and ``ATTE``), 5 folds, propensity trimming at
  0.01, with adaptive learners: cubic B-spline features (5 knots) of every continuous
  covariate plus the binary columns and one-hot factor levels, fed to ``LassoCV`` for the
  outcome regressions (3-fold CV over 20 penalties) and to ``LogisticRegressionCV`` (L2,
  8 penalties, 3-fold CV on the log loss) for the propensity; the ATTE score reuses the
  ATE fit's nuisance predictions.

Designs with a multi-valued treatment (``Design.arms > 2``) compare ``PrivateATE`` /
``PrivatePOM`` with ``doubleml.DoubleMLAPOS`` (one APO score per level, the same learners
and trimming; ``causal_contrast`` against level 0 for the effects), per parameter.

Per design x n x estimand it prints both coverages, their difference with its Monte Carlo
SE, both mean interval lengths and their ratio, and checks issue 14's criteria: coverage
no worse than DoubleML's (up to 2 MC SEs of the paired difference) and CI length at most
1.3 times DoubleML's.

Usage::

    python benchmarks/validate_doubleml.py --quick          # 30 reps, n = 4000
    python benchmarks/validate_doubleml.py --n 1000,4000 --reps 200 --jobs 1 --out dml.csv
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# the sibling modules, and this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from validate import _rep_seed
from validate_designs import DESIGNS, available, privatize

import privinfer as pi

LENGTH_RATIO_MAX = 1.3


def _folds(d: np.ndarray, n_folds: int, rng: np.random.Generator) -> list[tuple]:
    """Folds stratified by treatment, drawn from our own stream (not numpy's global one)."""
    folds = np.empty(d.size, dtype=np.int64)
    for level in np.unique(d):
        idx = rng.permutation(np.flatnonzero(d == level))
        folds[idx] = np.arange(idx.size) % n_folds
    return [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(n_folds)]


def _features(raw: pd.DataFrame, design_name: str) -> tuple[pd.DataFrame, list[int], list[int]]:
    """Covariate frame for DoubleML: factors one-hot; indices of continuous, binary columns."""
    X = pd.get_dummies(raw[DESIGNS[design_name].covariate_columns], drop_first=True, dtype=float)
    cont = [j for j, c in enumerate(X) if X[c].nunique() > 2]
    binary = [j for j in range(X.shape[1]) if j not in cont]
    return X.astype(float), cont, binary


def _learners(cont: list[int], binary: list[int]) -> tuple[Any, Any]:
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LassoCV, LogisticRegressionCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import SplineTransformer, StandardScaler

    def feats() -> ColumnTransformer:
        return ColumnTransformer(
            [("spline", SplineTransformer(n_knots=5, degree=3), cont)]
            + ([("bin", "passthrough", binary)] if binary else [])
        )

    ml_g = make_pipeline(feats(), StandardScaler(), LassoCV(cv=3, alphas=20, max_iter=5000))
    ml_m = make_pipeline(
        feats(),
        StandardScaler(),
        LogisticRegressionCV(Cs=8, cv=3, scoring="neg_log_loss", max_iter=2000),
    )
    return ml_g, ml_m


def _same_data(task: dict[str, Any], mech: pi.AlphaIdentity, rep: int) -> tuple[Any, ...]:
    """Replication ``rep`` for both methods: privinfer's release and fit seed, DoubleML's
    data, folds and the column kinds of its learners (seeds as ``validate.py``'s)."""
    import doubleml

    design, n = DESIGNS[task["design"]], int(task["n"])
    s_data, s_rel, s_fit, s_dml = _rep_seed(task["seed"], design.name, 1.0, n, rep).spawn(4)
    raw = design.simulate(n, np.random.default_rng(s_data))
    released = privatize(mech, raw, design.public, np.random.default_rng(s_rel))
    X, cont, binary = _features(raw, design.name)
    frame = X.assign(y=raw.y.to_numpy(), d=raw.d.to_numpy())
    dml_data = doubleml.DoubleMLData(frame, y_col="y", d_cols="d", x_cols=list(X.columns))
    smpls = _folds(raw.d.to_numpy(), 5, np.random.default_rng(s_dml))
    return released, s_fit, dml_data, smpls, cont, binary


def run_task(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Replications of one design x n, single-threaded BLAS (processes run in parallel)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _run_task(task)


def _doubleml_irm(dml_data: Any, smpls: list, cont: list[int], binary: list[int]) -> dict:
    """DoubleML's IRM: ``{"ATE": (est, lower, upper), "ATT": ...}``; the ATTE score reuses
    the ATE fit's nuisance predictions."""
    import doubleml

    ml_g, ml_m = _learners(cont, binary)
    out, fitted = {}, None
    for estimand, score in (("ATE", "ATE"), ("ATT", "ATTE")):
        irm = doubleml.DoubleMLIRM(
            dml_data,
            ml_g,
            ml_m,
            n_folds=5,
            score=score,
            trimming_threshold=0.01,
            draw_sample_splitting=False,
        )
        irm.set_sample_splitting(all_smpls=[smpls])
        if fitted is None:
            irm.fit(store_predictions=True)
            fitted = {"d": {k: irm.predictions[k][:, :, 0] for k in ("ml_g0", "ml_g1", "ml_m")}}
        else:
            irm.fit(external_predictions=fitted)
        ci = irm.confint().iloc[0]
        out[estimand] = (float(irm.coef[0]), float(ci.iloc[0]), float(ci.iloc[1]))
    return out


def _doubleml_apos(
    dml_data: Any, smpls: list, cont: list[int], binary: list[int], arms: int
) -> dict:
    """DoubleML's APOS for a multi-valued treatment: ``E[Y(k)]`` for every level and,
    by its ``causal_contrast`` against level 0, ``ATE[k vs 0]``."""
    import doubleml

    ml_g, ml_m = _learners(cont, binary)
    levels = list(range(arms))
    apos = doubleml.DoubleMLAPOS(
        dml_data,
        ml_g,
        ml_m,
        treatment_levels=levels,
        n_folds=5,
        trimming_threshold=0.01,
        draw_sample_splitting=False,
    )
    apos.set_sample_splitting(all_smpls=[smpls])
    apos.fit()
    ci = apos.confint()
    out = {f"E[Y({k})]": (float(apos.coef[k]), *map(float, ci.iloc[k])) for k in levels}
    contrast = apos.causal_contrast(reference_levels=0)
    ci = contrast.confint()
    for j, k in enumerate(levels[1:]):
        out[f"ATE[{k} vs 0]"] = (float(contrast.thetas[j]), *map(float, ci.iloc[j]))
    return out


def _run_task(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Replications of one design x n: privinfer and DoubleML on the same data.

    A binary treatment: ``PrivateATE`` / ``PrivateATT`` against DoubleML's IRM. A
    multi-valued one: ``PrivateATE`` / ``PrivatePOM`` against DoubleML's APOS (one APO
    score per level, the same learners and trimming). One row per replication, method
    and parameter (``estimand`` is the parameter's name).
    """
    design = DESIGNS[task["design"]]
    n = int(task["n"])
    mech = pi.AlphaIdentity(1.0, design.reference())
    truths = design.param_truths()
    multi = design.arms > 2
    models = (
        ("ATE", pi.PrivateATE),
        ("POM" if multi else "ATT", pi.PrivatePOM if multi else pi.PrivateATT),
    )
    options = task.get("model_options") or {}
    rows = []
    for rep in task["reps"]:
        released, s_fit, dml_data, smpls, cont, binary = _same_data(task, mech, rep)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dml = (
                _doubleml_apos(dml_data, smpls, cont, binary, design.arms)
                if multi
                else _doubleml_irm(dml_data, smpls, cont, binary)
            )
        t_dml = time.perf_counter() - t0
        for estimand, model in models:
            names = design.param_names(estimand)
            t0 = time.perf_counter()
            error = None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    res = model.from_formula(
                        design.formula, released, mechanism=mech, **options
                    ).fit(random_state=np.random.default_rng(s_fit))
                    ci = res.conf_int()
                    ours = {
                        p: (
                            float(res.params[p]),
                            float(ci.loc[p, "lower"]),
                            float(ci.loc[p, "upper"]),
                        )
                        for p in names
                    }
                except Exception as exc:  # a refusal counts as a miss below
                    ours = {p: (np.nan, np.nan, np.nan) for p in names}
                    error = type(exc).__name__
            t_ours = time.perf_counter() - t0
            for p in names:
                base = {"design": design.name, "n": n, "rep": rep, "estimand": p}
                base["truth"] = truths[p]
                if error:
                    base["error"] = error
                for who, (e, lo, hi), secs in (
                    ("privinfer", ours[p], t_ours),
                    ("doubleml", dml[p], t_dml / 2),
                ):
                    rows.append(
                        {**base, "method": who, "est": e, "lower": lo, "upper": hi, "seconds": secs}
                    )
    return rows


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    """Coverage and CI length of both methods per design x n x estimand, paired."""
    out = []
    for (design, n, estimand), g in rows.groupby(["design", "n", "estimand"]):
        wide = g.pivot_table(index="rep", columns="method", values=["est", "lower", "upper"])
        wide = wide.dropna()
        R = len(wide)
        t = float(g.truth.iloc[0])
        cov = {
            m: ((wide["lower"][m] <= t) & (t <= wide["upper"][m])).to_numpy()
            for m in ("privinfer", "doubleml")
        }
        length = {m: (wide["upper"][m] - wide["lower"][m]).to_numpy() for m in cov}
        diff = cov["privinfer"].astype(float) - cov["doubleml"]
        diff_mcse = diff.std(ddof=1) / np.sqrt(R) if R > 1 else np.nan
        ratio = length["privinfer"].mean() / length["doubleml"].mean()
        row = {
            "design": design,
            "n": n,
            "estimand": estimand,
            "reps": R,
            "cov_privinfer": cov["privinfer"].mean(),
            "cov_doubleml": cov["doubleml"].mean(),
            "cov_diff": diff.mean(),
            "cov_diff_mcse": diff_mcse,
            "len_privinfer": length["privinfer"].mean(),
            "len_doubleml": length["doubleml"].mean(),
            "len_ratio": ratio,
            "bias_privinfer": wide["est"]["privinfer"].mean() - t,
            "bias_doubleml": wide["est"]["doubleml"].mean() - t,
            "sec_privinfer": g.seconds[g.method == "privinfer"].mean(),
            "sec_doubleml": g.seconds[g.method == "doubleml"].mean(),
        }
        fails = []
        # a zero MC SE (identical coverage indicators) still allows no shortfall
        if diff.mean() + 2 * np.nan_to_num(diff_mcse) < 0:
            fails.append("coverage")
        if ratio > LENGTH_RATIO_MAX:
            fails.append("length")
        row["verdict"] = "pass" if not fails else f"FAIL({','.join(fails)})"
        out.append(row)
    return pd.DataFrame(out)


DOCS_COLUMNS = [
    ("design", "design", "{}"),
    ("estimand", "estimand", "{}"),
    ("n", "n", "{}"),
    ("reps", "R", "{}"),
    ("cov_privinfer", "cover (privinfer)", "{:.3f}"),
    ("cov_doubleml", "cover (DoubleML)", "{:.3f}"),
    ("cov_diff_mcse", "MCSE of diff.", "{:.3f}"),
    ("len_ratio", "CI length ratio", "{:.2f}"),
    ("bias_privinfer", "bias (privinfer)", "{:+.3f}"),
    ("bias_doubleml", "bias (DoubleML)", "{:+.3f}"),
    ("verdict", "verdict", "{}"),
]


def docs_csv(table: pd.DataFrame, path: Path) -> None:
    """The main columns, formatted, for an rst ``csv-table`` include."""
    pd.DataFrame(
        {h: [f.format(v) for v in table[c]] for c, h, f in DOCS_COLUMNS},
    ).to_csv(path, index=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="30 reps, n = 4000")
    parser.add_argument("--designs", default=None)
    parser.add_argument("--n", default=None, help="comma list (default 1000,4000)")
    parser.add_argument("--reps", type=int, default=None, help="default 200; --quick 30")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=14, help="same seeds as validate.py")
    parser.add_argument("--model-options", default="{}")
    parser.add_argument("--out", default="validate_doubleml.csv")
    parser.add_argument("--docs-csv", default=None, help="formatted CSV for the docs include")
    parser.add_argument("--render", default=None, help="re-render from a summary CSV")
    args = parser.parse_args(argv)
    if args.render:
        table = pd.read_csv(args.render)
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        if args.docs_csv:
            docs_csv(table, Path(args.docs_csv))
        return
    designs = args.designs.split(",") if args.designs else available()
    clustered = [d for d in designs if d in DESIGNS and DESIGNS[d].model_options]
    if clustered:  # DoubleMLData has no cluster or weights columns for the IRM here
        parser.error(f"design(s) {clustered} need clusters or weights; not compared here")
    ns = [int(v) for v in args.n.split(",")] if args.n else ([4000] if args.quick else [1000, 4000])
    reps = args.reps or (30 if args.quick else 200)
    options = json.loads(args.model_options)
    chunk = 10
    tasks = [
        {
            "design": d,
            "n": n,
            "reps": range(s, min(s + chunk, reps)),
            "seed": args.seed,
            "model_options": options,
        }
        for n in sorted(ns, reverse=True)
        for d in designs
        for s in range(0, reps, chunk)
    ]
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    if args.jobs <= 1:
        for k, task in enumerate(tasks, 1):
            rows.extend(run_task(task))
            print(
                f"  [{k}/{len(tasks)}] {task['design']} n={task['n']} ({time.perf_counter() - t0:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    else:
        with ProcessPoolExecutor(args.jobs) as pool:
            futs = {pool.submit(run_task, t): t for t in tasks}
            for k, fut in enumerate(as_completed(futs), 1):
                rows.extend(fut.result())
                task = futs[fut]
                print(
                    f"  [{k}/{len(tasks)}] {task['design']} n={task['n']} ({time.perf_counter() - t0:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    frame = pd.DataFrame(rows)
    out = Path(args.out)
    frame.to_csv(out.with_name(out.stem + "_reps.csv"), index=False)
    table = summarise(frame)
    table.to_csv(out, index=False)
    pd.set_option("display.width", 250)
    print(
        f"alpha = 1: privinfer {options or 'defaults'} vs DoubleMLIRM or APOS (splines + LassoCV / "
        f"LogisticRegressionCV, trimming 0.01), {reps} reps, {time.perf_counter() - t0:.0f} s"
    )
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.docs_csv:
        docs_csv(table, Path(args.docs_csv))
    print(
        f"cells failing (coverage below DoubleML's or CI length > {LENGTH_RATIO_MAX} x): "
        f"{int(table.verdict.str.startswith('FAIL').sum())} of {len(table)}"
    )


if __name__ == "__main__":
    main()
