"""PrivateGMM (OLS, IV, logit) on Dask DataFrames: the same numbers as pandas.

Oracle: the pandas fit on the same released rows. Every sum over rows is the same up to
its order (the Dask fit adds per-partition sums), so estimates, standard errors, tests
and summaries must agree to floating-point accuracy (1e-10), whatever the partitioning.
"""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import privinfer as pi
from privinfer.exceptions import (
    ClusterError,
    DataMismatchError,
    FewClustersWarning,
    FewEffectiveRowsWarning,
    NonRobustCovarianceWarning,
    PerfectSeparationWarning,
    SeedReleaseWarning,
    UnsupportedBackendError,
    WeakInstrumentWarning,
)

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")

TOL = 1e-10
REF = 1024  # reference points: the same on both backends, few to keep the tests fast
OLS = "y ~ x + w + C(g)"
IV = "y ~ w + C(g) + [x ~ z1 + z2]"
LOGIT = "d ~ x + w + C(g)"


@pytest.fixture(scope="module")
def released() -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    rng = np.random.default_rng(0)
    n = 1500
    z = rng.uniform(0, 1, (n, 2))
    u = rng.normal(size=n)
    g = rng.choice(["a", "b", "c"], n)
    w = rng.normal(size=n)
    x = np.clip(z @ [1.0, 1.0] + 0.5 * u + rng.normal(size=n), -3.0, 5.0)
    raw = pd.DataFrame(
        {"z1": z[:, 0], "z2": z[:, 1], "x": x, "g": g, "w": w,
         "y": 1 + x - w + (g == "b") + u,
         "d": (rng.random(n) < expit(-0.5 + 0.8 * x - w)).astype(int),
         "cl": rng.integers(0, 40, n), "c2": rng.choice(["p", "q", "r", "s", "t"] * 6, n),
         "wt": rng.uniform(0.2, 3.0, n)}
    )  # fmt: skip
    raw["c2"] = raw["c2"] + (rng.integers(0, 6, n)).astype(str)  # 30 labels
    mech = pi.AlphaIdentity(
        0.7,
        {"z1": pi.reference.Uniform(0, 1), "z2": pi.reference.Uniform(0, 1),
         "x": pi.reference.Uniform(-3.0, 5.0),
         "g": pi.reference.Categorical(["a", "b", "c"])},
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeedReleaseWarning)
        rel = mech.privatize(raw, public=["w", "y", "d", "cl", "c2", "wt"], random_state=1)
    return rel, mech


def _fit_both(route, formula, rel, ddf, mech, weights=None, **opts):
    """Pandas and Dask fits with the same options (clusters by column on Dask)."""
    pd_opts = dict(opts)
    if "clusters" in opts:
        pd_opts["clusters"] = rel[opts["clusters"]]
    build = getattr(pi.PrivateGMM, route)
    kw = {"mechanism": mech, "reference_size": REF}
    if weights is not None:
        kw["weights"] = weights
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        a = build(formula, rel, **kw).fit(random_state=0, **pd_opts)
        b = build(formula, ddf, **kw).fit(random_state=0, **opts)
    return a, b


def _assert_same(a, b) -> None:
    assert type(a) is type(b)
    np.testing.assert_allclose(b.params, a.params, rtol=0, atol=TOL)
    np.testing.assert_allclose(b.bse, a.bse, rtol=0, atol=TOL)
    np.testing.assert_allclose(b.cov, a.cov, rtol=0, atol=TOL)
    assert b.nobs == a.nobs
    assert list(b.params.index) == list(a.params.index)
    ta, tb = a._record.tests, b._record.tests
    assert set(ta) == set(tb)
    for k, t in ta.items():
        if np.isfinite(t.stat):
            assert abs(t.stat - tb[k].stat) < TOL * max(1.0, abs(t.stat)), k
            assert abs(t.pvalue - tb[k].pvalue) < TOL, k
        else:
            assert not np.isfinite(tb[k].stat)
    for k, v in a.diagnostics.reference_error.items():
        assert abs(v - b.diagnostics.reference_error[k]) < TOL
    assert str(b.summary()) == str(a.summary())


