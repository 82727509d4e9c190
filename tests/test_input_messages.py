"""Bad input gets an error that names the problem in our words.

Found by trying the package with odd but plausible inputs: a message that printed the
numbers 0, 1 and the strings '0', '1' alike, a column named by a number, strings where
numbers belong, and statsmodels' ``Q("...")`` quoting of the outcome.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import (
    DataMismatchError,
    MechanismMismatchError,
    UnknownCategoryError,
)


def _raw(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"y": rng.normal(size=n), "d": rng.integers(0, 2, n),
                         "x": np.arange(n) % 2})


def test_numbers_against_string_levels_are_shown_as_numbers():
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Categorical(["0", "1"])})
    with pytest.raises(UnknownCategoryError) as err:
        mech.privatize(_raw(), public=["y", "d"], random_state=1)
    assert "values [0, 1]" in str(err.value) and "the string '1'" in str(err.value)


def test_a_column_named_by_a_number_is_pointed_out():
    mech = pi.AlphaIdentity(0.7, {"0": pi.reference.Categorical([0, 1])})
    with pytest.raises(MechanismMismatchError, match=r"rename\(columns=str\)"):
        mech.privatize(_raw().rename(columns={"x": 0}), public=["y", "d"], random_state=1)
    # a plain missing column gets no such hint
    with pytest.raises(MechanismMismatchError) as err:
        mech.privatize(_raw(), public=["y", "d"], random_state=1)
    assert "rename" not in str(err.value)


@pytest.mark.parametrize("model", [
    pi.PrivateMean(bounds=(0.0, 1.0), eps=2.0, c=0.0),
    pi.PrivateVectorMean(bounds=[(0.0, 1.0), (0.0, 1.0)], eps=2.0, c=0.0),
])
def test_strings_where_numbers_belong_are_refused_in_our_words(model):
    values = np.array(["a", "b"]) if isinstance(model, pi.PrivateMean) else np.array(
        [["a", "b"], ["c", "d"]])
    with pytest.raises(DataMismatchError, match="do not convert to float"):
        model.privatize(values, random_state=1)


def test_a_q_quoted_outcome_is_its_column():
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Categorical([0, 1])})
    raw = _raw().rename(columns={"y": "out come"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = mech.privatize(raw, public=["out come", "d"], random_state=1)
        fits = [pi.PrivateATE.from_formula(f, rel).fit(random_state=0)
                for f in ('Q("out come") ~ d | C(x)', "`out come` ~ d | C(x)")]
    assert fits[0].params.iloc[0] == fits[1].params.iloc[0]
    assert "out come" in str(fits[0].summary())


@pytest.mark.parametrize("build", [
    lambda rel: pi.PrivateATE.from_formula("y ~ d | x +", rel),
    lambda rel: pi.PrivateATE.from_formula("y ~ d | (x", rel),
    lambda rel: pi.PrivateGMM.ols("y ~ x d", rel),
    lambda rel: pi.PublicTrimming.from_formula("d ~ y +", rel),
    lambda rel: pi.PrivateMean.from_formula("y ~ C(d", rel, bounds=(0.0, 1.0), eps=1.0, c=0.5),
], ids=["ate-operator", "ate-bracket", "gmm", "trimming", "mean"])
def test_formula_syntax_errors_are_plain_text(build):
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Categorical([0, 1])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = mech.privatize(_raw(), public=["y", "d"], random_state=1)
    with pytest.raises(DataMismatchError, match="cannot parse") as err:
        build(rel)
    # formulaic colours the offending part for a terminal; logs and notebooks show garbage
    assert "\x1b" not in str(err.value)


def _alpha_entry_points() -> dict[str, tuple[str, object]]:
    """Methods that take a significance level ``alpha``, with the name their error gives."""
    from privinfer.models._gmm_logit import MarginalEffects
    from privinfer.plotting import forest_plot, results_frame
    from privinfer.results import Diagnostics, PrivateResults, ResultsRecord

    phi = np.random.default_rng(0).normal(size=(400, 1))
    rec = ResultsRecord("Demo", "y", pd.Series({"a": 1.0}), phi - phi.mean(0), {"alpha": 1.0},
                        None, (), Diagnostics(), pd.DataFrame(), bias_bound=pd.Series({"a": 0.05}))
    res = PrivateResults(rec)
    pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
    mean = pm.estimate(pm.privatize(np.full(500, 0.5), random_state=0))
    test = pi.PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
    pml = test.test(test.privatize(np.zeros(500, dtype=int), random_state=1))
    me = MarginalEffects(("x",), np.array([0.2]), np.array([[0.0004]]))
    return {
        "PrivateResults.summary": lambda a: res.summary(alpha=a),
        "PrivateResults.summary_frame": lambda a: res.summary_frame(alpha=a),
        "PrivateResults.conf_int": lambda a: res.conf_int(alpha=a),
        "forest_plot": lambda a: forest_plot(res, alpha=a),
        "results_frame": lambda a: results_frame(res, alpha=a),
        "BiasAwareContrastResults.summary": lambda a: res.t_test("a = 0").summary(alpha=a),
        "BiasAwareContrastResults.conf_int": lambda a: res.t_test("a = 0").conf_int(alpha=a),
        "PrivateMeanResult.summary": lambda a: mean.summary(alpha=a),
        "PrivateMeanResult.summary_frame": lambda a: mean.summary_frame(alpha=a),
        "PMLTestResult.summary": lambda a: pml.summary(alpha=a),
        "PMLTest.compare": lambda a: test.compare(500, alpha=a),
        "MarginalEffects.summary_frame": lambda a: me.summary_frame(alpha=a),
    }


@pytest.mark.parametrize("owner", list(_alpha_entry_points()))
def test_a_bad_significance_level_is_reported_by_the_method_called(owner):
    """summary(alpha=1.5) said "the 'alpha' parameter of conf_int", the method it calls;
    some entry points (MarginalEffects.summary_frame, PMLTest.compare) took any alpha."""
    call = _alpha_entry_points()[owner]
    for bad in (1.5, 0.0):
        with pytest.raises(ValueError, match=rf"'alpha' parameter of {owner} must lie in"):
            call(bad)
