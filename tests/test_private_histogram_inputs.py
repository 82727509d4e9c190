"""private_histogram refuses a ``by`` column or bin edges it cannot use, and drops no row.

A NaN in ``by`` used to make a group of no rows (its rows vanished, the masses were NaN),
ints mixed with strings failed inside ``sorted``, and NaN edges gave wrong masses.
"""

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.descriptive import private_histogram
from privinfer.exceptions import DataMismatchError, MissingValueError

pytestmark = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")


@pytest.fixture(scope="module")
def release():
    rng = np.random.default_rng(0)
    raw = pd.DataFrame({"x": rng.beta(2, 5, 400), "t": rng.integers(0, 2, 400)})
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    return mech.privatize(raw, public=["t"], random_state=1), mech


def _histogram(released, mech, **kwargs):
    kwargs.setdefault("bins", 2)
    return private_histogram(released, "x", mechanism=mech, random_state=0, **kwargs)


@pytest.mark.parametrize("missing", [np.nan, None])
def test_missing_by_values_are_refused(release, missing):
    released, mech = release
    edited = released.astype({"t": object})
    edited.loc[:9, "t"] = missing
    with pytest.raises(MissingValueError, match=r"'by' column 't' holds 10 missing.*fillna"):
        _histogram(edited, mech, by="t")


def test_by_mixing_ints_and_strings_is_refused(release):
    released, mech = release
    edited = released.astype({"t": object})
    edited.loc[:9, "t"] = "control"
    with pytest.raises(DataMismatchError,
                       match=r"'by' column 't' mixes value types \['int', 'str'\].*astype"):
        _histogram(edited, mech, by="t")


@pytest.mark.parametrize("edges", [[0.0, np.nan, 1.0], [np.nan, 0.5, 1.0], [0.0, 0.5, np.nan]])
def test_nan_bin_edges_are_refused(release, edges):
    released, mech = release
    with pytest.raises(DataMismatchError, match="NaN edge"):
        _histogram(released, mech, bins=edges)


def test_string_bin_edges_are_refused(release):
    released, mech = release
    with pytest.raises(DataMismatchError, match="numeric bin edges"):
        _histogram(released, mech, bins=["a", "b"])


def test_valid_by_keeps_every_row_and_open_edges_are_allowed(release):
    released, mech = release
    hist = _histogram(released, mech, by="t", bins=[-np.inf, 0.5, np.inf])
    assert sorted(hist["group"].unique()) == [0, 1]
    # each group's released shares sum to one: no row of a group fell outside the bins
    np.testing.assert_allclose(hist.groupby("group")["released"].sum(), 1.0)
