"""Strict types, exact Empirical support and honest guarantees (issue 15)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privinfer as pi
from privinfer import exceptions as ex


def _uniform_mech(alpha=0.5):
    return pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(0, 2)})


# ------------------------------------------------------------------------------- types
@pytest.mark.parametrize(
    "values",
    [
        pd.Series(["1", 0.5, 1.5], dtype=object),  # a string among numbers
        pd.Series([1 + 0j, 0.5 + 0.25j, 1.5 + 0j]),  # complex: imaginary part would leak
        pd.Series([1, 0.5, 1.5], dtype=object),  # numbers, but an object column
        pd.Series(["1", "0.5", "1.5"]),  # strings
    ],
    ids=["mixed", "complex", "object", "str"],
)
def test_numeric_private_column_needs_a_real_numeric_dtype(values):
    raw = pd.DataFrame({"x": values})
    with pytest.raises(ex.PrivateDtypeError, match="real numeric dtype"):
        _uniform_mech().privatize(raw, random_state=0)
    assert issubclass(ex.PrivateDtypeError, TypeError)


def test_kept_and_replaced_values_share_one_type():
    raw = pd.DataFrame({"x": np.array([1, 0, 2] * 100, dtype=np.int64)})
    released = _uniform_mech().privatize(raw, random_state=0)
    assert released["x"].dtype == np.float64
    assert {type(v) for v in released["x"].tolist()} == {float}


def test_nullable_numeric_dtype_is_accepted():
    raw = pd.DataFrame({"x": pd.array([1, 0, 2] * 20, dtype="Int64")})
    released = _uniform_mech().privatize(raw, random_state=0)
    assert released["x"].dtype == np.float64
    assert released["x"].between(0, 2).all()


def test_categorical_private_column_releases_only_public_levels():
    mech = pi.AlphaIdentity(0.5, {"g": pi.reference.Categorical([1, 2, 3])})
    with pytest.raises(ex.UnknownCategoryError):
        mech.privatize(pd.DataFrame({"g": ["1", 2, 3]}), random_state=0)
    # 2.0 == 2 is the level 2: released as the level itself, never as the raw object
    released = mech.privatize(pd.DataFrame({"g": [2.0, 1, 3] * 50}), random_state=0)
    assert {type(v) for v in released["g"].astype(object)} == {int}


# ------------------------------------------------------------------ empirical support
def _empirical_mech(alpha=0.5):
    return pi.AlphaIdentity(alpha, {"x": pi.reference.Empirical(
        pd.Series([0.0, 1.0, 2.0, 3.0], name="x"))})


def test_empirical_value_inside_the_range_but_not_a_support_point_is_refused():
    with pytest.raises(ex.OutOfSupportError, match="outside the support"):
        _empirical_mech().privatize(pd.DataFrame({"x": [0.0, 1.5, 3.0]}), random_state=0)


def test_empirical_joint_support_is_checked_on_whole_rows():
    sample = pd.DataFrame({"a": [1, 2, 3], "b": ["p", "q", "r"]})
    mech = pi.AlphaIdentity(0.5, pi.reference.Empirical(sample))
    with pytest.raises(ex.OutOfSupportError):
        mech.privatize(pd.DataFrame({"a": [1, 2], "b": ["p", "r"]}), random_state=0)
    released = mech.privatize(pd.DataFrame({"a": [1, 3] * 50, "b": ["p", "r"] * 50}),
                              random_state=0)
    assert set(zip(released["a"], released["b"], strict=True)) <= {(1, "p"), (2, "q"), (3, "r")}


def test_empirical_kept_values_are_released_as_the_sample_points():
    # raw float 1.0 equals the sample's int 1: released as the int, like a replacement
    mech = pi.AlphaIdentity(0.5, pi.reference.Empirical(pd.Series([0, 1, 2], name="x")))
    released = mech.privatize(pd.DataFrame({"x": [1.0, 2.0, 0.0] * 50}), random_state=0)
    assert released["x"].dtype == np.int64


def test_empirical_guarantee_is_the_pure_eps_of_its_support():
    g = _empirical_mech().guarantees()
    assert g.ldp_delta == 0.0
    assert g.ldp_eps == pytest.approx(np.log(5.0))  # 1 + 0.5 / (0.5 * 1/4)
    # repeated sample points are one atom with their summed weight
    rep = pi.AlphaIdentity(0.5, {"x": pi.reference.Empirical(
        pd.Series([0.0, 0.0, 1.0, 2.0], name="x"))}).guarantees()
    assert rep.ldp_eps == pytest.approx(np.log(5.0))


# ----------------------------------------------------------------------- guarantees
def test_atomless_is_claimed_only_for_atomless_references():
    g = _uniform_mech().guarantees()
    assert g.atomless and "atomless" in str(g)
    poisson = pi.AlphaIdentity(0.5, {"k": stats.poisson(3.0)}).guarantees()
    assert not poisson.atomless
    assert "atomless reference" not in str(poisson)
    assert "no finite pure eps" in str(poisson)
    assert poisson.tv == 0.5 and poisson.ldp_delta == 0.5
    mixed = pi.AlphaIdentity(0.5, {"k": stats.poisson(3.0),
                                   "x": pi.reference.Uniform(0, 1)}).guarantees()
    assert mixed.atomless  # a product with an atomless factor has no atoms
