"""Other readings of the estimate below alpha = 1, measured against the default (issue 14).

Below ``alpha = 1`` every default fit of :class:`privinfer.PrivateATE`,
:class:`privinfer.PrivateATT` and :class:`privinfer.PrivatePOM` runs the fold-block
bootstrap: 30 draws that reweight the blocks of rows of every fold and re-run the whole
nuisance stage, private CV of sieve and ridge included (``privinfer.models._foldboot``).
At small effective sample sizes :math:`n\\alpha^2` the CV choices jump from one release
to the next, and the releases that miss are those with extreme choices. This script
measures two ways of reading the same fits, on the replications of
``benchmarks/validate.py`` (same seeds: the same data, releases and folds):

* ``bagged``: the mean of the 30 bootstrap refits instead of the estimate itself,
  i.e. bootstrap smoothing of the CV choice (bagging; Breiman, 1996; Efron, 2014), with
  the default standard error (which is the bootstrap's spread of the *unbagged*
  estimate, so it is conservative for the bagged one);
* ``--variant outcome-loose``: the outcome fits replaced by their looser comparison fits
  (the richest sieve at the smallest ridge the CV cannot tell from the chosen one), the
  Riesz fits as chosen: undersmoothing the outcome, so that the product of the two fits'
  shrinkage (the regularisation bias) is smaller;
* ``--variant riesz-loose``: the same for the Riesz fits of the arms (the ATT's odds fit
  as chosen);
* ``--draws B``: ``B`` bootstrap draws instead of 30, keeping each draw's block counts,
  and a third reading: the bagged estimate with its infinitesimal-jackknife standard
  error, bias-corrected for the finite ``B`` (Efron, 2014; Wager, Hastie and Efron, 2014).

None is the package's estimator; the script reads internal objects (it wraps the
bootstrap and the nuisance stage of ``privinfer.models._onestep``) and is a study, not
an API. Plain intervals ``estimate +- 1.96 SE`` for every reading (no bias-aware
widening), so the readings meet on the same footing.

Usage::

    python benchmarks/bagging.py --designs overlap_s --alphas 0.5 --n 4000 --reps 100 \\
        --estimands ATT,POM --jobs 2 --seed 91
    python benchmarks/bagging.py --variant outcome-loose --designs overlap_s --alphas 0.5 \\
        --n 4000 --reps 100 --estimands ATT --seed 91
    python benchmarks/bagging.py --designs overlap_s --alphas 0.5 --n 4000 --reps 40 \\
        --estimands POM,ATT --jobs 1 --seed 141 --draws 400
    python benchmarks/bagging.py --quick
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import validate as V

from privinfer.models import _onestep

#: The draws of the last fold-block bootstrap of this process (its estimate columns first).
_LAST: dict[str, Any] = {}


def ij_se(draws: np.ndarray, counts: np.ndarray) -> np.ndarray:
    r"""Bias-corrected infinitesimal-jackknife SE of the bagged estimate (per column).

    :math:`\hat V_{IJ} = \sum_j \widehat{\mathrm{cov}}_b(N_{bj}, t_b)^2` over the
    resampled blocks (Efron, 2014), minus its Monte Carlo bias
    :math:`\sum_j \widehat{\mathrm{var}}(N_{bj})\,\widehat{\mathrm{var}}(t_b)/B`
    (Wager, Hastie and Efron, 2014); floored at zero.
    """
    B = draws.shape[0]
    dn = counts - counts.mean(axis=0)
    dt = draws - draws.mean(axis=0)
    cov = dn.T @ dt / B  # (units, P)
    v = (cov**2).sum(axis=0) - dn.var(axis=0).sum() * dt.var(axis=0) / B
    return np.sqrt(np.maximum(v, 0.0))


def _install(variant: str) -> None:
    """Wrap the bootstrap (to keep its draws) and, for a variant, the nuisance stage."""
    boot = _onestep.bootstrap_se

    def keep(*args: Any, **kwargs: Any) -> Any:
        if _LAST.get("n_draws"):  # --draws: the study's draw count instead of N_DRAWS
            args = (*args[:5], _LAST["n_draws"])
            kwargs.pop("n_draws", None)
        out = boot(*args, **kwargs)
        _LAST["draws"] = None if out is None else out.draws
        _LAST["counts"] = None if out is None else out.counts
        return out

    _onestep.bootstrap_se = keep
    if variant in ("outcome-loose", "riesz-loose"):
        fit_series = _onestep.fit_series
        which = variant.split("-")[0]

        def loose(*args: Any, **kwargs: Any) -> Any:
            kwargs["with_loose"] = True
            fits = fit_series(*args, **kwargs)
            swapped = tuple(
                dataclasses.replace(c, coefs=c.loose.copy()) if np.any(c.loose) else c
                for c in getattr(fits, which)
            )
            return dataclasses.replace(fits, **{which: swapped})

        _onestep.fit_series = loose


def _replication(task: dict[str, Any]) -> list[dict[str, Any]]:
    """One replication of one cell: the estimate, its SE and the bootstrap draws' mean."""
    from threadpoolctl import threadpool_limits

    if not _LAST.get("installed"):
        _LAST["n_draws"] = task.get("draws")
        _install(task["variant"])
        _LAST["installed"] = True
    design = V.DESIGNS[task["design"]]
    alpha, n, rep = float(task["alpha"]), int(task["n"]), int(task["rep"])
    rows = []
    with threadpool_limits(limits=1):
        mech, released, s_fit, truths = V.replication(task["seed"], design.name, alpha, n, rep)
        for estimand in task["estimands"]:
            _LAST["draws"] = None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = (
                    V.MODELS[estimand]
                    .from_formula(design.formula, released, mechanism=mech)
                    .fit(random_state=np.random.default_rng(s_fit))
                )
            draws = _LAST["draws"]
            ij = (
                None if draws is None or not _LAST.get("n_draws") else ij_se(draws, _LAST["counts"])
            )
            for j, name in enumerate(res.params.index):
                rows.append(
                    {
                        "design": design.name,
                        "alpha": alpha,
                        "n": n,
                        "rep": rep,
                        "param": name,
                        "truth": truths[name],
                        "est": float(res.params[name]),
                        "se": float(res.bse[name]),
                        "bagged": np.nan if draws is None else float(draws[:, j].mean()),
                        "se_ij": np.nan if ij is None else float(ij[j]),
                        "se_boot": np.nan if draws is None else float(draws[:, j].std(ddof=1)),
                    }
                )
    return rows