def _frame(rel: pd.DataFrame, cuts: list[int]):
    """A Dask frame whose partitions are the row ranges between ``cuts`` (empty allowed)."""
    parts = [dask.delayed(rel.iloc[a:b]) for a, b in itertools.pairwise(cuts)]
    out = dd.from_delayed(parts, meta=rel.iloc[:0])
    return out


CLUSTER_OPTS = [
    {},
    {"cov_type": "clustered", "clusters": "cl"},
    {"cov_type": "clustered", "clusters": ["cl", "c2"], "small_g": True, "center": True},
]


@pytest.mark.parametrize("opts", [*CLUSTER_OPTS, {"cov_type": "nonrobust"}])
def test_ols(released, opts):
    rel, mech = released
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonRobustCovarianceWarning)
        a, b = _fit_both("ols", OLS, rel, dd.from_pandas(rel, npartitions=4), mech, **opts)
    _assert_same(a, b)
    assert abs(a.rsquared - b.rsquared) < TOL


@pytest.mark.parametrize("weighting", ["one-step", "two-step", "iterated"])
@pytest.mark.parametrize("opts", CLUSTER_OPTS)
def test_iv(released, weighting, opts):
    rel, mech = released
    ddf = dd.from_pandas(rel, npartitions=3)
    a, b = _fit_both("iv", IV, rel, ddf, mech, weighting=weighting, **opts)
    _assert_same(a, b)
    # the weak-instrument-robust inference comes from the same reduced blocks
    for beta0 in (0.5, 1.0):
        assert abs(a.ar_test(beta0).stat - b.ar_test(beta0).stat) < TOL
        assert abs(a.clr_test(beta0).pvalue - b.clr_test(beta0).pvalue) < TOL
    ca, cb = a.ar_conf_int(), b.ar_conf_int()
    np.testing.assert_allclose(np.ravel(cb.intervals), np.ravel(ca.intervals), atol=1e-8)


def test_anderson_rubin_without_fit(released):
    rel, mech = released
    ddf = dd.from_pandas(rel, npartitions=3)
    wa = pi.PrivateGMM.iv(IV, rel, mechanism=mech).anderson_rubin(random_state=0)
    wb = pi.PrivateGMM.iv(IV, ddf, mechanism=mech).anderson_rubin(random_state=0)
    np.testing.assert_allclose(wb.blocks, wa.blocks, rtol=0, atol=TOL)
    assert abs(wa.ar_stat(1.0) - wb.ar_stat(1.0)) < TOL


@pytest.mark.parametrize(
    "opts", [{}, {"cov_type": "nonrobust"}, *CLUSTER_OPTS[1:]], ids=["hc0", "nr", "cl1", "cl2"]
)
def test_logit(released, opts):
    rel, mech = released
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonRobustCovarianceWarning)
        a, b = _fit_both("logit", LOGIT, rel, dd.from_pandas(rel, npartitions=4), mech, **opts)
    _assert_same(a, b)
    ma, mb = a.get_margeff(), b.get_margeff()
    np.testing.assert_allclose(mb.effects, ma.effects, rtol=0, atol=TOL)
    np.testing.assert_allclose(mb.cov, ma.cov, rtol=0, atol=TOL)


@pytest.mark.parametrize(
    "cuts",
    [
        [0, 1500],  # one partition
        [0, 0, 400, 400, 401, 1500, 1500],  # empty partitions and a one-row partition
    ],
    ids=["one", "empty"],
)
@pytest.mark.parametrize("route,formula", [("ols", OLS), ("iv", IV), ("logit", LOGIT)])
def test_partitioning(released, cuts, route, formula):
    rel, mech = released
    for opts in CLUSTER_OPTS[:2]:
        a, b = _fit_both(route, formula, rel, _frame(rel, cuts), mech, **opts)
        _assert_same(a, b)


