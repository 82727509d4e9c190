"""Input frames: pandas pass through, other libraries convert once, arrays build frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from privinfer._frames import as_pandas, frame_from_arrays
from privinfer.exceptions import DataMismatchError, UnsupportedInputError


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"y": rng.normal(size=50), "d": rng.integers(0, 2, 50),
                         "g": rng.choice(["a", "b"], 50)})


def test_pandas_passes_through_without_copy():
    df = _frame()
    assert as_pandas(df, "demo") is df


def test_polars_eager_and_lazy_convert_to_equal_frames():
    pl = pytest.importorskip("polars")
    df = _frame()
    for native in (pl.from_pandas(df), pl.from_pandas(df).lazy()):
        out = as_pandas(native, "demo")
        assert isinstance(out, pd.DataFrame)
        pd.testing.assert_frame_equal(out, df, check_dtype=False)
        assert out["d"].dtype.kind == "i" and out["y"].dtype.kind == "f"


def test_polars_categorical_keeps_categories():
    pl = pytest.importorskip("polars")
    native = pl.DataFrame({"g": pl.Series(["u", "v", "u"], dtype=pl.Categorical)})
    out = as_pandas(native, "demo")
    assert isinstance(out["g"].dtype, pd.CategoricalDtype)
    assert out["g"].tolist() == ["u", "v", "u"]


def test_pyarrow_table_and_interchange_protocol():
    pa = pytest.importorskip("pyarrow")
    df = _frame()
    pd.testing.assert_frame_equal(as_pandas(pa.Table.from_pandas(df), "demo"), df,
                                  check_dtype=False)

    table = pa.Table.from_pandas(df[["y", "d"]], preserve_index=False)

    class OnlyInterchange:
        """An object known to nobody but the interchange protocol."""

        def __dataframe__(self, *args, **kwargs):
            return table.__dataframe__(*args, **kwargs)

    class OnlyArrowStream:
        """An object known to nobody but the Arrow PyCapsule stream interface."""

        def __arrow_c_stream__(self, requested_schema=None):
            return table.__arrow_c_stream__(requested_schema)

    for obj in (OnlyInterchange(), OnlyArrowStream()):
        pd.testing.assert_frame_equal(as_pandas(obj, "demo"), df[["y", "d"]], check_dtype=False)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (np.zeros((3, 2)), "pandas.DataFrame\\(array, columns"),  # models: from_arrays
        (pd.Series([1.0, 2.0]), "to_frame"),
        ({"y": [1.0]}, "pandas.DataFrame\\(data\\)"),
        ([1, 2, 3], "got builtins.list"),
    ],
)
def test_anything_else_gets_a_clear_message(data, match):
    with pytest.raises(UnsupportedInputError, match=match) as info:
        as_pandas(data, "PrivateATE.from_formula")
    assert "PrivateATE.from_formula expects a DataFrame" in str(info.value)
    assert isinstance(info.value, TypeError)


def test_frame_from_arrays_names_and_roles():
    X = np.arange(6.0).reshape(3, 2)
    frame, roles = frame_from_arrays({"y": np.ones(3), "d": np.array([0, 1, 0]), "x": X,
                                      "w": None}, "demo")
    assert frame.columns.tolist() == ["y", "d", "x1", "x2"]
    assert roles == {"y": ["y"], "d": ["d"], "x": ["x1", "x2"]}
    np.testing.assert_array_equal(frame[["x1", "x2"]].to_numpy(), X)
    frame, roles = frame_from_arrays({"y": np.ones(3), "x": X}, "demo",
                                     names={"x": ["age", "income"]})
    assert roles["x"] == ["age", "income"]
    frame, roles = frame_from_arrays({"x": pd.DataFrame(X, columns=["a", "b"])}, "demo")
    assert roles["x"] == ["a", "b"]
    frame, roles = frame_from_arrays({"y": np.ones(3), "g": np.array(["u", "v", "u"])},
                                     "demo", labels=("g",))
    assert frame["g"].tolist() == ["u", "v", "u"]


@pytest.mark.parametrize(
    ("arrays", "names", "match"),
    [
        ({"y": np.ones(3), "x": np.ones((4, 2))}, None, "same number of rows"),
        ({"y": np.ones((2, 2, 2))}, None, "1-D or 2-D"),
        ({"y": np.array(["a", "b"])}, None, "must be numeric"),
        ({"x": np.ones((3, 2))}, {"x": ["a"]}, "1 names for the 2 columns"),
        ({"y": np.ones(3), "x": np.ones(3)}, {"x": "y"}, "duplicate column names"),
        ({"y": None}, None, "no arrays"),
        ({"y": np.ones(3)}, {"z": "a"}, "unknown roles"),
    ],
)
def test_frame_from_arrays_errors(arrays, names, match):
    with pytest.raises(DataMismatchError, match=match):
        frame_from_arrays(arrays, "demo", names)
