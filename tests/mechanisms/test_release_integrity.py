"""Release integrity: declared columns only, fresh row order, no copied attrs (issue 15)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privinfer as pi
from privinfer import exceptions as ex
from privinfer.mechanisms import ATTRS_KEY, RELEASE_KEY


def _mech(alpha=0.3):
    return pi.AlphaIdentity(alpha, {"income": pi.reference.Uniform(0, 100)})


def _raw(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    income = rng.uniform(0, 100, n)
    return pd.DataFrame(
        {"income": income, "y": rng.normal(size=n), "d": rng.integers(0, 2, n),
         "id": np.arange(n)}
    )


def test_only_declared_columns_are_published_and_others_dropped_with_a_warning():
    raw = _raw()
    with pytest.warns(ex.UndeclaredColumnWarning, match=r"\['d', 'id'\]"):
        released = _mech().privatize(raw, public=["y"], random_state=0)
    assert list(released.columns) == ["income", "y"]
    desc = released.attrs[RELEASE_KEY]
    assert desc["public"] == ["y"] and desc["dropped"] == ["d", "id"]
    assert desc["private"] == ["income"]


def test_no_public_declaration_releases_private_columns_only():
    with pytest.warns(ex.UndeclaredColumnWarning):
        released = _mech().privatize(_raw(), random_state=0)
    assert list(released.columns) == ["income"]


def test_publish_undeclared_is_an_explicit_opt_in():
    raw = _raw()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ex.SeedReleaseWarning)  # a seeded test release
        released = _mech().privatize(raw, publish_undeclared=True, random_state=0)
    assert list(released.columns) == list(raw.columns)
    desc = released.attrs[RELEASE_KEY]
    assert desc["publish_undeclared"] is True and desc["public"] == ["y", "d", "id"]


def test_declared_public_columns_must_exist_and_not_be_private():
    raw = _raw(50)
    with pytest.raises(ex.DataMismatchError, match=r"\['nope'\] are not in the data"):
        _mech().privatize(raw, public=["nope"])
    with pytest.raises(ex.MechanismMismatchError, match=r"\['income'\] are private"):
        _mech().privatize(raw, public=["income", "y"])
    with pytest.raises(TypeError, match="list of column names"):
        _mech().privatize(raw, public="y")
    with pytest.raises(TypeError, match="shuffle must be a bool"):
        _mech().privatize(raw, public=["y", "d", "id"], shuffle=1)


def _position_correlation(released, raw_sorted, alpha):
    """Spearman correlation of row position and true income over the replaced rows."""
    # row identity travels in the public 'id' column (published for the test only)
    true_income = raw_sorted.set_index("id").loc[released["id"], "income"].to_numpy()
    replaced = released["income"].to_numpy() != true_income
    pos = np.flatnonzero(replaced)
    return stats.spearmanr(pos, true_income[replaced]).statistic


@pytest.mark.parametrize("secure", [False, True])
def test_rows_of_a_sorted_file_go_out_in_a_fresh_order(secure):
    raw = _raw(4000).sort_values("income", ignore_index=True)
    raw["id"] = np.arange(len(raw))
    seed = None if secure else 1
    # the row id follows the sort order, so it is monotone in income: the leak check would
    # refuse it; it is published here only to audit the row order
    released = _mech().privatize(raw, public=["y", "d", "id"], allow_derived=["id"],
                                 random_state=seed, secure=secure)
    rho = _position_correlation(released, raw, 0.3)
    # under a fresh order, rho over ~2800 replaced rows is ~N(0, 1/2800): |rho| < 0.1 is
    # a > 5 sigma bound; the raw order gives rho = 1
    assert abs(rho) < 0.1
    assert released.attrs[RELEASE_KEY]["shuffled"] is True
    kept = _mech().privatize(raw, public=["y", "d", "id"], allow_derived=["id"], shuffle=False,
                             random_state=1)
    assert _position_correlation(kept, raw, 0.3) > 0.99
    assert kept.attrs[RELEASE_KEY]["shuffled"] is False


def test_fresh_range_index_and_attrs_never_copied():
    raw = _raw(300)
    raw.index = pd.Index(np.arange(300) * 7 + 1000, name="person")
    raw.attrs["source"] = "confidential file, sorted by income"
    for shuffle in (True, False):
        released = _mech().privatize(raw, public=["y", "d", "id"], shuffle=shuffle,
                                     random_state=2)
        assert isinstance(released.index, pd.RangeIndex)
        assert released.index.equals(pd.RangeIndex(300)) and released.index.name is None
        assert set(released.attrs) == {ATTRS_KEY, RELEASE_KEY}


def test_shuffle_keeps_rows_together():
    raw = _raw(500)
    released = pi.AlphaIdentity(1.0, {"income": pi.reference.Uniform(0, 100)}).privatize(
        raw, public=["y", "d", "id"], random_state=3
    )
    assert not released["id"].equals(raw["id"])
    back = released.sort_values("id", ignore_index=True)
    pd.testing.assert_frame_equal(back, raw, check_like=False)


def test_privatising_a_release_again_raises():
    mech = _mech()
    released = mech.privatize(_raw(100), public=["y", "d", "id"], random_state=0)
    with pytest.raises(ex.AlreadyReleasedError, match="already are a privinfer release"):
        mech.privatize(released, public=["y", "d", "id"])


def test_allow_derived_is_validated_and_recorded():
    raw = _raw(100)
    released = _mech().privatize(raw, public=["y", "d", "id"], allow_derived=["id"],
                                 random_state=0)
    assert released.attrs[RELEASE_KEY]["allow_derived"] == ["id"]
    with pytest.raises(ex.DataMismatchError, match="not published public columns"):
        _mech().privatize(raw, public=["y", "d", "id"], allow_derived=["income"])


def test_integer_seed_on_privatize_warns_that_the_release_can_be_replayed():
    """A guessed seed regenerates the coins, i.e. which rows went out verbatim."""
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    raw = pd.DataFrame({"x": np.linspace(0.1, 0.9, 50)})
    with pytest.warns(pi.exceptions.SeedReleaseWarning, match="guesses the seed"):
        mech.privatize(raw, random_state=7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pi.exceptions.SeedReleaseWarning)
        mech.privatize(raw, random_state=None)
        mech.privatize(raw, random_state=np.random.default_rng(1))


def test_unverified_release_warning_points_at_the_users_call():
    rng = np.random.default_rng(0)
    raw = pd.DataFrame({"x": rng.uniform(0, 1, 300), "d": rng.integers(0, 2, 300)})
    raw["y"] = raw["x"] + raw["d"] + rng.normal(size=300)
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(0, 1)})
    for build in (
        lambda: pi.PrivateATE.from_formula("y ~ d | x", raw, mechanism=mech),
        lambda: pi.PrivateGMM.ols("y ~ x", raw, mechanism=mech),
    ):
        with pytest.warns(ex.UnverifiedReleaseWarning) as caught:
            build()
        files = {w.filename for w in caught if w.category is ex.UnverifiedReleaseWarning}
        assert files == {__file__}
