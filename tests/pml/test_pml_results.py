"""PMLTest, PrivateMean and PrivateVectorMean as first-class models with standard results."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.iolib.summary import Summary

import privinfer as pi
from privinfer.exceptions import DataMismatchError

P4 = np.array([0.3, 0.3, 0.2, 0.2])
Q4 = np.array([0.2, 0.2, 0.3, 0.3])


def test_models_are_at_top_level():
    assert pi.PMLTest is pi.pml.PMLTest
    assert pi.PrivateMean is pi.pml.PrivateMean
    assert pi.PrivateVectorMean is pi.pml.PrivateVectorMean
    assert {"PMLTest", "PrivateMean", "PrivateVectorMean", "summary_col"} <= set(pi.__all__)


@pytest.fixture(scope="module")
def mean_result():
    pm = pi.PrivateMean(bounds=(0.0, 10.0), eps=1.0, c=0.05)
    x = np.random.default_rng(0).uniform(2, 8, 4000)
    return pm.estimate(pd.Series(pm.privatize(x, random_state=1), name="income"))


def test_mean_result_follows_results_conventions(mean_result):
    res = mean_result
    pd.testing.assert_series_equal(res.bse, res.std_errors)
    assert res.model == "PrivateMean" and res.model.endog_names == "income"
    np.testing.assert_allclose(res.cov.to_numpy(), [[res.bse["mean"] ** 2]])
    z = res.params["mean"] / res.bse["mean"]
    assert res.tvalues["mean"] == pytest.approx(z)
    assert res.pvalues["mean"] == pytest.approx(2 * stats.norm.sf(abs(z)))
    smry = res.summary()
    assert isinstance(smry, Summary)
    text = str(smry)
    assert "PrivateMean Results" in text and "Grosse, Saeidian" in text and "seed" not in text
    assert "\\begin{" in smry.as_latex() and "<table" in smry.as_html()
    assert str(res) == text and res._repr_html_() == smry.as_html()


def test_mean_result_tests_equal_hand_computation(mean_result):
    res = mean_result
    est, se = res.params["mean"], res.bse["mean"]
    tt = res.t_test("mean = 5")
    np.testing.assert_allclose(tt.statistic, [(est - 5) / se], rtol=1e-12)
    w = res.wald_test("mean = 5")
    assert w.statistic == pytest.approx(((est - 5) / se) ** 2, rel=1e-12)
    f = res.f_test("mean = 5")
    assert f.df_denom == 4000 - 1
    assert float(f.pvalue) == pytest.approx(stats.f.sf(((est - 5) / se) ** 2, 1, 3999))


def test_mean_result_save_load(mean_result, tmp_path):
    path = tmp_path / "mean.pkl"
    mean_result.save(path)
    back = pi.pml.PrivateMeanResult.load(path)
    pd.testing.assert_series_equal(back.params, mean_result.params)
    with pytest.raises(DataMismatchError, match="not a PMLTestResult"):
        pi.pml.PMLTestResult.load(path)


def test_from_formula_returns_a_model_whose_fit_gives_group_means():
    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b", "c"], size=6000)
    x = np.select([g == "a", g == "b"], [0.8, 0.5], 0.2)
    pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=2.0, c=0.5)
    released = pd.DataFrame({"y": pm.privatize(x, random_state=2), "g": g})
    model = pi.PrivateMean.from_formula("y ~ C(g)", released, bounds=(0.0, 1.0), eps=2.0,
                                        c=0.5)
    assert isinstance(model, pi.PrivateMean)
    res = model.fit()
    assert res.model.endog_names == "y"
    # group means are independent (disjoint rows): diagonal covariance
    off = res.cov.to_numpy()[~np.eye(3, dtype=bool)]
    assert np.all(off == 0)
    # the Wald statistic for equal means equals the hand computation
    R = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]])
    d = R @ res.params.to_numpy()
    V = R @ np.diag(res.bse.to_numpy() ** 2) @ R.T
    assert res.wald_test(R).statistic == pytest.approx(d @ np.linalg.solve(V, d), rel=1e-12)
    with pytest.raises(DataMismatchError, match="holds its data"):
        model.fit(released["y"])
    with pytest.raises(DataMismatchError, match="no data"):
        pm.fit()


def test_summary_col_counts_every_row_of_group_means():
    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b"], size=3000)
    pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=2.0, c=0.5)
    released = pd.DataFrame({"y": pm.privatize(np.where(g == "a", 0.7, 0.3), random_state=2),
                             "g": g})
    res = pi.PrivateMean.from_formula("y ~ C(g)", released, bounds=(0.0, 1.0), eps=2.0,
                                      c=0.5).fit()
    table = pi.summary_col([res]).tables[0]
    # the groups are disjoint: 3000 rows, as the result's own summary says
    assert table.loc["No. Observations"].tolist() == ["3000"] == [str(res.n_rows)]
    assert re.search(r"No\. Observations:\s+3000\b", str(res.summary()))


def test_mean_results_repr_is_one_line_like_the_other_results(mean_result):
    assert repr(mean_result) == f"<PrivateMean results: mean={mean_result.params['mean']:.4g}>"
    vm = pi.PrivateVectorMean(bounds=[(0, 1), (0, 1)], eps=2.0, c=0.5)
    res = vm.estimate(vm.privatize(np.full((400, 2), 0.5), random_state=1))
    assert repr(res).startswith("<PrivateVectorMean results: x0=")
    assert len(repr(res).splitlines()) == 1


def test_vector_mean_covariance_matches_monte_carlo():
    # means far from the box centres make the coordinates clearly negatively correlated
    vm = pi.PrivateVectorMean(bounds=[(0, 1), (0, 1)], eps=5.0, c=0.5)
    reps, n = 300, 800
    X = np.full((reps * n, 2), 0.95)
    rel = vm.privatize(X, random_state=3).reshape(reps, n, 2)
    fits = [vm.fit(r) for r in rel]
    est = np.array([f.params.to_numpy() for f in fits])
    reported = np.mean([f.cov.to_numpy() for f in fits], axis=0)
    empirical = np.cov(est, rowvar=False)
    # theory: Cov = -(0.45)^2 / n off the diagonal
    assert reported[0, 1] == pytest.approx(-(0.45**2) / n, rel=0.1)
    corr_r = reported[0, 1] / np.sqrt(reported[0, 0] * reported[1, 1])
    corr_e = empirical[0, 1] / np.sqrt(empirical[0, 0] * empirical[1, 1])
    assert corr_r < -0.3
    assert abs(corr_e - corr_r) < 3 / np.sqrt(reps)  # Fisher-z scale MC error
    assert fits[0].model == "PrivateVectorMean"


@pytest.fixture(scope="module")
def pml_test():
    return pi.PMLTest(P4, Q4, eps=1.0, c=0.15)


def test_pmltest_mass_estimate_is_unbiased_and_covers(pml_test):
    t = pml_test
    reps, n = 400, 500
    x = np.random.default_rng(5).choice(4, size=reps * n, p=P4)  # H0 is true
    bits = np.asarray(t.privatize(x, random_state=6)).reshape(reps, n)
    res = [t.test(b) for b in bits]
    m = np.array([r.params["mass_A"] for r in res])
    p_a = res[0].null_mass
    assert abs(m.mean() - p_a) < 4 * m.std(ddof=1) / np.sqrt(reps)
    se = np.array([r.bse["mass_A"] for r in res])
    assert np.mean(se) == pytest.approx(m.std(ddof=1), rel=0.12)
    ci = np.array([r.conf_int(0.05).to_numpy()[0] for r in res])
    cover = np.mean((ci[:, 0] <= p_a) & (p_a <= ci[:, 1]))
    assert 0.92 <= cover <= 0.98
    exact = np.array([r.conf_int(0.05, method="exact").to_numpy()[0] for r in res])
    assert np.mean((exact[:, 0] <= p_a) & (p_a <= exact[:, 1])) >= 0.93
    rejections = np.mean([r.reject for r in res])
    assert rejections <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)


def test_pmltest_result_conventions(pml_test):
    x = np.random.default_rng(0).choice(4, size=2000, p=Q4)
    res = pml_test.test(pml_test.privatize(x, random_state=1))
    assert res.model == "PMLTest" and res.nobs == 2000
    # z statistic against P(A), p-value the exact test's
    assert res.tvalues["mass_A"] == pytest.approx(
        (res.params["mass_A"] - res.null_mass) / res.bse["mass_A"])
    assert res.pvalues["mass_A"] == res.p_value
    assert res.bse["mass_A"] == pytest.approx(
        np.sqrt(res.statistic / 2000 * (1 - res.statistic / 2000) / 2000) / res.plans[0].eta_tv)
    smry = res.summary()
    assert isinstance(smry, Summary)
    text = str(smry)
    assert "reject H0" in text and "Plans" in text and "seed" not in text
    tt = res.t_test(f"mass_A = {res.alt_mass}")
    assert abs(float(tt.statistic[0])) < 3
    buf = io.BytesIO()
    res.save(buf)
    buf.seek(0)
    assert pi.pml.PMLTestResult.load(buf).statistic == res.statistic
    with pytest.raises(ValueError, match="'normal' or 'exact'"):
        res.conf_int(method="hoeffding")


def test_summary_col_mixes_pml_results(mean_result, pml_test):
    x = np.random.default_rng(0).choice(4, size=500, p=Q4)
    res_t = pml_test.test(pml_test.privatize(x, random_state=1))
    table = pi.summary_col({"mean": mean_result, "test": res_t}).tables[0]
    assert table.columns.tolist() == ["mean", "test"]
    assert table.index.tolist()[:4] == ["mean", "", "mass_A", ""]
    assert table.loc["No. Observations"].tolist() == ["4000", "500"]


def test_compare_takes_pml_results_as_summary_col_does(mean_result, pml_test):
    """compare() refused PrivateMeanResult and PMLTestResult, which summary_col accepts."""
    x = np.random.default_rng(0).choice(4, size=500, p=Q4)
    res_t = pml_test.test(pml_test.privatize(x, random_state=1))
    pm = pi.PrivateMean(bounds=(0.0, 10.0), eps=2.0, c=0.05)
    res_2 = pm.estimate(pm.privatize(np.random.default_rng(2).uniform(2, 8, 3000),
                                     random_state=3))
    table = pi.compare({"eps = 1": mean_result, "eps = 2": res_2, "test": res_t})
    assert table.params.loc["mean"].tolist()[:2] == [mean_result.params["mean"],
                                                     res_2.params["mean"]]
    assert np.isnan(table.params.loc["mean", "test"])
    assert table.std_errors.loc["mass_A", "test"] == res_t.bse["mass_A"]
    assert table.pvalues.loc["mass_A", "test"] == res_t.p_value
    assert table.nobs.tolist() == [4000, 3000, 500]
    text = str(table.summary())
    assert "PrivateMean" in text and "PMLTest" in text and "nan" not in text
    with pytest.raises(DataMismatchError, match="summary_col also takes statsmodels"):
        pi.compare({"mean": mean_result, "other": object()})


def test_from_formula_accepts_polars():
    pl = pytest.importorskip("polars")
    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b"], size=3000)
    pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=2.0, c=0.5)
    released = pd.DataFrame({"y": pm.privatize(np.where(g == "a", 0.7, 0.3), random_state=2),
                             "g": g})
    kw = {"bounds": (0.0, 1.0), "eps": 2.0, "c": 0.5}
    from_pandas = pi.PrivateMean.from_formula("y ~ C(g)", released, **kw).fit()
    from_polars = pi.PrivateMean.from_formula("y ~ C(g)", pl.from_pandas(released), **kw).fit()
    pd.testing.assert_series_equal(from_polars.params, from_pandas.params)
    with pytest.raises(TypeError, match="expects a DataFrame"):
        pi.PrivateMean.from_formula("y ~ 1", released.to_numpy(), **kw)
