"""Covariate designs of bare numeric columns skip formulaic: the same matrix, bit for bit.

Oracle: formulaic's own model matrix of the same spec.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.formula import _to_float, build_covariate_spec, cast_private_categoricals


def _frame(n: int = 200) -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"a": rng.normal(size=n), "b": rng.integers(0, 5, n), "c": rng.uniform(size=n),
         "g": rng.choice(["u", "v", "w"], n), "p": rng.normal(size=n)}
    )  # fmt: skip
    mech = pi.AlphaIdentity(
        0.5,
        {"a": pi.reference.Uniform(-3, 3), "b": pi.reference.Uniform(0, 5),
         "c": pi.reference.Uniform(0, 1), "g": pi.reference.Categorical(["u", "v", "w"])},
    )  # fmt: skip
    return cast_private_categoricals(df, mech), mech


@pytest.mark.parametrize("formula", ["c + a + b + p", "a + b + C(g) + p", "a + center(c) + p"])
def test_designs_equal_formulaic(formula):
    df, mech = _frame()
    spec = build_covariate_spec(formula, df, mech, "test")
    got_priv, got_pub = spec.private_design(df), spec.public_design(df)
    want_priv = _to_float(spec.private_spec.get_model_matrix(df[list(spec.private_variables)]))
    want_pub = _to_float(spec.public_spec.get_model_matrix(df[list(spec.public_variables)]))
    np.testing.assert_array_equal(got_priv, want_priv)
    np.testing.assert_array_equal(got_pub, want_pub)
    assert got_priv.flags["C_CONTIGUOUS"]


def test_missing_values_still_reach_formulaic():
    df, mech = _frame()
    spec = build_covariate_spec("a + c", df, mech, "test")
    bad = df.copy()
    bad.loc[3, "a"] = np.nan
    with pytest.raises(ValueError, match="null values"):  # formulaic reports it, as before
        spec.private_design(bad)


def test_cast_private_categoricals_leaves_the_input_alone():
    df, mech = _frame()
    raw = df.assign(g=df["g"].astype(object))
    out = cast_private_categoricals(raw, mech)
    assert isinstance(out["g"].dtype, pd.CategoricalDtype)
    assert raw["g"].dtype == object