def summarise(reps: pd.DataFrame) -> pd.DataFrame:
    """Per cell and reading: bias / SE, SE / MC sd and coverage of ``+- 1.96 SE``."""
    out = []
    for key, g in reps.groupby(["design", "alpha", "n", "param"]):
        readings = [("estimate", "est", "se"), ("bagged", "bagged", "se")]
        if "se_ij" in g and g.se_ij.notna().all():
            readings.append(("bagged, IJ SE", "bagged", "se_ij"))
        for label, reading, se_col in readings:
            v = g[reading]
            if v.isna().any():
                continue
            err = v - g.truth
            se = g[se_col]
            out.append(
                {
                    **dict(zip(["design", "alpha", "n", "param"], key, strict=True)),
                    "reading": label,
                    "R": len(g),
                    "bias/SE": err.mean() / se.mean(),
                    "SE/MCsd": se.mean() / v.std(ddof=1),
                    "MC sd": v.std(ddof=1),
                    "cover": float((err.abs() <= 1.96 * se).mean()),
                }
            )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--designs", default="overlap_s")
    p.add_argument("--alphas", default="0.5")
    p.add_argument("--n", type=int, default=4000)
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--estimands", default="ATT,POM")
    p.add_argument("--seed", type=int, default=91)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument(
        "--variant", choices=["default", "outcome-loose", "riesz-loose"], default="default"
    )
    p.add_argument("--draws", type=int, default=None, help="bootstrap draws (IJ SE)")
    p.add_argument("--quick", action="store_true", help="8 replications of one cell")
    p.add_argument("--out", default=None, help="CSV of every replication")
    a = p.parse_args(argv)
    reps = 8 if a.quick else a.reps
    tasks = [
        {
            "design": d,
            "alpha": float(al),
            "n": a.n,
            "rep": k,
            "seed": a.seed,
            "estimands": a.estimands.split(","),
            "variant": a.variant,
            "draws": a.draws,
        }
        for d in a.designs.split(",")
        for al in a.alphas.split(",")
        for k in range(reps)
    ]
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max_workers=a.jobs) as ex:
        for r in ex.map(_replication, tasks):
            rows += r
    frame = pd.DataFrame(rows)
    if a.out:
        frame.to_csv(a.out, index=False)
    table = summarise(frame)
    pd.set_option("display.width", 200)
    print(f"variant: {a.variant}; {len(tasks)} replications in {time.perf_counter() - t0:.0f} s")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
