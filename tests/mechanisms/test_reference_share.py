"""The reference-share floor test: released rows must keep the mechanism's mixture."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import privinfer as pi
from privinfer.exceptions import MechanismMismatchError, UnverifiedReleaseWarning
from privinfer.mechanisms._consistency import LEVEL, N_CELLS, check_reference_share

U = pi.reference.Uniform


def _raw(n, rng):
    """Covariates far from their references: skewed x, a rare level of g, public w."""
    return pd.DataFrame(
        {
            "x": np.minimum(np.exp(rng.normal(0.0, 1.0, n)), 10.0),
            "g": rng.choice(["a", "b", "c"], n, p=[0.8, 0.15, 0.05]),
            "z": rng.beta(2, 5, n),
            "w": rng.normal(size=n),
            "y": rng.normal(size=n),
        }
    )


def _mech(alpha):
    return pi.AlphaIdentity(
        alpha,
        {
            "x": U(0, 10),
            "g": pi.reference.Categorical(["a", "b", "c"]),
            "z": pi.reference.Frozen(stats.beta(2, 2)),
        },
    )


@pytest.mark.parametrize("alpha", [0.3, 0.6, 0.9])
def test_genuine_releases_pass_even_far_from_the_reference(alpha):
    """60 releases per alpha of data concentrated where the reference is thin: none is
    refused (the bound is 1e-6 per release), at sizes from 50 to 20,000 rows."""
    rng = np.random.default_rng(int(alpha * 10))
    mech = _mech(alpha)
    for k in range(60):
        n = [50, 400, 3000, 20_000][k % 4]
        rel = mech.privatize(_raw(n, rng), public=["w", "y"], random_state=rng)
        check_reference_share(mech, rel, "test")


def test_the_floor_p_value_is_calibrated_where_the_floor_binds():
    """Calibration in the hardest case: the data sit in one cell, so every other cell's
    count is exactly Bin(n, (1 - alpha) / N_CELLS). The smallest p-value over the cells
    falls below 1% / N_CELLS in at most 1% of releases (Bonferroni)."""
    rng = np.random.default_rng(3)
    mech = pi.AlphaIdentity(0.5, {"x": U(0, 1)})
    small = 0
    for _ in range(400):
        rel = mech.privatize(pd.DataFrame({"x": np.full(2000, 0.01)}), random_state=rng)
        cell = np.minimum((rel.x.to_numpy() * N_CELLS).astype(int), N_CELLS - 1)
        counts = np.bincount(cell, minlength=N_CELLS)[1:]
        small += stats.binom.cdf(counts, len(rel), 0.5 / N_CELLS).min() < 0.01 / N_CELLS
        check_reference_share(mech, rel, "test")
    assert small <= 4 + 3 * 2  # at most 4 expected (1% of 400); 3 binomial sds above


def test_selection_on_a_private_column_is_refused_and_on_public_ones_is_not():
    rng = np.random.default_rng(11)
    mech = _mech(0.6)
    rel = mech.privatize(_raw(4000, rng), public=["w", "y"], random_state=rng)
    check_reference_share(mech, rel[rel.w < 1.0], "test")  # public: fine
    check_reference_share(mech, rel.sample(frac=0.5, random_state=1), "test")  # random
    with pytest.raises(MechanismMismatchError, match=r"private column 'x'.*select on public"):
        check_reference_share(mech, rel[rel.x < 5.0], "test")
    with pytest.raises(MechanismMismatchError, match="private column 'g'"):
        check_reference_share(mech, rel[rel.g != "c"], "test")
    with pytest.raises(MechanismMismatchError, match="private column 'z'"):
        check_reference_share(mech, rel[rel.z > 0.2], "test")


def test_models_refuse_rows_selected_on_a_private_column():
    """The selection is caught where the analysis starts; the attrs survive the subset,
    so nothing else would notice, and the fit would be biased with a confident interval."""
    rng = np.random.default_rng(5)
    n = 4000
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < 0.5).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + x + rng.normal(size=n)})
    mech = pi.AlphaIdentity(0.6, {"x": U(-1, 1)})
    rel = mech.privatize(raw, public=["y", "d"], random_state=rng)
    subset = rel[rel.x < 0.5]
    assert subset.attrs == rel.attrs
    with pytest.raises(MechanismMismatchError, match="do not fit"):
        pi.PrivateATE.from_formula("y ~ d | x", subset, mechanism=mech)
    with pytest.raises(MechanismMismatchError, match="do not fit"):
        pi.PrivateATT.from_formula("y ~ d | x", subset, mechanism=mech)


def test_raw_data_and_a_wrong_alpha_are_refused():
    rng = np.random.default_rng(2)
    raw = _raw(3000, rng)
    mech = _mech(0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnverifiedReleaseWarning)
        with pytest.raises(MechanismMismatchError, match="raw or were released with another"):
            mech.check_data(raw, "test")
        rel = _mech(0.9).privatize(raw, public=["w", "y"], random_state=rng)
        rel.attrs = {}
        with pytest.raises(MechanismMismatchError, match="do not fit"):
            mech.check_data(rel, "test")


def test_nothing_is_tested_at_alpha_one_or_on_empty_frames():
    mech = pi.AlphaIdentity(1.0, {"x": U(0, 1)})
    check_reference_share(mech, pd.DataFrame({"x": np.full(100, 0.5)}), "test")
    mech = pi.AlphaIdentity(0.5, {"x": U(0, 1)})
    check_reference_share(mech, pd.DataFrame({"x": np.empty(0)}), "test")
    assert LEVEL <= 1e-6


def test_dask_frames_are_tested_on_their_summed_cell_counts():
    """A Dask release selected on a private column is refused like a pandas one: the
    per-partition counts add up to the whole frame's."""
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(8)
    n = 4000
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < 0.5).astype(int)
    w = rng.normal(size=n)
    raw = pd.DataFrame({"x": x, "d": d, "w": w, "y": d + x + rng.normal(size=n)})
    mech = pi.AlphaIdentity(0.6, {"x": U(-1, 1)})
    rel = mech.privatize(raw, public=["y", "d", "w"], random_state=rng)
    ddf = dd.from_pandas(rel, npartitions=4)
    ddf.attrs = rel.attrs
    pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech)  # the release passes
    pi.PrivateATE.from_formula("y ~ d | x", ddf[ddf.w < 1], mechanism=mech)  # public
    with pytest.raises(MechanismMismatchError, match="private column 'x'"):
        pi.PrivateATE.from_formula("y ~ d | x", ddf[ddf.x < 0.5], mechanism=mech)


