"""Release files and verified releases: write_release / read_release (issue 15)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer import exceptions as ex
from privinfer.mechanisms import ATTRS_KEY, RELEASE_KEY

pytest.importorskip("pyarrow")


def _holder(n=1500, alpha=0.6, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    raw = pd.DataFrame({
        "x": x,
        "g": rng.choice(["hs", "college"], n),
        "k": rng.integers(0, 3, n),
        "y": 1 + 2 * x + rng.normal(size=n),
        "region": rng.choice(["north", "south"], n),
        "flag": rng.random(n) < 0.5,
    })
    mech = pi.AlphaIdentity(alpha, {
        "x": pi.reference.Uniform(0, 1),
        "g": pi.reference.Categorical(["hs", "college"]),
        "k": pi.reference.Empirical(pd.Series([0, 1, 2], name="k")),
    })
    return raw, mech, mech.privatize(raw, public=["y", "region", "flag"], random_state=seed)


def test_a_release_file_carries_no_column_name_of_the_raw_frame(tmp_path):
    raw, mech, _ = _holder(300)
    raw.columns.name = "secret"
    released = mech.privatize(raw, public=["y", "region", "flag"], random_state=1)
    assert released.columns.name is None
    pi.write_release(released, tmp_path / "release.parquet")
    assert pi.read_release(tmp_path / "release.parquet").columns.name is None
    assert b"secret" not in (tmp_path / "release.parquet").read_bytes()


def test_release_round_trips_through_a_file(tmp_path):
    _raw, mech, released = _holder()
    path = tmp_path / "release.parquet"
    fingerprint = pi.write_release(released, path)
    back = pi.read_release(path)
    pd.testing.assert_frame_equal(back, released)
    assert pi.AlphaIdentity.from_released(back) == mech
    assert back.attrs[RELEASE_KEY]["fingerprint"] == fingerprint
    assert back.attrs[RELEASE_KEY]["public"] == ["y", "region", "flag"]
    assert back.attrs[RELEASE_KEY]["private"] == ["x", "g", "k"]


def test_models_take_the_mechanism_from_the_release_file(tmp_path):
    _raw, mech, released = _holder(n=3000)
    path = tmp_path / "release.parquet"
    pi.write_release(released, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ex.UnverifiedReleaseWarning)
        from_file = pi.PrivateGMM.ols("y ~ x", pi.read_release(path)).fit(random_state=0)
    in_memory = pi.PrivateGMM.ols("y ~ x", released, mechanism=mech).fit(random_state=0)
    np.testing.assert_allclose(from_file.params, in_memory.params)


def test_a_modified_file_fails_its_fingerprint(tmp_path):
    import pyarrow.parquet as pq

    _, _, released = _holder()
    path = tmp_path / "release.parquet"
    pi.write_release(released, path)
    table = pq.read_table(path)
    y = table.column("y").to_numpy().copy()
    y[0] += 1.0
    tampered = table.set_column(table.schema.get_field_index("y"), "y", [y])
    pq.write_table(tampered.replace_schema_metadata(table.schema.metadata), path)
    with pytest.raises(ex.DataMismatchError, match="does not match its release fingerprint"):
        pi.read_release(path)


def test_files_without_release_metadata_and_frames_that_are_not_releases(tmp_path):
    raw, _, released = _holder(200)
    path = tmp_path / "plain.parquet"
    raw.to_parquet(path)
    with pytest.raises(ex.DataMismatchError, match="no privinfer release metadata"):
        pi.read_release(path)
    with pytest.raises(ex.DataMismatchError, match="not a privinfer release"):
        pi.write_release(raw, tmp_path / "raw.parquet")
    extra = released.assign(x_squared=released["x"] ** 2)
    with pytest.raises(ex.DataMismatchError, match="differ from the release's columns"):
        pi.write_release(extra, tmp_path / "extra.parquet")
    with pytest.raises(ex.DataMismatchError, match="rows"):
        pi.write_release(released.iloc[:10], tmp_path / "head.parquet")


# ------------------------------------------------------------- raw or twice-privatised
def test_raw_data_with_an_explicit_mechanism_get_a_warning():
    raw, mech, _ = _holder(2000)
    with pytest.warns(ex.UnverifiedReleaseWarning, match="no privinfer release metadata"):
        pi.PrivateGMM.ols("y ~ x", raw[["x", "g", "k", "y"]], mechanism=mech)


def test_csv_round_trip_loses_the_metadata_and_warns(tmp_path):
    _, mech, released = _holder(2000)
    path = tmp_path / "release.csv"
    released.to_csv(path, index=False)
    from_csv = pd.read_csv(path)
    with pytest.raises(ex.MechanismMismatchError, match="no mechanism description"):
        pi.PrivateGMM.ols("y ~ x", from_csv)
    with pytest.warns(ex.UnverifiedReleaseWarning):
        pi.PrivateGMM.ols("y ~ x", from_csv, mechanism=mech)


def test_a_release_refuses_another_mechanism_and_a_second_privatisation():
    _raw, mech, released = _holder(500)
    other = pi.AlphaIdentity(0.9, mech.reference)
    with pytest.raises(ex.MechanismMismatchError, match="were released by"):
        pi.PrivateGMM.ols("y ~ x", released, mechanism=other)
    with pytest.raises(ex.AlreadyReleasedError):
        mech.privatize(released, public=["y", "region", "flag"])
    assert ATTRS_KEY in released.attrs


def test_alpha_one_needs_no_verification():
    raw, mech, _ = _holder(500)
    exact = pi.AlphaIdentity(1.0, mech.reference)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ex.UnverifiedReleaseWarning)
        pi.PrivateGMM.ols("y ~ x", raw[["x", "g", "k", "y"]], mechanism=exact)


@pytest.mark.parametrize("content", [b"y,x\n1,2\n", b"PAR1", b""])
def test_a_file_that_is_not_parquet_raises_a_data_mismatch_error(tmp_path, content):
    path = tmp_path / "release.parquet"
    path.write_bytes(content)
    with pytest.raises(ex.DataMismatchError, match="not a readable Parquet file"):
        pi.read_release(path)


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        (b"privinfer.mechanism", b"{not json", ex.MechanismMismatchError),
        (b"privinfer.mechanism", b"[1, 2]", ex.MechanismMismatchError),
        (b"privinfer.mechanism", b"null", ex.MechanismMismatchError),
        (b"privinfer.mechanism", b"\xff\xfe", ex.MechanismMismatchError),
        (b"privinfer.release", b"{not json", ex.DataMismatchError),
        (b"privinfer.release", b"[1, 2]", ex.DataMismatchError),
    ],
)
def test_edited_metadata_that_is_not_a_json_object_raises_clearly(tmp_path, key, value, error):
    import pyarrow.parquet as pq

    _, _, released = _holder(200)
    path = tmp_path / "release.parquet"
    pi.write_release(released, path)
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, key: value}), path)
    with pytest.raises(error, match="unreadable"):
        pi.read_release(path)


@pytest.mark.parametrize("key", [b"privinfer.format", b"privinfer.fingerprint"])
def test_edited_format_or_fingerprint_that_is_not_text_raises_clearly(tmp_path, key):
    import pyarrow.parquet as pq

    _, _, released = _holder(200)
    path = tmp_path / "release.parquet"
    pi.write_release(released, path)
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, key: b"\xff"}), path)
    with pytest.raises(ex.DataMismatchError, match=r"format|fingerprint"):
        pi.read_release(path)


def test_a_release_file_stores_no_attrs_beyond_the_two_descriptions(tmp_path):
    import pyarrow.parquet as pq

    _, _, released = _holder(200)
    released.attrs["source"] = "patients_sorted_by_income.csv"
    path = tmp_path / "release.parquet"
    pi.write_release(released, path)
    assert b"patients_sorted_by_income" not in path.read_bytes()
    assert "attributes" not in pq.read_metadata(path).metadata[b"pandas"].decode()
    back = pi.read_release(path)
    assert set(back.attrs) == {ATTRS_KEY, RELEASE_KEY}
    pd.testing.assert_frame_equal(back, released)


@pytest.mark.parametrize(
    ("key", "edit"),
    [
        (ATTRS_KEY, "junk"),
        (ATTRS_KEY, {"mechanism": "alpha-identity"}),
        (RELEASE_KEY, "junk"),
        (RELEASE_KEY, {"private": None}),
        (RELEASE_KEY, {"n_rows": "many"}),
    ],
)
def test_write_release_refuses_edited_attrs_clearly(tmp_path, key, edit):
    _, _, released = _holder(200)
    released = released.copy()
    if isinstance(edit, dict) and key == RELEASE_KEY:
        edit = {**released.attrs[key], **edit}
    released.attrs[key] = edit
    with pytest.raises(ex.DataMismatchError, match="attrs were edited"):
        pi.write_release(released, tmp_path / "release.parquet")
    assert not (tmp_path / "release.parquet").exists()


@pytest.mark.parametrize("path", [None, 3, b"release.parquet"])
def test_a_path_that_is_not_a_str_or_path_like_is_a_clear_type_error(tmp_path, path):
    _raw, _mech, released = _holder(100)
    with pytest.raises(TypeError, match=r"read_release: 'path' must be a str or os\.PathLike"):
        pi.read_release(path)
    with pytest.raises(TypeError, match=r"write_release: 'path' must be a str or os\.PathLike"):
        pi.write_release(released, path)
