import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer import exceptions as ex


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.5, True, "0.5", np.nan])
def test_alpha_outside_unit_interval_or_bool(alpha):
    with pytest.raises(
        ValueError, match=r"'alpha' parameter of AlphaIdentity must be a float in \(0, 1\]"
    ):
        pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(0, 1)})


def _mech():
    return pi.AlphaIdentity(
        0.5, {"x": pi.reference.Uniform(0, 1), "g": pi.reference.Categorical(["a", "b"])}
    )


def test_nan_in_private_column():
    df = pd.DataFrame({"x": [0.1, np.nan], "g": ["a", "b"]})
    with pytest.raises(ex.MissingValueError, match="'x' holds 1 missing"):
        _mech().privatize(df)


def test_value_outside_support_and_nothing_written():
    df = pd.DataFrame({"x": [0.1, 2.0], "g": ["a", "b"]})
    before = df.copy()
    with pytest.raises(ex.OutOfSupportError, match="outside the support"):
        _mech().privatize(df)
    pd.testing.assert_frame_equal(df, before)


def test_unknown_category():
    df = pd.DataFrame({"x": [0.1, 0.2], "g": ["a", "zz"]})
    with pytest.raises(ex.UnknownCategoryError, match=r"\['zz'\].*outside the public levels"):
        _mech().privatize(df)


def test_private_column_missing_from_data():
    with pytest.raises(ex.MechanismMismatchError, match=r"\['g'\].*missing"):
        _mech().privatize(pd.DataFrame({"x": [0.1]}))


def test_empty_or_bad_reference():
    with pytest.raises(ex.MechanismMismatchError, match="non-empty mapping"):
        pi.AlphaIdentity(0.5, {})
    with pytest.raises(TypeError, match="must be a Uniform"):
        pi.AlphaIdentity(0.5, {"x": 3})
    with pytest.raises(ValueError, match="low < high"):
        pi.reference.Uniform(1, 0)
    with pytest.raises(ValueError, match="sum to 1"):
        pi.reference.Categorical(["a", "b"], probs=[0.5, 0.6])


def test_random_state_types():
    df = pd.DataFrame({"x": [0.1], "g": ["a"]})
    with pytest.raises(TypeError, match="random_state"):
        _mech().privatize(df, random_state=True)
    with pytest.raises(TypeError, match="random_state"):
        _mech().privatize(df, random_state=np.random.RandomState(0))


def test_negative_int_random_state_names_the_argument():
    df = pd.DataFrame({"x": [0.1], "g": ["a"]})
    for seed in (-1, np.int64(-3)):
        with pytest.raises(ValueError, match=r"random_state must be None, a non-negative int"):
            _mech().privatize(df, random_state=seed)
