r"""Other ways to read the fold-block bootstrap: which reading of the draws is best?

Below ``alpha = 1`` the reported standard error is the larger of the influence-function
one and the standard deviation of 30 fold-block bootstrap draws, each of which re-runs
the whole nuisance stage, private CV over the sieve candidates included
(:mod:`privinfer.models._foldboot`). The validation study found it too small on some
hard designs and too large on others. This script measures, on the same replications of
the cells where that happens, the rules:

* ``influence``: the influence-function standard error alone (``variance="influence"``);
* ``default``: every draw's CV tries all sub-bases;
* ``mad``: the larger of the influence one and the robust scale of the default's draws,
  1.4826 times their median absolute deviation, which a few wild draws cannot move;
* ``top3``: every draw's CV tries only the 3 sub-bases that scored best for the estimate
  (fewer candidates: faster, less selection noise);
* ``margin2``: every draw's CV tries only the sub-bases whose CV loss for
  the estimate (at their best ridge) was within 2 fold standard errors of the best
  one's (:func:`privinfer.nuisance.regularize.plausible_candidates`): the draws no longer
  pick sieves that the estimate's own CV ruled out;
* ``excess2`` and ``excess3``: the influence variance plus a half or a third of the
  bootstrap's excess over it, :math:`v_\varphi + (v_b - v_\varphi)_+/c` (readings of the
  ``default`` and ``influence`` fits, no extra fit). Where the estimate is a smooth
  function :math:`f(s + E)` of statistics with noise :math:`E` of covariance
  :math:`\Sigma`, a second-order expansion gives it the variance :math:`V_1 + V_2`
  (:math:`V_1 = a'\Sigma a` from the gradient :math:`a`, and
  :math:`V_2 = \tfrac12\mathrm{tr}((H\Sigma)^2)` from the Hessian :math:`H` for Gaussian
  noise). A bootstrap draw perturbs statistics that already carry one noise
  :math:`E_0`: its linear coefficient is :math:`a + HE_0`, and the draws' variance
  averages :math:`V_1 + 3V_2`. ``c = 3`` undoes that triple count; ``c = 2`` goes halfway;
* ``half`` (``--half``): every draw perturbs the statistics by half the bootstrap's
  variance and the draws' deviations are scaled back by :math:`\sqrt 2`
  (``privinfer.models._foldboot._PERTURB_SHARE``): the refits then see about
  :math:`\sqrt{1.5}` instead of :math:`\sqrt 2` times the sample's noise, while the
  linear part of the variance is unchanged.

Per cell it prints SE / Monte Carlo sd and the coverage of ``estimate +- 1.96 SE`` for
every rule (plain intervals, without the bias-aware widening, so that the rules are
compared on the same footing), and the mean seconds per fit of the default, ``top3`` and
``margin2``. ``benchmarks/validate.py`` measures the same rules on every cell with
``--refit-margin``. The estimates are the same under every rule (same seeds, same splits).

Usage::

    python benchmarks/bootstrap_rules.py --quick          # 2 cells, 8 replications
    python benchmarks/bootstrap_rules.py --reps 40 --jobs 2 --out rules.csv
    python benchmarks/bootstrap_rules.py --designs overlap_s,kink_mixed --alphas 0.7,0.5 \
        --estimands ATE,POM --reps 24 --no-refit-rules --jobs 2
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import MODELS, _rep_seed
from validate_designs import DESIGNS, privatize

from privinfer.nuisance.regularize import REFIT_MARGIN

#: (design, alpha, estimand): SE too high with the default rule, then too low without it.
CELLS = [
    ("nsw_censored", 0.7, "ATE"),
    ("kink_mixed", 0.5, "ATT"),
    ("lognormal_clip", 0.7, "POM"),
    ("factor_12", 0.7, "ATE"),
    ("overlap_s", 0.5, "ATE"),
    ("topcoded_income", 0.5, "ATE"),
    ("lognormal_clip", 0.5, "ATE"),
    ("nsw_censored", 0.5, "ATT"),
]
QUICK_CELLS = [("nsw_censored", 0.7, "ATE"), ("overlap_s", 0.5, "ATE")]


def _top3(choice: Any, margin: float) -> list[int]:
    """The 3 sub-bases with the lowest CV loss (at their best ridge); ``margin`` unused."""
    t = choice.table
    finite = t[t["n_floored"] == 0]
    best = (finite if len(finite) else t).groupby("candidate")["loss"].min().nsmallest(3)
    return sorted(int(c) for c in best.index)


def _fit_cell(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Every replication of one cell under the default, ``top3``, ``margin2`` and
    ``influence`` rules (``mad`` and ``excess2``/``excess3`` are readings of the default
    and influence fits)."""
    from threadpoolctl import threadpool_limits

    import privinfer as pi
    import privinfer.models._foldboot as foldboot
    import privinfer.models._nuisances as nuisances
    import privinfer.models._onestep as onestep

    captured: list[Any] = []  # the BootstrapSE of each fit (None where none ran)
    plain = onestep.bootstrap_se
    plain_keep = nuisances.plausible_candidates

    def capture(*args: Any, **kwargs: Any) -> Any:
        out = plain(*args, **kwargs)
        captured.append(out)
        return out

    onestep.bootstrap_se = capture
    design, alpha, estimand = task["design"], task["alpha"], task["estimand"]
    d = DESIGNS[design]
    mech = pi.AlphaIdentity(alpha, d.reference())
    rows = []
    with threadpool_limits(1):
        for rep in range(task["reps"]):
            s_data, s_rel, s_fit = _rep_seed(task["seed"], d.name, alpha, task["n"], rep).spawn(3)
            raw = d.simulate(task["n"], np.random.default_rng(s_data))
            rel = privatize(mech, raw, d.public, np.random.default_rng(s_rel))
            out: dict[str, Any] = {}
            rules = [
                ("default", {}, None, plain_keep),
                ("half", {}, None, plain_keep),
                ("top3", {}, 0.0, _top3),
                ("margin2", {}, REFIT_MARGIN, plain_keep),
                ("influence", {"variance": "influence"}, None, plain_keep),
            ]
            if not task.get("refit_rules", True):
                rules = [r for r in rules if r[0] not in ("top3", "margin2")]
            if not task.get("half", False):
                rules = [r for r in rules if r[0] != "half"]
            for rule, opts, margin, keep in rules:
                nuisances._REFIT_MARGIN = margin
                nuisances.plausible_candidates = keep
                foldboot._PERTURB_SHARE = 0.5 if rule == "half" else 1.0
                captured.clear()
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = MODELS[estimand].from_formula(d.formula, rel, mechanism=mech, **opts).fit(
                        random_state=np.random.default_rng(
                            np.random.SeedSequence(s_fit.entropy, spawn_key=s_fit.spawn_key)
                        )
                    )
                out[rule] = (res, time.perf_counter() - t0, captured[0] if captured else None)
            nuisances._REFIT_MARGIN = None
            nuisances.plausible_candidates = plain_keep
            foldboot._PERTURB_SHARE = 1.0
            res, secs, boot = out["default"]
            for j, name in enumerate(res.params.index):
                mad = np.nan if boot is None else float(boot.robust_scale()[j])
                se_if = float(out["influence"][0].bse[name])
                rows.append({
                    "design": design, "alpha": alpha, "estimand": name, "rep": rep,
                    "estimate": float(res.params[name]),
                    "se_default": float(res.bse[name]),
                    "se_half": _se(out, "half", name),
                    "se_top3": _se(out, "top3", name),
                    "se_margin2": _se(out, "margin2", name),
                    "se_influence": se_if,
                    "se_mad": max(mad, se_if) if np.isfinite(mad) else se_if,
                    **{f"se_excess{c}": excess_se(float(res.bse[name]), se_if, c)
                       for c in (2, 3)},
                    "secs_default": secs, "secs_top3": out.get("top3", (0, np.nan))[1],
                    "secs_margin2": out.get("margin2", (0, np.nan))[1],
                })  # fmt: skip
    onestep.bootstrap_se = plain
    return rows


