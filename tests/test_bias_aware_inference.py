"""Bias-aware inference of the results: the joint band under bias bounds, standard errors
of zero with a positive bound, the comparison table's note, the public contrast class."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal, norm

import privinfer as pi
from privinfer._critical import bias_aware_critical_value
from privinfer.results import BootstrapDraws, Diagnostics, PrivateResults, ResultsRecord

NAMES = ["a", "b", "c"]


def _equicorrelated(k: int, rho: float) -> np.ndarray:
    corr = np.full((k, k), rho)
    np.fill_diagonal(corr, 1.0)
    return corr


def _with_draws(se, corr, bound, n_boot=5000, seed=42, params=None):
    """Results with covariance diag(se) corr diag(se), a bias bound and N(0, corr) draws."""
    k = len(se)
    names = NAMES[:k]
    t_stats = np.random.default_rng(seed).multivariate_normal(np.zeros(k), corr, n_boot)
    rec = ResultsRecord(
        "Demo", "y", pd.Series(np.zeros(k) if params is None else params, index=names),
        np.zeros((10, k)), {"alpha": 1.0}, None, (), Diagnostics(), pd.DataFrame(),
        cov_override=pd.DataFrame(corr * np.outer(se, se), index=names, columns=names),
        bias_bound=None if bound is None else pd.Series(bound, index=names),
        bootstrap=BootstrapDraws("normal", n_boot, t_stats, "rows"),
    )  # fmt: skip
    return PrivateResults(rec)


def _joint_coverage(half, se, bias, corr, n_mc=40_000, seed=7):
    """Share of N(bias, diag(se) corr diag(se)) errors inside +/- half in every coordinate."""
    err = bias + np.random.default_rng(seed).multivariate_normal(np.zeros(len(se)), corr, n_mc) * se
    return float(np.mean((np.abs(err) <= half).all(axis=1)))


@pytest.mark.parametrize("bias_in_se", [(1.0, 1.0, 1.0), (2.0, 0.0, 0.5)])
def test_joint_band_with_bias_bounds_covers_every_parameter_at_once(bias_in_se):
    """Seeded Monte Carlo: three parameters (correlation 0.5), every bias at its bound with
    every sign pattern. max(pointwise bias-aware, sup-t) per parameter, the old rule,
    covered about 0.86 at the 0.95 level (1 SE each); the bias-aware sup-t band covers
    0.95 within Monte Carlo error (40,000 draws: SE 0.0011) at every vertex. (With biases
    2, 0, 0.5 SE the shorter band is the sup-t value plus each parameter's own B/se:
    half-lengths 4.34, 2.34, 2.84 SE, coverage 0.964.)"""
    se = np.array([0.1, 0.2, 0.05])
    corr = _equicorrelated(3, 0.5)
    bound = np.asarray(bias_in_se) * se
    res = _with_draws(se, corr, bound)
    ci = res.conf_int(joint=True)
    half = ((ci["upper"] - ci["lower"]) / 2).to_numpy()
    draws = res.boot_t_stats.to_numpy()
    sup_t = max(np.quantile(np.abs(draws).max(axis=1), 0.95), norm.ppf(0.975))
    old = np.maximum(bias_aware_critical_value(np.asarray(bias_in_se), 0.05), sup_t) * se
    new_cov, old_cov = [], []
    for signs in itertools.product([1.0, -1.0], repeat=3):
        bias = np.array(signs) * bound
        new_cov.append(_joint_coverage(half, se, bias, corr))
        old_cov.append(_joint_coverage(old, se, bias, corr))
    assert min(new_cov) >= 0.95 - 0.005, new_cov
    if bias_in_se == (1.0, 1.0, 1.0):
        assert max(old_cov) < 0.9 and min(old_cov) < 0.87, old_cov
    # never narrower than the pointwise bias-aware intervals or the band without bounds
    point = res.conf_int()
    assert ((ci["upper"] - ci["lower"]) >= (point["upper"] - point["lower"])).all()
    assert (half >= sup_t * se - 1e-15).all()


def test_supt_critical_value_is_the_largest_vertex_quantile_on_symmetrised_draws():
    """The enumeration of 2^(k - 1) patterns on (T, -T) equals the brute-force maximum over
    all 2^k vertices; a parameter with B = 0 enters unshifted; no bound at all gives the
    plain sup-t quantile."""
    from privinfer._critical import bias_aware_supt_critical_value

    draws = np.random.default_rng(1).multivariate_normal(
        np.zeros(4), _equicorrelated(4, 0.3), 3000
    )
    sym = np.vstack((draws, -draws))
    t = np.array([1.0, 0.0, 0.4, 2.5])
    for level in (0.05, 0.1):
        brute = max(
            np.quantile(np.abs(sym + np.array(s) * t).max(axis=1), 1 - level)
            for s in itertools.product([1.0, -1.0], repeat=4)
        )
        assert bias_aware_supt_critical_value(draws, t, level) == pytest.approx(brute, rel=1e-13)
    plain = np.quantile(np.abs(draws).max(axis=1), 0.95)
    assert bias_aware_supt_critical_value(draws, np.zeros(4)) == pytest.approx(plain, rel=1e-13)


def test_the_vertex_is_the_worst_bias_and_matches_the_independent_closed_form():
    """For Gaussian T, b -> P(max_j |T_j + b_j| <= c) is log-concave and symmetric, so over
    the box its minimum is at a vertex: at the critical value from Gaussian draws the exact
    rectangle probability is 0.95 at the worst vertex and no smaller at random interior
    points. With independent T and equal t the critical value solves
    prod_j P(|N(t, 1)| <= c) = 1 - a."""
    from privinfer._critical import bias_aware_supt_critical_value

    corr = _equicorrelated(3, 0.5)
    t = np.array([1.0, 0.5, 1.5])
    draws = np.random.default_rng(5).multivariate_normal(np.zeros(3), corr, 200_000)
    c = bias_aware_supt_critical_value(draws, t)
    law = multivariate_normal(np.zeros(3), corr)

    def inside(b):
        return law.cdf(c - b, lower_limit=-c - b)

    vertex = min(inside(np.array(s) * t) for s in itertools.product([1.0, -1.0], repeat=3))
    assert vertex == pytest.approx(0.95, abs=0.002)
    interior = np.random.default_rng(2).uniform(-1, 1, (30, 3)) * t
    assert all(inside(b) >= vertex - 1e-6 for b in interior)
    assert inside(np.zeros(3)) > vertex + 0.01
    draws = np.random.default_rng(3).standard_normal((100_000, 3))
    exact = float(bias_aware_critical_value(1.0, 1 - 0.95 ** (1 / 3)))
    assert bias_aware_supt_critical_value(draws, np.ones(3)) == pytest.approx(exact, abs=0.02)


def test_more_bounds_than_enumerated_give_a_conservative_critical_value():
    """Beyond 12 bounded parameters: the smaller of q + max t (triangle inequality) and the
    union bound max_j c_j(a / k), never below the enumerated value on the same draws."""
    from privinfer._critical import bias_aware_supt_critical_value

    k = 13
    draws = np.random.default_rng(4).multivariate_normal(np.zeros(k), _equicorrelated(k, 0.5),
                                                         400)  # fmt: skip
    t = np.linspace(0.2, 1.5, k)
    fallback = bias_aware_supt_critical_value(draws, t)
    enumerated = bias_aware_supt_critical_value(draws, t, max_enumerate=k)
    triangle = np.quantile(np.abs(draws).max(axis=1), 0.95) + t.max()
    union = bias_aware_critical_value(t, 0.05 / k).max()
    assert fallback == pytest.approx(min(triangle, union), rel=1e-13)
    assert enumerated <= fallback


def test_joint_band_without_bounds_is_unchanged_bit_for_bit():
    se = np.array([0.1, 0.2, 0.05])
    # n_boot = 1234: the quantile of the draws differs from that of the draws and their
    # negatives (the bias-aware computation), which a round n_boot can hide
    res = _with_draws(se, _equicorrelated(3, 0.5), None, n_boot=1234, params=[0.3, -0.1, 0.2])
    for level in (0.05, 0.1):
        draws = res.boot_t_stats.to_numpy()
        z = max(float(np.quantile(np.abs(draws).max(axis=1), 1 - level)),
                float(norm.ppf(1 - level / 2)))  # fmt: skip
        expected = pd.DataFrame({"lower": res.params - z * res.bse,
                                 "upper": res.params + z * res.bse})  # fmt: skip
        pd.testing.assert_frame_equal(res.conf_int(level, joint=True), expected, check_exact=True)


def _zero_se(params=(0.15, 0.15), bound=(0.0, 0.1)):
    """Two parameters: 'a' with noise, 'b' with none (influence values of zero)."""
    phi = np.random.default_rng(0).normal(size=(400, 2))
    phi -= phi.mean(0)
    phi[:, 1] = 0.0
    rec = ResultsRecord("Demo", "y", pd.Series(params, index=["a", "b"]), phi, {"alpha": 1.0},
                        None, (), Diagnostics(), pd.DataFrame(),
                        bias_bound=pd.Series(bound, index=["a", "b"]))  # fmt: skip
    return PrivateResults(rec)


def test_zero_se_with_a_bound_gives_the_interval_plus_minus_b():
    """se = 0 < B made conf_int, summary and the joint band raise 'bias_aware_critical_value:
    bias_over_se must be finite'; the interval is now coef +/- B (the limit of c se as
    se -> 0), at every level and jointly, and the summary says so."""
    res = _zero_se()
    assert res.bse["b"] == 0.0
    for level in (0.01, 0.05, 0.3):
        ci = res.conf_int(level)
        assert ci.loc["b"].tolist() == pytest.approx([0.05, 0.25], abs=1e-15)
        assert ci.loc["a"].tolist() == pytest.approx(_zero_se(bound=(0.0, 0.0)).conf_int(level)
                                                     .loc["a"].tolist(), rel=1e-12)  # fmt: skip
    boot = res.bootstrap(n_boot=400, random_state=0)
    joint = boot.conf_int(joint=True)
    assert joint.loc["b"].tolist() == pytest.approx([0.05, 0.25], abs=1e-15)
    assert np.isfinite(joint.to_numpy()).all()
    text = " ".join(str(res.summary()).split())
    assert "b (B = 0.1, SE = 0: +/- B)" in text


@pytest.mark.parametrize(("value", "expected"), [(0.15, 0.0), (0.08, 1.0), (-0.1, 1.0)])
def test_zero_se_pvalues_are_the_limit_of_the_bias_aware_ones(value, expected):
    """p = 0 when |coef| > B (no bias within the bound explains it), else 1: what the
    interval coef +/- B says at every level. It was NaN (0 / 0), or 0 when |coef| <= B
    in t_test and Romano-Wolf."""
    res = _zero_se(params=(0.15, value))
    assert res.pvalues["b"] == expected
    assert float(res.t_test("b = 0").pvalue) == expected
    rw = res.bootstrap(n_boot=400, random_state=0).p_adjust("romano-wolf")
    assert rw.loc["b", "pvalue_adj"] == expected
    ci = res.conf_int()
    assert (ci.loc["b", "lower"] > 0 or ci.loc["b", "upper"] < 0) == (expected == 0.0)


def test_zero_sd_restrictions_of_t_test_get_the_bound_as_half_length():
    """A restriction with sd = 0 < |r|'B: interval r'theta +/- |r|'B and p-value from
    |r'theta - q| against the bound; t_test gave the zero-length interval [0.15, 0.15]
    and p = 0 whatever q."""
    res = _zero_se()
    for q, p in ((0.0, 0.0), (0.2, 1.0), (0.3, 0.0)):
        tt = res.t_test(f"b = {q}")
        np.testing.assert_allclose(tt.conf_int(), [[0.05, 0.25]], atol=1e-15)
        assert float(tt.pvalue) == p
    tt = res.t_test("a + b = 0.2, a = 0")  # a + b has noise: its usual bias-aware test
    assert tt.sd[0] > 0 and 0 < tt.pvalue[0] < 1
    assert "SE = 0: +/- B" in str(res.t_test("b = 0").summary())


def test_compare_summary_notes_the_bias_bounds_of_each_model():
    phi = np.random.default_rng(0).normal(size=(400, 2))
    phi -= phi.mean(0)

    def fit(bound):
        return PrivateResults(ResultsRecord(
            "Demo", "y", pd.Series({"a": 0.15, "b": 0.15}), phi, {"alpha": 1.0}, None, (),
            Diagnostics(), pd.DataFrame(), bias_bound=bound))  # fmt: skip

    bounded = fit(pd.Series({"a": 0.0, "b": 0.1}))
    table = pi.compare({"wide": bounded, "plain": fit(None)})
    text = " ".join(str(table.summary()).split())
    assert "wide: Intervals widened for an estimated regularisation bias: b (B = 0.1," in text
    assert "plain:" not in text
    main = " ".join(str(bounded.summary()).split())  # the same words as the fit's summary
    note = " ".join(bounded._bias_note().split())
    assert f"wide: {note}" in text and note.rstrip(".") in main
    plain_text = " ".join(str(pi.compare({"x": fit(None), "y": fit(None)}).summary()).split())
    assert "widened" not in plain_text


def test_bias_aware_contrast_results_is_public():
    """t_test's bias-aware class is importable from privinfer.results (and documented), not
    only from the private privinfer._hypotheses."""
    from privinfer.results import BiasAwareContrastResults

    assert "BiasAwareContrastResults" in pi.results.__all__
    res = _zero_se(bound=(0.05, 0.1))
    assert isinstance(res.t_test("a = 0"), BiasAwareContrastResults)
    api = (Path(__file__).resolve().parents[1] / "docs" / "api.rst").read_text()
    assert "results.BiasAwareContrastResults" in api