@pytest.mark.parametrize("route,formula", [("ols", OLS), ("iv", IV), ("logit", LOGIT)])
def test_categorical_levels_missing_from_partitions(released, route, formula):
    # rows sorted by the private categorical: each partition holds one or two of its levels
    rel, mech = released
    rel = rel.sort_values(["g", "cl"], kind="stable").reset_index(drop=True)
    rel["g"] = rel["g"].astype("category")
    rel["c2"] = rel["c2"].astype("category")
    ddf = dd.from_pandas(rel, npartitions=5)
    levels = [set(p["g"].unique()) for p in ddf.to_delayed() for p in [p.compute()]]
    assert any(len(lv) == 1 for lv in levels)
    a, b = _fit_both(route, formula, rel, ddf, mech, **CLUSTER_OPTS[2])
    _assert_same(a, b)


def test_public_categorical_regressor_levels(released):
    # a public string regressor whose levels are missing from the first rows
    rel, mech = released
    rel = rel.sort_values("c2", kind="stable").reset_index(drop=True)
    ddf = dd.from_pandas(rel, npartitions=4)
    a, b = _fit_both("ols", "y ~ x + C(c2)", rel, ddf, mech)
    _assert_same(a, b)


def test_public_integer_levels_inside_c_are_scanned(released):
    """C(k) of a public integer column: only non-numeric columns had their levels scanned,
    so the levels absent from the first rows lost their columns (the fit dropped C(k)[T.3]);
    the columns the design codes by level are now read off the design and scanned too."""
    rel, mech = released
    rel = rel.assign(k=rel["cl"] % 4).sort_values("k", kind="stable").reset_index(drop=True)
    assert 3 not in set(rel["k"].iloc[:1000])  # the rows the specs are learned on
    ddf = dd.from_pandas(rel, npartitions=4)
    for route, formula in (("ols", "y ~ x + C(k)"), ("iv", "y ~ w + C(k):w + [x ~ z1 + z2]")):
        a, b = _fit_both(route, formula, rel, ddf, mech)
        _assert_same(a, b)


def test_dask_series_clusters_equal_column_name(released):
    rel, mech = released
    ddf = dd.from_pandas(rel, npartitions=4)
    model = pi.PrivateGMM.ols(OLS, ddf, mechanism=mech)
    by_name = model.fit(cov_type="clustered", clusters="cl", random_state=0)
    by_series = model.fit(cov_type="clustered", clusters=ddf["cl"], random_state=0)
    np.testing.assert_allclose(by_series.bse, by_name.bse, rtol=0, atol=TOL)
    two = model.fit(cov_type="clustered", clusters=ddf[["cl", "c2"]], random_state=0)
    ref = model.fit(cov_type="clustered", clusters=["cl", "c2"], random_state=0)
    np.testing.assert_allclose(two.bse, ref.bse, rtol=0, atol=TOL)


def test_dask_few_clusters_warn_like_pandas(released):
    """The FewClustersWarning of a Dask fit names the same counts and n as pandas."""
    rel, mech = released
    ddf = dd.from_pandas(rel, npartitions=4)
    model = pi.PrivateGMM.ols(OLS, ddf, mechanism=mech, reference_size=REF)
    with pytest.warns(FewClustersWarning, match=r"only 30 clusters.*n >= 2500"):
        model.fit(cov_type="clustered", clusters=["cl", "c2"], random_state=0)


def test_dask_kish_n_eff_of_the_weights_equals_pandas(released):
    """Kish's n_eff from the partitions' sums equals (sum w)^2 / sum w^2 of the column; a
    dominant weight warns on Dask as on pandas."""
    rel, mech = released
    w = rel["wt"].to_numpy()
    ddf = dd.from_pandas(rel, npartitions=4)
    model = pi.PrivateGMM.ols(OLS, ddf, mechanism=mech, reference_size=REF, weights="wt")
    assert abs(model._engine.design.weights_n_eff / (w.sum() ** 2 / (w @ w)) - 1) < 1e-12
    rel = rel.assign(wt=np.where(np.arange(len(rel)) == 3, 1e12, w))
    for frame in (rel, dd.from_pandas(rel, npartitions=4)):
        with pytest.warns(FewEffectiveRowsWarning, match=r"= 1\.0 of the 1500 rows"):
            pi.PrivateGMM.ols(OLS, frame, mechanism=mech, reference_size=REF, weights="wt")


