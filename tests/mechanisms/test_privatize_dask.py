"""AlphaIdentity.privatize on Dask DataFrames: partition-wise, lazy, declared columns only."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import (
    AlreadyReleasedError,
    OutOfSupportError,
    UndeclaredColumnWarning,
)

dd = pytest.importorskip("dask.dataframe")


def _raw(n: int = 8000) -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    rng = np.random.default_rng(0)
    raw = pd.DataFrame(
        {
            "x": np.sort(rng.uniform(-1, 1, n)),  # a file sorted by the private value
            "g": rng.choice(["a", "b", "c"], n),
            "d": rng.integers(0, 2, n),
            "y": rng.permutation(n).astype(float),  # identifies raw rows in the tests
            "note": "internal",
        }
    )
    mech = pi.AlphaIdentity(
        0.5, {"x": pi.reference.Uniform(-1, 1), "g": pi.reference.Categorical(["a", "b", "c"])}
    )
    return raw, mech


def _release(mech, ddf, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndeclaredColumnWarning)
        return mech.privatize(ddf, public=["d", "y"], **kw)


def test_lazy_declared_columns_and_description():
    raw, mech = _raw()
    ddf = dd.from_pandas(raw, npartitions=8)
    with pytest.warns(UndeclaredColumnWarning, match="note"):
        out = mech.privatize(ddf, public=["d", "y"], random_state=1)
    assert type(out).__module__.startswith("dask") and out.npartitions == 8
    assert list(out.columns) == ["x", "g", "d", "y"]
    assert pi.AlphaIdentity.from_released(out._meta) == mech
    rel = out.compute()
    assert len(rel) == len(raw) and sorted(rel["y"]) == sorted(raw["y"])
    assert list(rel["g"].cat.categories) == ["a", "b", "c"]


def test_release_carries_no_column_name_of_the_raw_frame():
    raw, mech = _raw(2000)
    raw.columns.name = "secret"
    out = _release(mech, dd.from_pandas(raw, npartitions=4), random_state=1)
    assert out._meta.columns.name is None
    assert out.compute().columns.name is None


@pytest.mark.parametrize("shuffle", [True, False, "global"])
def test_release_carries_no_flags_or_attrs_of_the_raw_frame(shuffle):
    raw, mech = _raw(600)
    raw = raw.set_flags(allows_duplicate_labels=False)
    raw.attrs = {"source": "internal file"}
    ddf = dd.from_pandas(raw, npartitions=3)
    assert ddf.partitions[0].compute().attrs == raw.attrs  # Dask keeps them on partitions
    out = _release(mech, ddf, shuffle=shuffle, random_state=1)
    assert out._meta.flags.allows_duplicate_labels is True
    assert "source" not in out._meta.attrs
    for part in out.to_delayed():
        part = part.compute()
        assert part.flags.allows_duplicate_labels is True and part.attrs == {}


def test_keep_rate_and_reproducibility():
    raw, mech = _raw()
    ddf = dd.from_pandas(raw, npartitions=8)
    a = _release(mech, ddf, random_state=7).compute()
    b = _release(mech, ddf, random_state=7).compute()
    c = _release(mech, ddf, random_state=8).compute()
    assert a.equals(b) and not a.equals(c)
    back = raw.set_index("y").loc[a["y"]]
    kept = np.mean(back["x"].to_numpy() == a["x"].to_numpy())
    # binomial(8000, 0.5): 5 standard deviations is 0.028
    assert abs(kept - 0.5) < 0.028


def test_partitions_get_independent_streams():
    """Two partitions with identical raw rows get different keep coins and draws."""
    raw, mech = _raw(2000)
    twice = pd.concat([raw, raw], ignore_index=True)
    ddf = dd.from_pandas(twice, npartitions=2, sort=False)
    out = _release(mech, ddf, random_state=0, shuffle=False).compute()
    first, second = out.iloc[:2000], out.iloc[2000:]
    assert np.array_equal(first["y"], second["y"])  # same raw rows, same order
    assert not np.array_equal(first["x"], second["x"])


def test_shuffle_within_partitions_and_partition_order():
    raw, mech = _raw()
    ddf = dd.from_pandas(raw, npartitions=8)
    raw_pos = pd.Series(np.arange(len(raw)), index=raw["y"])
    firsts = set()
    for seed in range(6):
        out = _release(mech, ddf, random_state=seed)
        part0 = out.partitions[0].compute()
        pos = raw_pos.loc[part0["y"]].to_numpy()
        assert not np.all(np.diff(pos) > 0)  # raw order gone within the partition
        firsts.add(int(pos.min()) // 1000)  # which raw partition came first
    assert len(firsts) > 1
    kept_order = _release(mech, ddf, random_state=0, shuffle=False).compute()
    assert np.array_equal(kept_order["y"], raw["y"])
    assert out._meta.attrs["privinfer_release"]["leak_check"] == "passed, per partition"


def test_global_shuffle_mixes_partitions():
    raw, mech = _raw()
    ddf = dd.from_pandas(raw, npartitions=8)
    out = _release(mech, ddf, random_state=0, shuffle="global")
    part0 = out.partitions[0].compute()
    raw_pos = pd.Series(np.arange(len(raw)), index=raw["y"])
    raw_partition = raw_pos.loc[part0["y"]].to_numpy() // 1000
    assert len(np.unique(raw_partition)) > 4  # rows of many raw partitions
    assert sorted(out.compute()["y"]) == sorted(raw["y"])


def test_secure_release_and_errors():
    raw, mech = _raw(1000)
    ddf = dd.from_pandas(raw, npartitions=3)
    out = _release(mech, ddf, secure=True).compute()
    assert len(out) == 1000
    with pytest.raises(ValueError, match="cannot be seeded"):
        _release(mech, ddf, secure=True, random_state=0)
    with pytest.raises(ValueError, match="shuffle"):
        _release(mech, ddf, shuffle="partition")
    released = _release(mech, ddf, random_state=0)
    with pytest.raises(AlreadyReleasedError):
        _release(mech, released, random_state=0)


def test_leak_in_a_partition_raises_before_release():
    raw, mech = _raw(1000)
    raw["x2"] = raw["x"] ** 2  # a published function of a private column
    raw = raw.drop(columns="note")
    ddf = dd.from_pandas(raw, npartitions=4)
    with pytest.raises(pi.exceptions.DerivedColumnError, match="x2"):
        mech.privatize(ddf, public=["d", "y", "x2"], random_state=0)
    out = mech.privatize(ddf, public=["d", "y", "x2"], allow_derived=["x2"], random_state=0)
    desc = out._meta.attrs["privinfer_release"]
    assert desc["overridden_leaks"] and desc["leak_check"].endswith("with overrides")


def test_invalid_value_in_a_late_partition_raises_before_release():
    raw, mech = _raw(1000)
    raw.loc[999, "x"] = 5.0  # outside the reference support, last partition
    ddf = dd.from_pandas(raw, npartitions=4)
    with pytest.raises(OutOfSupportError):
        _release(mech, ddf, random_state=0)


def test_fit_on_dask_release_equals_fit_on_its_pandas_copy():
    raw, mech = _raw(3000)
    rng = np.random.default_rng(1)
    raw["y"] = raw["x"] + raw["d"] + rng.normal(size=len(raw))
    out = _release(mech, dd.from_pandas(raw, npartitions=5), random_state=2)
    rel = out.compute()
    rel.attrs = dict(out._meta.attrs)
    # the same fold labels (Dask draws its own folds per partition without them)
    folds = np.arange(len(rel)) % 5
    a = pi.PrivateATE.from_formula("y ~ d | x + C(g)", rel, degree=2).fit(0, folds=folds)
    b = pi.PrivateATE.from_formula("y ~ d | x + C(g)", out, degree=2).fit(0, folds=folds)
    np.testing.assert_allclose(b.params, a.params, rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.bse, a.bse, rtol=0, atol=1e-10)


def test_release_directory_round_trip(tmp_path):
    raw, mech = _raw(3000)
    rng = np.random.default_rng(1)
    raw["y"] = raw["x"] + raw["d"] + rng.normal(size=len(raw))
    out = _release(mech, dd.from_pandas(raw, npartitions=4), random_state=2)
    fps = pi.write_release(out, tmp_path / "rel")
    assert len(fps) == 4 and len(set(fps)) == 4
    back = pi.read_release(tmp_path / "rel")
    assert type(back).__module__.startswith("dask") and back.npartitions == 4
    assert pi.AlphaIdentity.from_released(back._meta) == mech
    assert back._meta.attrs["privinfer_release"]["n_rows"] == 3000
    pd.testing.assert_frame_equal(
        back.compute().reset_index(drop=True), out.compute().reset_index(drop=True)
    )
    a = pi.PrivateATE.from_formula("y ~ d | x + C(g)", back, degree=2).fit(0)  # mechanism: _meta
    b = pi.PrivateATE.from_formula("y ~ d | x + C(g)", out, degree=2).fit(0)
    np.testing.assert_allclose(a.params, b.params, rtol=0, atol=1e-10)
    with pytest.raises(pi.exceptions.DataMismatchError, match="already holds"):
        pi.write_release(out, tmp_path / "rel")


def test_release_directory_detects_missing_and_modified_files(tmp_path):
    raw, mech = _raw(2000)
    out = _release(mech, dd.from_pandas(raw, npartitions=3), random_state=2)
    pi.write_release(out, tmp_path / "rel")
    files = sorted((tmp_path / "rel").glob("*.parquet"))
    import pyarrow.parquet as pq

    table = pq.read_table(files[0])
    y = table.column("y").to_numpy().copy()
    y[0] += 1.0  # modified after writing
    pq.write_table(table.set_column(table.schema.get_field_index("y"), "y", [y]), files[0])
    with pytest.raises(pi.exceptions.DataMismatchError, match="fingerprint"):
        pi.read_release(tmp_path / "rel").compute()
    files[1].unlink()
    with pytest.raises(pi.exceptions.DataMismatchError, match="missing"):
        pi.read_release(tmp_path / "rel")


def test_a_dask_release_leaves_the_warning_filters_as_they_were():
    # the partitions ran in worker threads inside warnings.catch_warnings, which is not
    # thread-safe: overlapping contexts restored each other's filters and left an
    # "ignore UndeclaredColumnWarning" filter behind, so a later release that dropped a
    # column said nothing
    raw, mech = _raw()
    before = list(warnings.filters)
    _release(mech, dd.from_pandas(raw, npartitions=16), random_state=None).compute()
    leaked = [f for f in warnings.filters if f not in before]
    # (no simplefilter here: a filter of ours in front would hide a leaked one)
    with warnings.catch_warnings(record=True) as caught:
        mech.privatize(raw, public=["d", "y"], random_state=None)
    assert leaked == []
    assert UndeclaredColumnWarning in [w.category for w in caught]
