import json

import numpy as np
import pandas as pd
from scipy import stats

import privinfer as pi
from privinfer.mechanisms import ATTRS_KEY


def _mech(alpha=0.4):
    return pi.AlphaIdentity(
        alpha,
        {
            "x": pi.reference.Uniform(0, 10),
            "g": pi.reference.Categorical(["a", "b", "c"], probs=[0.2, 0.3, 0.5]),
            "z": pi.reference.Frozen(stats.norm(0, 1)),
        },
    )


def _raw(n=20_000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.uniform(0, 10, n),
            "g": rng.choice(["a", "b", "c"], n),
            "z": rng.normal(size=n),
            "y": rng.normal(size=n),
            "d": rng.integers(0, 2, n),
        }
    )


def test_privatize_keeps_expected_fraction_binomial():
    raw = _raw()
    released = _mech(0.4).privatize(raw, public=["y", "d"], shuffle=False, random_state=3)
    # continuous x: a kept row equals the raw value, a replaced one (a.s.) does not
    kept = int((released["x"] == raw["x"]).sum())
    p = stats.binomtest(kept, len(raw), 0.4).pvalue
    assert p > 1e-3


def test_privatize_replaces_private_columns_jointly_and_leaves_public_ones():
    raw = _raw()
    released = _mech(0.5).privatize(raw, public=["y", "d"], shuffle=False, random_state=4)
    same_x = released["x"].to_numpy() == raw["x"].to_numpy()
    same_z = released["z"].to_numpy() == raw["z"].to_numpy()
    np.testing.assert_array_equal(same_x, same_z)
    pd.testing.assert_series_equal(released["y"], raw["y"])
    pd.testing.assert_series_equal(released["d"], raw["d"])
    # replaced categorical values follow the reference pmf
    g_new = released.loc[~same_x, "g"].astype(str).value_counts(normalize=True)
    chi = stats.chisquare(
        g_new.reindex(["a", "b", "c"]).to_numpy() * (~same_x).sum(),
        np.array([0.2, 0.3, 0.5]) * (~same_x).sum(),
    )
    assert chi.pvalue > 1e-3


def test_privatize_never_emits_values_outside_support():
    raw = _raw(5000)
    released = _mech(0.1).privatize(raw, public=["y", "d"], random_state=5)
    assert released["x"].between(0, 10).all()
    assert set(released["g"].astype(str)) <= {"a", "b", "c"}
    assert isinstance(released["g"].dtype, pd.CategoricalDtype)
    assert list(released["g"].cat.categories) == ["a", "b", "c"]


def test_privatize_does_not_modify_input_and_carries_mechanism():
    raw = _raw(100)
    before = raw.copy()
    mech = _mech()
    released = mech.privatize(raw, public=["y", "d"], random_state=1)
    pd.testing.assert_frame_equal(raw, before)
    assert pi.AlphaIdentity.from_dict(released.attrs[ATTRS_KEY]) == mech
    assert pi.AlphaIdentity.from_released(released) == mech


def test_release_carries_no_column_or_index_name_of_the_raw_frame():
    """The raw frame's ``columns.name`` (and index name) are metadata of the raw file, not
    of the release: the release has neither, and the raw frame keeps its own."""
    raw = _raw(100)
    raw.columns.name = "secret"
    raw.index.name = "patient_id"
    for shuffle in (True, False):
        released = _mech().privatize(raw, public=["y", "d"], shuffle=shuffle, random_state=1)
        assert released.columns.name is None
        assert released.index.name is None
    assert raw.columns.name == "secret" and raw.index.name == "patient_id"


def test_release_starts_from_default_flags_not_the_raw_frames():
    """``DataFrame.flags`` are properties of the raw frame; the release must not carry them
    (``allows_duplicate_labels=False`` used to travel through ``.loc``/``.copy``)."""
    raw = _raw(100)
    raw.flags.allows_duplicate_labels = False
    for shuffle in (True, False):
        released = _mech().privatize(raw, public=["y", "d"], shuffle=shuffle, random_state=1)
        assert released.flags.allows_duplicate_labels is True
    assert raw.flags.allows_duplicate_labels is False


def test_random_state_int_is_reproducible_and_none_is_fresh():
    raw = _raw(200)
    mech = _mech()
    a = mech.privatize(raw, public=["y", "d"], random_state=7)
    b = mech.privatize(raw, public=["y", "d"], random_state=7)
    pd.testing.assert_frame_equal(a, b)
    c = mech.privatize(raw, public=["y", "d"], shuffle=False)
    d = mech.privatize(raw, public=["y", "d"], shuffle=False)
    assert not c["x"].equals(d["x"])


def test_none_random_state_does_not_use_numpy_global_state():
    raw = _raw(200)
    mech = _mech()
    np.random.seed(0)
    a = mech.privatize(raw, public=["y", "d"], shuffle=False)
    np.random.seed(0)
    b = mech.privatize(raw, public=["y", "d"], shuffle=False)
    assert not a["x"].equals(b["x"])


def test_to_dict_round_trips_through_json():
    mech = pi.AlphaIdentity(
        0.3,
        {
            "x": pi.reference.Uniform(-1, 2),
            "g": pi.reference.Categorical([1, 2, 3]),
            "t": stats.gamma(2.0, scale=3.0),
            ("u", "v"): pi.reference.Empirical(pd.DataFrame({"u": [1.0, 2.0], "v": ["p", "q"]})),
        },
    )
    back = pi.AlphaIdentity.from_dict(json.loads(json.dumps(mech.to_dict())))
    assert back == mech
    assert back.private_columns == ("x", "g", "t", "u", "v")


def test_alpha_one_releases_data_unchanged():
    raw = _raw(300)
    released = _mech(1.0).privatize(raw, public=["y", "d"], shuffle=False, random_state=2)
    np.testing.assert_array_equal(released["x"], raw["x"])


def test_privatizing_a_release_again_is_a_release_at_the_product_of_the_alphas():
    """The alpha-identity composes: a release at ``alpha`` released once more at ``a`` with
    the same reference keeps a true row with probability ``alpha * a`` and otherwise holds
    a reference draw (the re-privatised releases of ``benchmarks/noise_sensitivity.py``)."""
    raw = _raw(n=40_000, seed=5)
    first = _mech(0.7).privatize(raw, public=["y", "d"], shuffle=False, random_state=6)
    plain = pd.DataFrame({c: first[c].to_numpy() for c in first.columns})
    plain.attrs = {}
    again = _mech(0.6).privatize(plain, public=["y", "d"], shuffle=False, random_state=7)
    x_raw, x_again = raw["x"].to_numpy(), again["x"].to_numpy()
    kept = x_again == x_raw
    assert stats.binomtest(int(kept.sum()), kept.size, 0.7 * 0.6).pvalue > 1e-3
    # the rows not kept hold reference draws, unrelated to the true values
    assert stats.kstest(x_again[~kept], stats.uniform(0, 10).cdf).pvalue > 1e-3
    assert abs(stats.spearmanr(x_again[~kept], x_raw[~kept])[0]) < 0.03
