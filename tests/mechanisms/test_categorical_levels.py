"""Categorical levels match data by value: bool data under levels [0, 1] and back.

``Categorical.out_of_support`` checks membership with Python equality (``True == 1``);
the release used to code values by type as well, so every kept value of a bool column
under levels ``[0, 1]`` went out as a missing value.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import OutOfSupportError
from privinfer.mechanisms._levels import level_codes


def _release(x: np.ndarray, levels: list) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = x.size
    raw = pd.DataFrame({"y": rng.normal(size=n), "d": rng.integers(0, 2, n), "x": x,
                        "z": rng.uniform(size=n)})
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Categorical(levels),
                                  "z": pi.reference.Uniform(0, 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mech.privatize(raw, public=["y", "d"], random_state=1)


@pytest.mark.parametrize(("values", "levels"), [
    (np.arange(300) % 2 == 1, [0, 1]),
    (np.arange(300) % 2, [False, True]),
    (np.arange(300) % 2 * 1.0, [0, 1]),
])
def test_values_equal_to_a_level_are_released_as_that_level(values, levels):
    same_type = _release(np.arange(300) % 2, [0, 1])
    rel = _release(values, levels)
    assert not rel["x"].isna().any()
    assert rel["x"].cat.categories.tolist() == levels
    np.testing.assert_array_equal(rel["x"].cat.codes, same_type["x"].cat.codes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = [pi.PrivateATE.from_formula("y ~ d | C(x) + z", r).fit(random_state=0)
                for r in (rel, same_type)]
    assert float(fits[0].params.iloc[0]) == pytest.approx(float(fits[1].params.iloc[0]), abs=1e-12)


def test_level_codes_match_by_value_and_refuse_other_values():
    np.testing.assert_array_equal(
        level_codes(pd.Series([True, False, True]), [0, 1], "x"), [1, 0, 1])
    np.testing.assert_array_equal(
        level_codes(pd.Series(["b", "a"]), ["a", "b"], "g"), [1, 0])
    with pytest.raises(OutOfSupportError, match="outside the public levels"):
        level_codes(pd.Series([0, 2]), [0, 1], "x")