def test_row_level_values_are_not_gathered(released):
    rel, mech = released
    ddf = dd.from_pandas(rel, npartitions=4)
    res = pi.PrivateGMM.ols(OLS, ddf, mechanism=mech).fit(random_state=0)
    ref = pi.PrivateGMM.ols(OLS, rel, mechanism=mech).fit(random_state=0)
    with pytest.raises(UnsupportedBackendError, match="Dask"):
        res.influence  # noqa: B018
    with pytest.raises(UnsupportedBackendError, match="bootstrap"):
        res.bootstrap(n_boot=10, random_state=0)
    with pytest.raises(UnsupportedBackendError, match="predict"):
        res.fittedvalues  # noqa: B018
    # selections, intervals and predictions at new (pandas) rows work
    assert res[["x"]].nobs == len(rel)
    np.testing.assert_allclose(res.conf_int(), ref.conf_int(), rtol=0, atol=TOL)
    new = rel.head(5)
    np.testing.assert_allclose(res.predict(new), ref.predict(new), rtol=0, atol=TOL)
    back = pickle.loads(pickle.dumps(res))
    np.testing.assert_allclose(back.bse, res.bse, rtol=0, atol=0)
    assert back.nobs == res.nobs


@pytest.mark.parametrize(
    "clusters,match",
    [
        ("x", "covered by the mechanism"),
        ("nope", "not in the data"),
        (np.zeros(1500), "column name"),
        (["cl", "c2", "w"], "one column"),
    ],
)
def test_cluster_errors(released, clusters, match):
    rel, mech = released
    model = pi.PrivateGMM.ols(OLS, dd.from_pandas(rel, npartitions=2), mechanism=mech)
    with pytest.raises(ClusterError, match=match):
        model.fit(cov_type="clustered", clusters=clusters)


def test_cluster_label_checks(released):
    rel, mech = released
    rel = rel.assign(one=1, gap=rel["cl"].where(rel["cl"] > 0))
    model = pi.PrivateGMM.ols(OLS, dd.from_pandas(rel, npartitions=2), mechanism=mech)
    with pytest.raises(ClusterError, match="at least 2 clusters"):
        model.fit(cov_type="clustered", clusters="one")
    with pytest.raises(ClusterError, match="missing label"):
        model.fit(cov_type="clustered", clusters="gap")


def test_logit_outcome_must_be_binary(released):
    rel, mech = released
    with pytest.raises(DataMismatchError, match="0/1"):
        pi.PrivateGMM.logit("cl ~ x", dd.from_pandas(rel, npartitions=2), mechanism=mech)


def test_logit_separation_warns_on_dask(released):
    rel, mech = released
    u = (rel["w"] > 0).astype(int)
    ddf = dd.from_pandas(rel.assign(u=u, s=u), npartitions=3)  # the public u separates s
    with pytest.warns(PerfectSeparationWarning, match="Complete separation.*largest is 'u'"):
        res = pi.PrivateGMM.logit("s ~ x + u", ddf, mechanism=mech,
                                  reference_size=REF).fit(random_state=0)
    assert any("Complete separation" in note for note in res.diagnostics.notes)


def test_logit_private_regressors_only(released):
    # no public regressor: the public index is constant, its reference expectations exact
    rel, mech = released
    a, b = _fit_both("logit", "d ~ x + C(g)", rel, dd.from_pandas(rel, npartitions=3), mech)
    _assert_same(a, b)
    assert not any("interpolation" in note for note in b.diagnostics.notes)


def test_distributed_cluster_gives_the_same_numbers(released):
    """Worker processes (every task and the shared single-index span pickled)."""
    distributed = pytest.importorskip("distributed")
    rel, mech = released
    ddf = dd.from_pandas(rel, npartitions=3)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        for route, formula in (("iv", IV), ("logit", LOGIT)):
            a, b = _fit_both(route, formula, rel, ddf, mech, **CLUSTER_OPTS[1])
            _assert_same(a, b)