def test_an_empirical_reference_with_repeated_values_counts_each_value_once():
    """A public sample with repeated values (here 5 values, 40 copies each): released
    rows land on the first copy, which carries the mass of all copies, so a genuine
    release of many rows is not refused; a private selection still is."""
    rng = np.random.default_rng(9)
    sample = pd.Series(np.repeat([1.0, 2.0, 3.0, 4.0, 5.0], 40), name="x")
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Empirical(sample)})
    raw = pd.DataFrame({"x": rng.choice([1.0, 2.0], 50_000), "y": rng.normal(size=50_000)})
    rel = mech.privatize(raw, public=["y"], random_state=rng)
    check_reference_share(mech, rel, "test")
    with pytest.raises(MechanismMismatchError, match="private column 'x'"):
        check_reference_share(mech, rel[rel.x < 4.5], "test")


def test_private_gmm_refuses_a_private_selection_on_pandas_and_dask():
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(12)
    n = 4000
    x, w = rng.uniform(-1, 1, n), rng.normal(size=n)
    raw = pd.DataFrame({"x": x, "w": w, "y": 1 + 2 * x + w + rng.normal(size=n)})
    mech = pi.AlphaIdentity(0.6, {"x": U(-1, 1)})
    rel = mech.privatize(raw, public=["y", "w"], random_state=rng)
    ddf = dd.from_pandas(rel, npartitions=4)
    ddf.attrs = rel.attrs
    pi.PrivateGMM.ols("y ~ x + w", ddf[ddf.w < 1], mechanism=mech).fit()  # public: fine
    for frame in (rel[rel.x < 0.5], ddf[ddf.x < 0.5]):
        with pytest.raises(MechanismMismatchError, match="private column 'x'"):
            pi.PrivateGMM.ols("y ~ x + w", frame, mechanism=mech).fit()
