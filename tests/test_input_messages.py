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