@pytest.mark.parametrize("route,formula", [("ols", OLS), ("iv", IV), ("logit", LOGIT)])
@pytest.mark.parametrize("opts", CLUSTER_OPTS, ids=["hc0", "cl1", "cl2"])
def test_sampling_weights(released, route, formula, opts):
    rel, mech = released
    ddf = _frame(rel, [0, 0, 700, 701, 1500])  # an empty and a one-row partition
    a, b = _fit_both(route, formula, rel, ddf, mech, weights="wt", **opts)
    _assert_same(a, b)
    unweighted = getattr(pi.PrivateGMM, route)(formula, rel, mechanism=mech, reference_size=REF)
    assert not np.allclose(unweighted.fit(random_state=0).params, a.params)
    assert ("Sampling weights:", "wt") in b._record.facts
    if route == "logit":
        np.testing.assert_allclose(
            b.get_margeff().effects, a.get_margeff().effects, rtol=0, atol=TOL
        )


def test_weighted_logit_at_alpha_one():
    """Oracle: statsmodels' weighted GLM (binomial) and the HC0 sandwich of its scores."""
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(5)
    n = 2000
    x, v, wt = rng.uniform(-1, 1, n), rng.normal(size=n), rng.uniform(0.2, 3.0, n)
    d = (rng.random(n) < expit(0.3 + v + x)).astype(int)
    frame = pd.DataFrame({"x": x, "v": v, "d": d, "wt": wt})
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-1, 1)})
    res = pi.PrivateGMM.logit(
        "d ~ x + v", dd.from_pandas(frame, npartitions=3), mechanism=mech, weights="wt"
    ).fit()
    X = sm.add_constant(frame[["x", "v"]]).to_numpy()
    glm = sm.GLM(d, X, family=sm.families.Binomial(), var_weights=wt).fit(tol=1e-12)
    p = expit(X @ glm.params)
    H = (X * (wt * p * (1 - p))[:, None]).T @ X
    G = X * (wt * (d - p))[:, None]
    cov = np.linalg.solve(H, np.linalg.solve(H, G.T @ G).T)
    np.testing.assert_allclose(res.params.to_numpy(), glm.params, atol=1e-8)
    np.testing.assert_allclose(res.bse.to_numpy(), np.sqrt(np.diag(cov)), rtol=1e-7)


@pytest.mark.parametrize("cov_type", ["robust", "clustered"])
def test_weighted_ols_is_wls_at_alpha_one(released, cov_type):
    """Oracle: statsmodels' WLS (HC0, or clustered without small-sample factors)."""
    sm = pytest.importorskip("statsmodels.api")
    rel, _ = released
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-3.0, 5.0)})
    rel = rel[["x", "w", "y", "wt", "cl"]].copy()
    rel.attrs = {}  # read as released at alpha = 1 (the columns as they are)
    X = sm.add_constant(rel[["x", "w"]])
    wls = sm.WLS(rel["y"], X, weights=rel["wt"])
    if cov_type == "robust":
        ref = wls.fit(cov_type="HC0")
        opts = {}
    else:
        ref = wls.fit(cov_type="cluster", cov_kwds={"groups": rel["cl"], "use_correction": False})
        opts = {"cov_type": "clustered", "clusters": "cl"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
        res = pi.PrivateGMM.ols(
            "y ~ x + w", dd.from_pandas(rel, npartitions=3), mechanism=mech, weights="wt"
        ).fit(**opts)
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), atol=1e-10)
    np.testing.assert_allclose(res.bse.to_numpy(), ref.bse.to_numpy(), atol=1e-10)


@pytest.mark.parametrize(
    "column,value,error,match",
    [
        ("wt", -1.0, pi.exceptions.WeightsError, "negative"),
        ("wt", np.nan, pi.exceptions.MissingValueError, "NaN"),
        ("wt", 0.0, pi.exceptions.WeightsError, "zero everywhere"),
        ("x", None, pi.exceptions.WeightsError, "covered by the mechanism"),
    ],
)
def test_weights_errors(released, column, value, error, match):
    rel, mech = released
    rel = rel.copy()
    if value is not None:
        if value == 0.0:
            rel[column] = 0.0
        else:
            rel.loc[1200, column] = value
    for data in (rel, dd.from_pandas(rel, npartitions=3)):
        with pytest.raises(error, match=match):
            pi.PrivateGMM.ols(OLS, data, mechanism=mech, weights=column)
