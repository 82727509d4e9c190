"""Validation suite of the treatment-effect estimators: hard designs x alpha x n (issue 14).

Each replication draws fresh true data from a design of ``validate_designs.py``, releases it
through the alpha-identity (fresh seed) and fits :class:`privinfer.PrivateATE`,
:class:`privinfer.PrivateATT` and :class:`privinfer.PrivatePOM` on the same release. Per
cell (design x alpha x n x parameter) it reports the bias, bias / SE, SE / Monte Carlo sd,
the coverage of the 95% interval with its Monte Carlo SE, the mean interval length, and
the rates of refusals (exceptions, by class) and named warnings (by class), then marks the
cells outside the acceptance bands, allowing 2 Monte Carlo SEs:

* coverage in [0.93, 0.97] (MC SE ``sqrt(0.95 * 0.05 / R)``);
* ``|bias| <= 0.15 SE`` (MC SE of the bias ``MC sd / sqrt(R)``);
* SE / MC sd in [0.9, 1.15] (MC SE by the delta method with the sample kurtosis).

At n < 4000 a cell that fails but refused or warned in most replications with a message
naming the n needed (pattern :data:`NAMES_N`: "n >= 6000", "at least 6000 rows") is
marked ``refused`` / ``warned FAIL(...)``: a clear refusal is a legitimate outcome there.
The ``message`` column of the replication CSV keeps the first message of each fit.

Usage::

    python benchmarks/validate.py --quick                 # a few minutes on 2 cores
    python benchmarks/validate.py --jobs 1 --out full.csv # 200 reps (100 at n = 16000)
    python benchmarks/validate.py --designs overlap_s --alphas 1 --n 4000 --reps 100 \
        --model-options '{"degree": "cv"}' --label cv
    python benchmarks/validate.py --alphas 0.7,0.5 --n 4000 --reps 24 --refit-margin 2
    python benchmarks/validate.py --designs kink_mixed --alphas 0.5 --n 4000 --no-tensor
    python benchmarks/validate.py --designs group_curves --alphas 1 --n 4000 --no-tail-tensor
    python benchmarks/validate.py --alphas 0.5 --n 4000 --interaction-margin 1
    python benchmarks/validate.py --designs lognormal_clip --alphas 1 --n 1000 --riesz-undersmooth 1
    python benchmarks/validate.py --designs cps_lalonde --alphas 1 --n 4000 --min-arm-cap
    python benchmarks/validate.py --designs card_schooling --alphas 1 --no-support-rule
    python benchmarks/validate.py --designs wiggle_confound --alphas 0.7 --no-cap-sensitivity
    python benchmarks/validate.py --designs visit_counts --alphas 0.7 --n 4000 --studentize record
    python benchmarks/validate.py --designs dollar_scale --alphas 0.7 --n 4000 --compare-next
    python benchmarks/validate.py --designs dollar_scale --alphas 1 --n 16000 --bump-by-linear off
    python benchmarks/validate.py --render full.csv --md docs/user_guide/validation_results.md
    python benchmarks/validate.py --n 4000 --reps 100 --first-rep 100 --out b.csv  # 100-199
    python benchmarks/validate.py --pool a_reps.csv,b_reps.csv --out full.csv

Replication ``k`` of a cell draws its data, its release and its fit from a seed of its own
(``--seed``, the design, alpha, n and ``k``), so a long run can be split into slices of
replications (``--first-rep``), run at different times or on different machines, and
pooled (``--pool``) into exactly the table one run would give.

Writes the cell summary to ``--out`` (CSV), every replication to ``<out>_reps.csv`` and a
Markdown table to ``--md`` (default ``<out>.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import warnings
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# the sibling modules, and this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from holdout_designs import HOLDOUT
from validate_designs import DESIGNS, available, privatize

import privinfer as pi

DESIGNS.update(HOLDOUT)  # the held-out designs: selected by name, not in the default run

Z95 = 1.959963984540054
MODELS = {"ATE": pi.PrivateATE, "ATT": pi.PrivateATT, "POM": pi.PrivatePOM}
COVERAGE_BAND = (0.93, 0.97)
BIAS_BAND = 0.15
RATIO_BAND = (0.9, 1.15)
N_STRICT = 4000
CHUNK = 25
#: A refusal or warning "names the n needed" when its message matches this pattern,
#: e.g. "needs n >= 6000", "n of at least 6,000", "at least 6000 rows".
NAMES_N = re.compile(
    r"\bn\s*(?:>=|≥|of at least|at least)\s*[\d,]+|at least\s+[\d,]+\s+"
    r"(?:rows|observations|records|units)",
    re.IGNORECASE,
)


#: Designs renamed after their runs keep the seeds of their old names, so that their
#: recorded tables still reproduce: the fourteenth held-out round's rare binary outcome
#: ran as ``rare_event``, a name the fifth round's design already had.
_SEED_NAMES = {"rare_logit": "rare_event"}


def _rep_seed(seed: int, design: str, alpha: float, n: int, rep: int) -> np.random.SeedSequence:
    key = zlib.crc32(_SEED_NAMES.get(design, design).encode())
    return np.random.SeedSequence([seed, key, round(alpha * 1000), n, rep])


def replication(
    seed: int, name: str, alpha: float, n: int, rep: int
) -> tuple[pi.AlphaIdentity, pd.DataFrame, np.random.SeedSequence, dict[str, float]]:
    """Replication ``rep`` of a cell: its mechanism, its release, the seed of its fits
    (every estimand's fit starts from it) and the population truths by parameter name.
    """
    design = DESIGNS[name]
    mech = pi.AlphaIdentity(alpha, design.reference())
    truths = design.param_truths()
    s_data, s_rel, s_fit = _rep_seed(seed, design.name, alpha, n, rep).spawn(3)
    raw = design.simulate(n, np.random.default_rng(s_data))
    released = privatize(mech, raw, design.public, np.random.default_rng(s_rel))
    return mech, released, s_fit, truths


def run_task(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Replications ``task["reps"]`` of one cell, single-threaded BLAS (cells run in parallel)."""
    from threadpoolctl import threadpool_limits

    import privinfer.models._nuisances as nuisances

    before = nuisances._REFIT_MARGIN  # --refit-margin: a research option of the bootstrap
    groups = nuisances._REFIT_MARGIN_GROUPS  # --refit-margin-groups
    if task.get("refit_margin_groups"):
        nuisances._REFIT_MARGIN_GROUPS = tuple(task["refit_margin_groups"].split(","))
    tensor = nuisances._SIEVE_TENSOR  # --no-tensor: the sieve without the tensor block
    tail_tensor = nuisances._TAIL_TENSOR  # --no-tail-tensor: no factor-by-curve products
    margin = nuisances._INTERACTION_MARGIN  # --interaction-margin
    lead = nuisances._PUBLIC_HEAD_START  # --no-public-lead
    nuisances._PUBLIC_HEAD_START = not task.get("no_public_lead", False)
    unguarded = nuisances._PUBLIC_UNGUARDED  # --common-guard
    nuisances._PUBLIC_UNGUARDED = not task.get("common_guard", False)
    spare = nuisances._SPARE_FITS  # --spare-fits
    arm_caps = nuisances._ARM_CAPS  # --min-arm-cap
    nuisances._ARM_CAPS = not task.get("min_arm_cap", False)
    max_cap = nuisances._MAX_ARM_CAP  # --max-arm-cap
    nuisances._MAX_ARM_CAP = task.get("max_arm_cap")
    odds_arm = nuisances._ODDS_CAP_ARM  # --odds-cap-arm
    nuisances._ODDS_CAP_ARM = task.get("odds_cap_arm") or odds_arm
    import privinfer.models._onestep as onestep

    cap_sens = onestep._CAP_SENSITIVITY  # --no-cap-sensitivity
    onestep._CAP_SENSITIVITY = not task.get("no_cap_sensitivity", False)
    guard_sens = onestep._GUARD_SENSITIVITY  # --no-guard-sensitivity
    onestep._GUARD_SENSITIVITY = not task.get("no_guard_sensitivity", False)
    extrapolation = onestep._GUARD_EXTRAPOLATION  # --guard-extrapolation
    undersmooth = nuisances._RIESZ_UNDERSMOOTH  # --riesz-undersmooth
    if task.get("riesz_undersmooth") is not None:
        nuisances._RIESZ_UNDERSMOOTH = float(task["riesz_undersmooth"])
    budget = nuisances._RIESZ_ENERGY_BUDGET  # --riesz-energy-budget
    if task.get("riesz_energy_budget") is not None:
        nuisances._RIESZ_ENERGY_BUDGET = float(task["riesz_energy_budget"])
    us_private = nuisances._RIESZ_UNDERSMOOTH_PRIVATE  # --riesz-undersmooth-private
    nuisances._RIESZ_UNDERSMOOTH_PRIVATE = bool(task.get("riesz_undersmooth_private", False))
    if task.get("guard_extrapolation") is not None:
        onestep._GUARD_EXTRAPOLATION = float(task["guard_extrapolation"])
    studentize = onestep._STUDENTIZE  # --studentize
    onestep._STUDENTIZE = task.get("studentize") or False
    guard_switch = onestep._GUARD_SWITCH  # --guard-switch
    if task.get("guard_switch") is not None:
        onestep._GUARD_SWITCH = float(task["guard_switch"])
    import privinfer.nuisance.regularize as regularize

    noise_guard = regularize.NOISE_GUARD  # --noise-guard
    regularize.NOISE_GUARD = float(task.get("noise_guard") or noise_guard)
    guard_weights = regularize.GUARD_WEIGHTS  # --guard-weights
    regularize.GUARD_WEIGHTS = float(task.get("guard_weights") or 0.0)
    compare_next = regularize.COMPARE_NEXT  # --compare-next
    regularize.COMPARE_NEXT = bool(task.get("compare_next", False))
    import privinfer.nuisance.sieve as sieve

    bump_by_linear = sieve.BUMP_BY_LINEAR  # --bump-by-linear
    chosen_bumps = {"off": False, "lin": True, "poly": "poly", "bump": "bump"}.get(
        task.get("bump_by_linear"))
    sieve.BUMP_BY_LINEAR = bump_by_linear if chosen_bumps is None else chosen_bumps
    triples = sieve.TRIPLES  # --triples
    if task.get("triples"):
        sieve.TRIPLES = task["triples"]
    index_atoms, index_top = sieve.INDEX_ATOMS, sieve.INDEX_TOP  # --index-atoms
    if task.get("index_atoms") is not None:  # 0: none; L > 0: at every alpha, up to level L
        top = int(task["index_atoms"])
        sieve.INDEX_ATOMS, sieve.INDEX_TOP = (True, top) if top > 0 else (False, index_top)
    guard_directions = regularize.GUARD_DIRECTIONS  # --guard-directions
    regularize.GUARD_DIRECTIONS = bool(task.get("guard_directions", False))
    directions_cv = regularize.GUARD_DIRECTIONS_CV  # --guard-directions fits
    regularize.GUARD_DIRECTIONS_CV = task.get("guard_directions") != "fits"
    weight_fits = nuisances._GUARD_WEIGHT_FITS  # --guard-weight-fits
    if task.get("guard_weight_fits"):
        nuisances._GUARD_WEIGHT_FITS = tuple(task["guard_weight_fits"].split(","))
    support_rule = nuisances._SUPPORT_RULE  # --no-support-rule
    nuisances._SUPPORT_RULE = not task.get("no_support_rule", False)
    if task.get("spare_fits"):
        nuisances._SPARE_FITS = tuple(task["spare_fits"].split(","))
    nuisances._REFIT_MARGIN = task.get("refit_margin", before)
    nuisances._SIEVE_TENSOR = not task.get("no_tensor", False)
    nuisances._TAIL_TENSOR = not task.get("no_tail_tensor", False)
    chosen = task.get("interaction_margin")  # None: the package's own margin
    nuisances._INTERACTION_MARGIN = margin if chosen is None else chosen
    try:
        with threadpool_limits(limits=1):
            return _run_task(task)
    finally:
        nuisances._REFIT_MARGIN = before
        nuisances._REFIT_MARGIN_GROUPS = groups
        nuisances._SIEVE_TENSOR = tensor
        nuisances._TAIL_TENSOR = tail_tensor
        nuisances._INTERACTION_MARGIN = margin
        nuisances._PUBLIC_HEAD_START = lead
        nuisances._PUBLIC_UNGUARDED = unguarded
        nuisances._SPARE_FITS = spare
        nuisances._ARM_CAPS = arm_caps
        nuisances._MAX_ARM_CAP = max_cap
        nuisances._ODDS_CAP_ARM = odds_arm
        nuisances._SUPPORT_RULE = support_rule
        onestep._CAP_SENSITIVITY = cap_sens
        onestep._GUARD_SENSITIVITY = guard_sens
        onestep._GUARD_EXTRAPOLATION = extrapolation
        nuisances._RIESZ_UNDERSMOOTH = undersmooth
        nuisances._RIESZ_ENERGY_BUDGET = budget
        nuisances._RIESZ_UNDERSMOOTH_PRIVATE = us_private
        onestep._GUARD_SWITCH = guard_switch
        onestep._STUDENTIZE = studentize
        regularize.GUARD_WEIGHTS = guard_weights
        regularize.COMPARE_NEXT = compare_next
        sieve.BUMP_BY_LINEAR = bump_by_linear
        sieve.TRIPLES = triples
        sieve.INDEX_ATOMS, sieve.INDEX_TOP = index_atoms, index_top
        regularize.NOISE_GUARD = noise_guard
        regularize.GUARD_DIRECTIONS = guard_directions
        regularize.GUARD_DIRECTIONS_CV = directions_cv
        nuisances._GUARD_WEIGHT_FITS = weight_fits


def _run_task(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Replications ``task["reps"]`` of one cell; one row per replication and parameter."""
    design = DESIGNS[task["design"]]
    alpha, n = float(task["alpha"]), int(task["n"])
    options = {**design.model_options, **(task.get("model_options") or {})}
    rows: list[dict[str, Any]] = []
    for rep in task["reps"]:
        mech, released, s_fit, truths = replication(task["seed"], design.name, alpha, n, rep)
        for estimand in task["estimands"]:
            names = design.param_names(estimand)
            if not names:  # the ATT of a multi-valued treatment: not an estimand here
                continue
            status, message = "ok", ""
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                model = None
                try:
                    model = MODELS[estimand].from_formula(
                        design.formula, released, mechanism=mech, **options
                    )
                    res = model.fit(random_state=np.random.default_rng(s_fit))
                except Exception as exc:  # a refusal is an outcome to count, not a crash
                    res, status, message = None, type(exc).__name__, str(exc)[:300]
            seconds = time.perf_counter() - t0
            named = sorted(
                {
                    w.category.__name__
                    if issubclass(w.category, pi.exceptions.PrivinferWarning)
                    else f"other:{w.category.__name__}"
                    for w in caught
                }
            )
            texts = [message] + [str(w.message) for w in caught]
            names_n = any(NAMES_N.search(t) for t in texts)
            if not message and caught:
                message = str(caught[0].message)[:300]
            if res is not None:
                ci = res.conf_int()
            for name in names:
                row = {
                    "design": design.name,
                    "alpha": alpha,
                    "n": n,
                    "rep": rep,
                    "estimand": estimand,
                    "param": name,
                    "truth": truths[name],
                    "est": np.nan,
                    "se": np.nan,
                    "lower": np.nan,
                    "upper": np.nan,
                    "status": status,
                    "warnings": ";".join(named),
                    "message": message,
                    "names_n": names_n,
                    "seconds": seconds,
                    "label": task.get("label", ""),
                }
                if res is not None:
                    row.update(
                        est=float(res.params[name]),
                        se=float(res.bse[name]),
                        lower=float(ci.loc[name, "lower"]),
                        upper=float(ci.loc[name, "upper"]),
                    )
                    # the bias bound by source, so that rules for it can be studied on
                    # these fits without refitting (benchmarks/guard_extrapolation.py)
                    parts = getattr(model, "_bound_parts", None)
                    if parts is not None and name in parts.index:
                        for source in parts.columns:
                            row[f"bound_{source}"] = float(parts.loc[name, source])
                    # share of the splits fitted with one guard per direction
                    row["guard_switched"] = float(getattr(model, "_guard_switched", 0.0))
                    # --studentize record: the three readings of the last split
                    kept = getattr(model, "_stud_record", None)
                    if kept is not None and len(kept) == 4:
                        j = list(res.params.index).index(name)
                        row["se_boot"], row["se_stud"], row["se_stud2"], row["se_if"] = (
                            float(np.atleast_1d(v)[j]) for v in kept
                        )
                rows.append(row)
    return rows


def make_tasks(
    designs: list[str],
    alphas: list[float],
    ns: list[int],
    reps: int | None,
    estimands: list[str],
    model_options: dict[str, Any],
    seed: int,
    label: str = "",
    chunk: int = CHUNK,
    refit_margin: float | None = None,
    first: int = 0,
    no_tensor: bool = False,
    interaction_margin: float | None = None,
    no_public_lead: bool = False,
    common_guard: bool = False,
    spare_fits: str | None = None,
    refit_margin_groups: str | None = None,
    min_arm_cap: bool = False,
    odds_cap_arm: str | None = None,
    no_support_rule: bool = False,
    no_tail_tensor: bool = False,
    max_arm_cap: int | None = None,
    no_cap_sensitivity: bool = False,
    no_guard_sensitivity: bool = False,
    guard_weights: float = 0.0,
    guard_weight_fits: str | None = None,
    guard_directions: bool | str = False,
    guard_extrapolation: float | None = None,
    guard_switch: float | None = None,
    noise_guard: float | None = None,
    riesz_undersmooth: float | None = None,
    riesz_energy_budget: float | None = None,
    riesz_undersmooth_private: bool = False,
    studentize: str | None = None,
    compare_next: bool = False,
    bump_by_linear: str | None = None,
    triples: str | None = None,
    index_atoms: int | None = None,
) -> list[dict[str, Any]]:
    """Split every cell into chunks of replications (largest n first, for load balance).

    A cell runs replications ``first`` to ``first + reps - 1``; each one's seed depends
    only on its own index, so slices run separately pool into the same table.
    """
    tasks = []
    for n in sorted(ns, reverse=True):
        r = reps if reps is not None else (100 if n > N_STRICT else 200)
        for design in designs:
            for alpha in alphas:
                for start in range(first, first + r, chunk):
                    tasks.append(
                        {
                            "design": design,
                            "alpha": alpha,
                            "n": n,
                            "reps": range(start, min(start + chunk, first + r)),
                            "estimands": estimands,
                            "model_options": model_options,
                            "seed": seed,
                            "label": label,
                            "refit_margin": refit_margin,
                            "no_tensor": no_tensor,
                            "interaction_margin": interaction_margin,
                            "no_public_lead": no_public_lead,
                            "common_guard": common_guard,
                            "spare_fits": spare_fits,
                            "refit_margin_groups": refit_margin_groups,
                            "min_arm_cap": min_arm_cap,
                            "odds_cap_arm": odds_cap_arm,
                            "no_support_rule": no_support_rule,
                            "no_tail_tensor": no_tail_tensor,
                            "max_arm_cap": max_arm_cap,
                            "no_cap_sensitivity": no_cap_sensitivity,
                            "no_guard_sensitivity": no_guard_sensitivity,
                            "guard_weights": guard_weights,
                            "guard_weight_fits": guard_weight_fits,
                            "guard_directions": guard_directions,
                            "guard_extrapolation": guard_extrapolation,
                            "guard_switch": guard_switch,
                            "noise_guard": noise_guard,
                            "riesz_undersmooth": riesz_undersmooth,
                            "riesz_energy_budget": riesz_energy_budget,
                            "riesz_undersmooth_private": riesz_undersmooth_private,
                            "studentize": studentize,
                            "compare_next": compare_next,
                            "bump_by_linear": bump_by_linear,
                            "triples": triples,
                            "index_atoms": index_atoms,
                        }
                    )
    return tasks


def run(tasks: list[dict[str, Any]], jobs: int = 2, progress: bool = True) -> pd.DataFrame:
    """Run the tasks (in ``jobs`` processes when ``jobs > 1``); one row per rep and parameter."""
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()

    def report(k: int, task: dict[str, Any]) -> None:
        if progress:
            print(
                f"  [{k}/{len(tasks)}] {task['design']} alpha={task['alpha']:g} n={task['n']} "
                f"reps {task['reps'].start}-{task['reps'].stop - 1}  "
                f"({time.perf_counter() - t0:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    failed: list[str] = []

    def failure(task: dict[str, Any], exc: BaseException) -> None:
        # a task that raises outside the fits (a release refused, a design's bug) is
        # reported and the others go on, so that one cell cannot lose a long run
        what = (
            f"{task['design']} alpha={task['alpha']:g} n={task['n']} reps "
            f"{task['reps'].start}-{task['reps'].stop - 1}: {type(exc).__name__}: {exc}"
        )
        failed.append(what)
        print(f"  task failed: {what}", file=sys.stderr, flush=True)

    if jobs <= 1:
        for k, task in enumerate(tasks, 1):
            try:
                rows.extend(run_task(task))
            except Exception as exc:  # reported, raised again below
                failure(task, exc)
            report(k, task)
    else:
        with ProcessPoolExecutor(jobs) as pool:
            futures = {pool.submit(run_task, t): t for t in tasks}
            for k, fut in enumerate(as_completed(futures), 1):
                try:
                    rows.extend(fut.result())
                except Exception as exc:  # reported, raised again below
                    failure(futures[fut], exc)
                report(k, futures[fut])
    table = pd.DataFrame(rows)
    if len(table):
        table = table.sort_values(["design", "alpha", "n", "estimand", "param", "rep"])
    if failed:
        raise TaskFailures(failed, table)
    return table


class TaskFailures(RuntimeError):
    """Tasks of :func:`run` that raised; ``rows`` holds the replications of the others."""

    def __init__(self, failed: list[str], rows: pd.DataFrame) -> None:
        super().__init__(f"{len(failed)} task(s) failed:\n" + "\n".join(failed))
        self.failed, self.rows = failed, rows


def _rates(values: pd.Series, total: int) -> str:
    counts: dict[str, int] = {}
    for v in values:
        for name in filter(None, str(v).split(";")):
            counts[name] = counts.get(name, 0) + 1
    return ";".join(f"{k}:{c / total:.2f}" for k, c in sorted(counts.items()))


def summarise(reps: pd.DataFrame) -> pd.DataFrame:
    """Per-cell metrics, their Monte Carlo SEs and the verdict against the bands."""
    out = []
    keys = ["design", "alpha", "n", "estimand", "param"]
    for key, g in reps.groupby(keys, sort=True):
        ok = g[g.status == "ok"]
        R, R_ok = len(g), len(ok)
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row.update(reps=R, refused=1 - R_ok / R, truth=float(g.truth.iloc[0]))
        row["exceptions"] = _rates(g.status[g.status != "ok"], R)
        row["warned"] = float(np.mean(g.warnings.fillna("").str.len() > 0))
        row["warning_rates"] = _rates(g.warnings.fillna(""), R)
        row["names_n"] = float(np.mean(g.names_n.astype(bool)))
        if R_ok >= 2:
            est, se = ok.est.to_numpy(), ok.se.to_numpy()
            t = row["truth"]
            bias, mc_sd, mean_se = est.mean() - t, est.std(ddof=1), se.mean()
            kurt = np.mean((est - est.mean()) ** 4) / np.mean((est - est.mean()) ** 2) ** 2
            ratio = mean_se / mc_sd
            ratio_mcse = ratio * np.sqrt(
                max(kurt - 1, 0.0) / (4 * R_ok) + se.var(ddof=1) / (R_ok * mean_se**2)
            )
            cover = np.mean((ok.lower.to_numpy() <= t) & (t <= ok.upper.to_numpy()))
            row.update(
                bias=bias,
                bias_mcse=mc_sd / np.sqrt(R_ok),
                bias_se=bias / mean_se,
                mc_sd=mc_sd,
                mean_se=mean_se,
                se_ratio=ratio,
                se_ratio_mcse=ratio_mcse,
                coverage=cover,
                coverage_mcse=np.sqrt(0.95 * 0.05 / R_ok),
                ci_length=float(np.mean(ok.upper - ok.lower)),
                # correlation of estimate and SE over the releases (summary CSV only):
                # far from 0, the small-SE releases err to one side, and coverage rests
                # on those releases' intervals being long enough
                est_se_corr=float(np.corrcoef(est, se)[0, 1]) if np.ptp(se) > 0 else np.nan,
                seconds=float(g.seconds.mean()),
            )
        out.append(row)
    table = pd.DataFrame(out)
    table["verdict"] = [verdict(r) for r in table.itertuples(index=False)]
    return table


def band_failures(r: Any) -> list[str]:
    """Names of the bands a cell misses by more than 2 Monte Carlo SEs."""
    if not np.isfinite(getattr(r, "coverage", np.nan)):
        return ["no fits"]
    fails = []
    lo, hi = COVERAGE_BAND
    if r.coverage + 2 * r.coverage_mcse < lo:
        fails.append(f"cov<{lo:.0%}")
    if r.coverage - 2 * r.coverage_mcse > hi:
        fails.append(f"cov>{hi:.0%}")
    if abs(r.bias) - 2 * r.bias_mcse > BIAS_BAND * r.mean_se:
        fails.append("bias")
    if r.se_ratio + 2 * r.se_ratio_mcse < RATIO_BAND[0]:
        fails.append("SE low")
    if r.se_ratio - 2 * r.se_ratio_mcse > RATIO_BAND[1]:
        fails.append("SE high")
    return fails


def verdict(r: Any) -> str:
    """``pass``, ``FAIL(...)``, or at n < 4000 ``refused`` / ``warned FAIL(...)``.

    At n < 4000 a refusal or a failing cell is excused only when most replications raised
    or warned with a message naming the n needed (:data:`NAMES_N`).
    """
    fails = band_failures(r)
    small = r.n < N_STRICT
    excused = small and r.names_n > 0.5
    if r.refused > 0.5:
        return "refused" if excused else "FAIL(refused)"
    if not fails:
        return "pass" if r.refused == 0 or small else "FAIL(some refused)"
    if excused:
        return f"warned FAIL({','.join(fails)})"
    return f"FAIL({','.join(fails)})"


SHOW = [
    ("design", "design", "{}"),
    ("param", "estimand", "{}"),
    ("alpha", "alpha", "{:g}"),
    ("n", "n", "{}"),
    ("reps", "R", "{}"),
    ("bias", "bias", "{:+.4f}"),
    ("bias_se", "bias/SE", "{:+.3f}"),
    ("se_ratio", "SE/MCsd", "{:.3f}"),
    ("coverage", "cover", "{:.3f}"),
    ("coverage_mcse", "±MCSE", "{:.3f}"),
    ("ci_length", "CI len", "{:.4f}"),
    ("refused", "refused", "{:.2f}"),
    ("warned", "warned", "{:.2f}"),
    ("names_n", "names n", "{:.2f}"),
    ("verdict", "verdict", "{}"),
]


def _fmt(v: Any, f: str) -> str:
    if isinstance(v, float) and not np.isfinite(v):
        return "-"
    return f.format(v)


def text_table(table: pd.DataFrame) -> str:
    """A fixed-width table of the main columns."""
    cols = [c for c in SHOW if c[0] in table]
    cells = [[_fmt(r[c], f) for c, _, f in cols] for _, r in table.iterrows()]
    heads = [h for _, h, _ in cols]
    widths = [max(len(h), *(len(row[j]) for row in cells)) for j, h in enumerate(heads)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(heads, widths, strict=True))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def markdown_table(table: pd.DataFrame) -> str:
    """A Markdown table of the main columns (no extra dependency)."""
    cols = [c for c in SHOW if c[0] in table]
    lines = [
        "| " + " | ".join(h for _, h, _ in cols) + " |",
        "|" + "|".join("---" for _ in cols) + "|",
    ]
    for _, r in table.iterrows():
        lines.append("| " + " | ".join(_fmt(r[c], f) for c, _, f in cols) + " |")
    return "\n".join(lines) + "\n"


def docs_csv(table: pd.DataFrame, path: Path) -> None:
    """The main columns, formatted, for an rst ``csv-table`` include."""
    cols = [c for c in SHOW if c[0] in table]
    frame = pd.DataFrame(
        {h: [_fmt(v, f) for v in table[c]] for c, h, f in cols}, columns=[h for _, h, _ in cols]
    )
    frame.to_csv(path, index=False)


def headline(table: pd.DataFrame) -> str:
    """One line per verdict class."""
    strict = table[table.n >= N_STRICT]
    n_fail = int(strict.verdict.str.startswith("FAIL").sum())
    small = table[table.n < N_STRICT]
    return (
        f"cells at n >= {N_STRICT}: {len(strict)}, failing the bands: {n_fail}; "
        f"cells at n < {N_STRICT}: {len(small)}, failing without a refusal or warning naming n: "
        f"{int(small.verdict.str.startswith('FAIL').sum())}"
    )


#: Columns that identify one replication's row (:func:`pool`).
REP_KEY = ["design", "alpha", "n", "estimand", "param", "rep", "label"]


def pool(paths: list[str]) -> pd.DataFrame:
    """The replications of several ``*_reps.csv`` files, checked to be disjoint.

    Slices of one study (``--first-rep``) pool into the table a single run would give.
    A replication present twice (the same slice run twice, or two runs of one seed) would
    count twice and understate the Monte Carlo error, so it is an error.
    """
    frames = [pd.read_csv(p, dtype={"label": str}) for p in paths]
    reps = pd.concat(frames, ignore_index=True)
    reps["label"] = reps["label"].fillna("")
    dup = reps.duplicated(REP_KEY, keep=False)
    if dup.any():
        first = reps.loc[dup, REP_KEY].iloc[0].to_dict()
        raise ValueError(
            f"--pool: {int(dup.sum())} rows appear in more than one file (e.g. {first}); "
            "pool disjoint slices of replications (--first-rep), not repeated runs."
        )
    return reps.sort_values(["design", "alpha", "n", "estimand", "param", "rep"])


def _write(rep_rows: pd.DataFrame, out_arg: str) -> tuple[pd.DataFrame, Path, Path]:
    """Write the replications to ``<out>_reps.csv`` and their cell summary to ``out``."""
    out = Path(out_arg)
    reps_path = out.with_name(out.stem + "_reps.csv")
    rep_rows.to_csv(reps_path, index=False)
    table = summarise(rep_rows)
    table.to_csv(out, index=False)
    return table, out, reps_path


def _floats(s: str) -> list[float]:
    return [float(v) for v in s.split(",") if v]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="40 reps, n in {1000, 4000}")
    parser.add_argument("--designs", default=None, help="comma list (default: all)")
    parser.add_argument("--alphas", default="1,0.7,0.5")
    parser.add_argument("--n", default=None, help="comma list (default 1000,4000,16000)")
    parser.add_argument(
        "--reps", type=int, default=None, help="default 200 (100 at n > 4000); --quick 40"
    )
    parser.add_argument("--estimands", default="ATE,ATT,POM")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--out", default="validate_results.csv")
    parser.add_argument("--md", default=None, help="Markdown table (default <out>.md)")
    parser.add_argument("--docs-csv", default=None, help="formatted CSV for the docs include")
    parser.add_argument(
        "--model-options",
        default="{}",
        help='JSON dict passed to from_formula, e.g. \'{"degree": "cv"}\'',
    )
    parser.add_argument("--label", default="", help="tag stored with every replication")
    parser.add_argument(
        "--refit-margin",
        type=float,
        default=None,
        help="bootstrap draws refit only the sub-bases within this many fold SEs of the "
        "best CV loss (default: all sub-bases)",
    )
    parser.add_argument(
        "--refit-margin-groups",
        default=None,
        help="comma list of the nuisance groups --refit-margin restricts: outcome, riesz "
        "(default: both)",
    )
    parser.add_argument(
        "--min-arm-cap",
        action="store_true",
        help="the smallest arm's rows cap every fit's sieve (the rule before the eighth "
        "round of held-out designs) instead of each fit's own arm's",
    )
    parser.add_argument(
        "--max-arm-cap",
        type=int,
        default=None,
        help="below alpha = 1 no fit's sieve exceeds this many functions (a research "
        "probe of the rich candidates that the noise guard alone regularises)",
    )
    parser.add_argument(
        "--no-cap-sensitivity",
        action="store_true",
        help="the bias bound without the move under halved sieve caps, "
        "as before it (privinfer.models._onestep._CAP_SENSITIVITY)",
    )
    parser.add_argument(
        "--no-guard-sensitivity",
        action="store_true",
        help="the bias bound without the move under a halved noise guard, "
        "as before it (privinfer.models._onestep._GUARD_SENSITIVITY)",
    )
    parser.add_argument(
        "--guard-extrapolation",
        type=float,
        default=None,
        metavar="K",
        help="count the move under a halved noise guard K times in the bias bound "
        "(privinfer.models._onestep._GUARD_EXTRAPOLATION)",
    )
    parser.add_argument(
        "--riesz-undersmooth",
        type=float,
        default=None,
        metavar="K",
        help="at alpha = 1 the Riesz fits use their CV-chosen ridge divided by up to K "
        "(at least 1; 1: off; default 10) "
        "(privinfer.models._nuisances._RIESZ_UNDERSMOOTH)",
    )
    parser.add_argument(
        "--riesz-energy-budget",
        type=float,
        default=None,
        metavar="B",
        help="undersmooth the Riesz fits only as far as their second moment grows by at "
        "most B times (default 1.5; inf: the whole factor) "
        "(privinfer.models._nuisances._RIESZ_ENERGY_BUDGET)",
    )
    parser.add_argument(
        "--riesz-undersmooth-private",
        action="store_true",
        help="undersmooth the Riesz fits below alpha = 1 too "
        "(privinfer.models._nuisances._RIESZ_UNDERSMOOTH_PRIVATE)",
    )
    parser.add_argument(
        "--guard-weights",
        type=float,
        default=0.0,
        metavar="GAMMA",
        help="weight the noise guard per function by its own noise size to the power "
        "GAMMA (privinfer.nuisance.regularize.GUARD_WEIGHTS; default 0: one guard per fit)",
    )
    parser.add_argument(
        "--guard-directions",
        nargs="?",
        const="all",
        default=None,
        choices=["all", "fits"],
        help="lift each eigen-direction of the guarded block by its own noise "
        "(privinfer.nuisance.regularize.GUARD_DIRECTIONS; default: one guard per fit); "
        "'fits': the CV still chooses under the common guard (GUARD_DIRECTIONS_CV off)",
    )
    parser.add_argument(
        "--noise-guard",
        type=float,
        default=None,
        metavar="K",
        help="multiple of the estimated Gram noise the guard lifts to "
        "(privinfer.nuisance.regularize.NOISE_GUARD; default 1)",
    )
    parser.add_argument(
        "--guard-switch",
        type=float,
        default=None,
        metavar="T",
        help="refit a split with one guard per eigen-direction where the common guard's "
        "halved-guard move, less its noise, exceeds T influence standard errors "
        "(privinfer.models._onestep._GUARD_SWITCH; default: off)",
    )
    parser.add_argument(
        "--studentize",
        choices=["on", "record"],
        default=None,
        help="read the bootstrap's draws studentized by their fits' noise amplification "
        "(privinfer.models._onestep._STUDENTIZE; 'record' keeps the default reading and "
        "stores the influence, plain, one-sided and two-sided studentized standard errors as "
        "se_if, se_boot, se_stud and se_stud2; default: off)",
    )
    parser.add_argument(
        "--guard-weight-fits",
        default=None,
        help="comma list of the fits --guard-weights applies to: outcome, riesz "
        "(default: both)",
    )
    parser.add_argument(
        "--no-support-rule",
        action="store_true",
        help="the Riesz fits' CV also trusts fits that live where their arm has (almost) "
        "no rows of the sample (the rule before the ninth round of held-out designs)",
    )
    parser.add_argument(
        "--odds-cap-arm",
        choices=["control", "treated"],
        default=None,
        help="which arm's rows cap the ATT's odds fit (default: control)",
    )
    parser.add_argument(
        "--no-tensor",
        action="store_true",
        help="the sieve without its polynomial tensor block (only products of linear "
        "terms): the block measured against its absence on the same releases",
    )
    parser.add_argument(
        "--no-tail-tensor",
        action="store_true",
        help="the tensor block without the products of a categorical covariate's "
        "contrasts with the squares and cubes of the continuous columns (the sieve "
        "before the tenth round of held-out designs)",
    )
    parser.add_argument(
        "--no-public-lead",
        action="store_true",
        help="below alpha = 1, no sieve candidates whose public columns lead the private "
        "ones (the variants measured against their absence on the same releases)",
    )
    parser.add_argument(
        "--common-guard",
        action="store_true",
        help="below alpha = 1, one noise guard floors the ridge of every sieve function, "
        "public ones included (measured against sparing them on the same releases)",
    )
    parser.add_argument(
        "--spare-fits",
        default=None,
        help="which fits spare the public functions from the noise guard: "
        "'outcome', 'riesz' or 'outcome,riesz' (the package's default)",
    )
    parser.add_argument(
        "--interaction-margin",
        type=float,
        default=None,
        help="below alpha = 1, the sieve's '+ interactions' candidates must beat the "
        "others by this many fold SEs of CV loss (default: the package's, no margin; "
        "0 turns it off)",
    )
    parser.add_argument(
        "--first-rep",
        type=int,
        default=0,
        help="index of the first replication (run a slice of a longer study)",
    )
    parser.add_argument(
        "--compare-next",
        action="store_true",
        help="the bias bound's comparison fit is the next nesting sieve where no richer "
        "one is plausible (privinfer.nuisance.regularize.COMPARE_NEXT)",
    )
    parser.add_argument(
        "--bump-by-linear",
        nargs="?",
        const="lin",
        default=None,
        choices=["off", "lin", "poly", "bump"],
        help="products of each column's bumps with the other columns' linear terms in "
        "the sieve's interactions ('lin', the default; 'poly': linear, square and cube; "
        "'bump': lines and the other columns' bumps of the same level, up to level 5; "
        "'off': the polynomial tensor block alone; privinfer.nuisance.sieve.BUMP_BY_LINEAR)",
    )
    parser.add_argument(
        "--triples",
        default=None,
        choices=["linear", "bump"],
        help="a research setting: products of three columns in the sieve's interactions "
        "('linear': three linear terms; 'bump': also a bump times two linear terms; "
        "privinfer.nuisance.sieve.TRIPLES; default off)",
    )
    parser.add_argument(
        "--index-atoms",
        type=int,
        default=None,
        metavar="L",
        help="single-index atoms up to ladder level L at every alpha (P2, P3 and bumps "
        "of linear indices of the private columns fitted on the release; "
        "privinfer.nuisance.sieve.INDEX_ATOMS; the default adds them at alpha = 1 only); "
        "0: none at any alpha (the default before)",
    )
    parser.add_argument("--render", default=None, help="re-render tables from a summary CSV")
    parser.add_argument(
        "--pool",
        default=None,
        help="comma list of *_reps.csv files: summarise their replications together",
    )
    args = parser.parse_args(argv)
    pd.set_option("display.width", 250)

    if args.render:
        table = pd.read_csv(args.render)
        table["verdict"] = [verdict(r) for r in table.itertuples(index=False)]
    elif args.pool:
        rep_rows = pool([p for p in args.pool.split(",") if p])
        table, out, reps_path = _write(rep_rows, args.out)
        print(f"Pooled {len(rep_rows)} rows from {args.pool}; summary {out}")
    else:
        designs = args.designs.split(",") if args.designs else available()
        unknown = [d for d in designs if d not in DESIGNS]
        if unknown:
            parser.error(f"unknown design(s) {unknown}; choose from {list(DESIGNS)}")
        estimands = [e.strip().upper() for e in args.estimands.split(",")]
        if any(e not in MODELS for e in estimands):
            parser.error(f"--estimands must be among {list(MODELS)}")
        ns = (
            [int(v) for v in _floats(args.n)]
            if args.n
            else ([1000, 4000] if args.quick else [1000, 4000, 16000])
        )
        reps = args.reps if args.reps is not None else (40 if args.quick else None)
        options = json.loads(args.model_options)
        tasks = make_tasks(
            designs,
            _floats(args.alphas),
            ns,
            reps,
            estimands,
            options,
            args.seed,
            args.label,
            refit_margin=args.refit_margin,
            first=args.first_rep,
            no_tensor=args.no_tensor,
            interaction_margin=args.interaction_margin,
            no_public_lead=args.no_public_lead,
            common_guard=args.common_guard,
            spare_fits=args.spare_fits,
            refit_margin_groups=args.refit_margin_groups,
            min_arm_cap=args.min_arm_cap,
            odds_cap_arm=args.odds_cap_arm,
            no_support_rule=args.no_support_rule,
            no_tail_tensor=args.no_tail_tensor,
            max_arm_cap=args.max_arm_cap,
            no_cap_sensitivity=args.no_cap_sensitivity,
            no_guard_sensitivity=args.no_guard_sensitivity,
            guard_weights=args.guard_weights,
            guard_weight_fits=args.guard_weight_fits,
            guard_directions={None: False, "all": True}.get(args.guard_directions, "fits"),
            guard_extrapolation=args.guard_extrapolation,
            guard_switch=args.guard_switch,
            noise_guard=args.noise_guard,
            riesz_undersmooth=args.riesz_undersmooth,
            riesz_energy_budget=args.riesz_energy_budget,
            riesz_undersmooth_private=args.riesz_undersmooth_private,
            studentize={"on": True, "record": "record"}.get(args.studentize),
            compare_next=args.compare_next,
            bump_by_linear=args.bump_by_linear,
            triples=args.triples,
            index_atoms=args.index_atoms,
        )
        t0 = time.perf_counter()
        try:
            rep_rows = run(tasks, args.jobs)
        except TaskFailures as exc:
            if len(exc.rows):  # keep what finished: pool it with a rerun of the rest
                _, _, kept = _write(exc.rows, args.out)
                print(f"The finished tasks' replications are in {kept}.", file=sys.stderr)
            raise
        elapsed = time.perf_counter() - t0
        table, out, reps_path = _write(rep_rows, args.out)
        print(
            f"Validation: {len(designs)} designs, alphas {args.alphas}, n {ns}, "
            f"model options {options}, {elapsed:.0f} s; summary {out}, replications "
            f"{reps_path}"
        )
    print(text_table(table))
    print(headline(table))
    md = Path(args.md) if args.md else Path(args.render or args.out).with_suffix(".md")
    md.write_text(markdown_table(table))
    if args.docs_csv:
        docs_csv(table, Path(args.docs_csv))


if __name__ == "__main__":
    main()