def _se(out: dict[str, Any], rule: str, name: str) -> float:
    """Standard error of ``name`` under ``rule``; NaN where the rule was not fitted."""
    return float(out[rule][0].bse[name]) if rule in out else float("nan")


def excess_se(se_boot: float, se_if: float, c: float) -> float:
    r"""The influence variance plus the ``c``-th part of the bootstrap's excess over it.

    >>> round(excess_se(2.0, 1.0, 3.0), 6)  # sqrt(1 + 3 / 3)
    1.414214
    >>> excess_se(0.5, 1.0, 3.0)
    1.0
    """
    return float(np.sqrt(se_if**2 + max(se_boot**2 - se_if**2, 0.0) / c))


def summarise(reps: pd.DataFrame) -> pd.DataFrame:
    """SE / MC sd and plain coverage per cell and rule."""
    out = []
    for (design, alpha, name), g in reps.groupby(["design", "alpha", "estimand"], sort=False):
        ate, att, pom = DESIGNS[design].truths()
        truth = {"ATE": ate, "ATT": att, "E[Y(0)]": pom[0], "E[Y(1)]": pom[1]}[name]
        sd = float(g.estimate.std(ddof=1))
        row: dict[str, Any] = {"design": design, "estimand": name, "alpha": alpha,
                               "R": len(g), "bias/sd": (g.estimate.mean() - truth) / sd}
        rules = ("influence", "default", "mad", "excess2", "excess3", "half", "top3", "margin2")
        for rule in rules:
            se = g[f"se_{rule}"]
            if se.isna().all():  # a rule not fitted (--no-refit-rules)
                row[f"{rule} SE/MCsd"] = row[f"{rule} cover"] = np.nan
                continue
            row[f"{rule} SE/MCsd"] = float(se.mean()) / sd
            row[f"{rule} cover"] = float(np.mean(np.abs(g.estimate - truth) <= 1.959964 * se))
        row["secs default"] = float(g.secs_default.mean())
        row["secs top3"] = float(g.secs_top3.mean())
        row["secs margin2"] = float(g.secs_margin2.mean())
        out.append(row)
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="2 cells, 8 replications")
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--n", type=int, default=4000)
    p.add_argument("--seed", type=int, default=51)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default=None, help="CSV of the cell summary")
    p.add_argument("--designs", default=None,
                   help="comma list: every design x --alphas x --estimands instead of CELLS")
    p.add_argument("--alphas", default="0.7,0.5")
    p.add_argument("--estimands", default="ATE,POM")
    p.add_argument("--no-refit-rules", action="store_true",
                   help="skip the top3 and margin2 fits (their columns: NaN)")
    p.add_argument("--half", action="store_true",
                   help="also fit the half-share bootstrap (rule half; NaN otherwise)")
    a = p.parse_args(argv)
    cells, reps = (QUICK_CELLS, 8) if a.quick else (CELLS, a.reps)
    if a.designs:
        cells = [(d, float(al), e) for d in a.designs.split(",")
                 for al in a.alphas.split(",") for e in a.estimands.split(",")]
    tasks = [{"design": c, "alpha": al, "estimand": e, "reps": reps, "n": a.n, "seed": a.seed,
              "refit_rules": not a.no_refit_rules, "half": a.half}
             for c, al, e in cells]  # fmt: skip
    if a.jobs > 1:
        with Pool(a.jobs) as pool:
            parts = pool.map(_fit_cell, tasks)
    else:
        parts = [_fit_cell(t) for t in tasks]
    table = summarise(pd.DataFrame([r for part in parts for r in part]))
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.round(3).to_string(index=False))
    if a.out:
        table.round(3).to_csv(a.out, index=False)
    return table


if __name__ == "__main__":
    main()
