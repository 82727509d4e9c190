r"""Input frames: pandas, anything narwhals or the interchange protocol converts, and arrays.

The models work on pandas internally. :func:`as_pandas` converts a polars, PyArrow,
modin, cuDF (anything narwhals supports) or interchange-protocol frame once, at the model
entry point; lazy frames (polars ``LazyFrame``, dask) are collected first. pandas frames
pass through untouched, without a copy. :func:`frame_from_arrays` builds the frame behind
the models' ``from_arrays`` constructors from named numpy arrays.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer.exceptions import DataMismatchError, UnsupportedInputError

__all__ = ["MODEL_ARRAY_HINT", "as_pandas", "frame_from_arrays"]

#: What :func:`as_pandas` tells a caller who passed a numpy array, by default.
ARRAY_HINT = " Wrap a numpy array as pandas.DataFrame(array, columns=[...]), naming its columns."
#: The same for the models, whose ``from_arrays`` constructor takes arrays directly.
MODEL_ARRAY_HINT = " For numpy arrays use the model's from_arrays(...) constructor."


def _narwhals_to_pandas(data: Any) -> pd.DataFrame | None:
    """The frame converted through narwhals, or ``None`` when narwhals does not know it."""
    try:
        import narwhals as nw
    except ImportError:  # narwhals is optional
        return None
    with warnings.catch_warnings():  # narwhals' notice that dask support moves to a plug-in
        warnings.filterwarnings("ignore", message="Dask support", category=FutureWarning)
        frame = nw.from_native(data, pass_through=True)
    if frame is data:  # not a frame narwhals knows
        return None
    if isinstance(frame, nw.LazyFrame):
        frame = frame.collect()
    if not isinstance(frame, nw.DataFrame):  # a series
        return None
    return frame.to_pandas()


def as_pandas(data: Any, owner: str, *, array_hint: str = ARRAY_HINT) -> pd.DataFrame:
    """The data as a pandas DataFrame, converting other DataFrame libraries once.

    Use it at every entry point that takes a frame; O(n p) for a conversion, free for
    pandas input. Release metadata (the pandas ``attrs`` that ``read_release`` restores)
    does not survive other libraries: pass the mechanism explicitly.

    Parameters
    ----------
    data : DataFrame-like
        A pandas DataFrame (returned as is), a frame narwhals supports (polars ``DataFrame``
        or ``LazyFrame``, ``pyarrow.Table``, modin, cuDF, dask...) or an object with the
        DataFrame interchange protocol (``__dataframe__``).
    owner : str
        The calling function, for messages.
    array_hint : str, default=ARRAY_HINT
        The advice the message gives for a numpy array: by default to name its columns
        in a DataFrame; the models point to their ``from_arrays`` (:data:`MODEL_ARRAY_HINT`).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    UnsupportedInputError
        Any other input: a numpy array (with ``array_hint``), a Series, a dict, a list...

    Examples
    --------
    >>> import pandas as pd, polars as pl
    >>> converted = as_pandas(pl.DataFrame({"y": [1.0, 2.0], "g": ["a", "b"]}), "demo")
    >>> type(converted).__name__, converted.columns.tolist(), converted["y"].tolist()
    ('DataFrame', ['y', 'g'], [1.0, 2.0])
    >>> frame = pd.DataFrame({"y": [1.0]})
    >>> as_pandas(frame, "demo") is frame
    True
    """
    if isinstance(data, pd.DataFrame):
        return data
    converted = _narwhals_to_pandas(data)
    if converted is not None:
        return converted
    if hasattr(data, "__arrow_c_stream__") and not isinstance(data, (np.ndarray, pd.Series)):
        try:  # the Arrow PyCapsule interface (a table-like stream)
            import pyarrow as pa

            return pa.table(data).to_pandas()
        except Exception as err:  # pyarrow missing, or a stream that is not a table
            raise UnsupportedInputError(
                f"{owner}: could not convert the {type(data).__name__} through the Arrow "
                f"stream interface ({err}); convert it to pandas first."
            ) from None
    if hasattr(data, "__dataframe__") and not isinstance(data, (np.ndarray, pd.Series)):
        try:
            with warnings.catch_warnings():  # pandas 3 deprecates the protocol; still works
                warnings.filterwarnings("ignore", message=".*Interchange Protocol",
                                        category=DeprecationWarning)
                warnings.filterwarnings("ignore", message=".*Interchange Protocol")
                return pd.api.interchange.from_dataframe(data)
        except Exception as err:  # the protocol's implementations raise various types
            raise UnsupportedInputError(
                f"{owner}: could not convert the {type(data).__name__} through the DataFrame "
                f"interchange protocol ({err}); convert it to pandas first."
            ) from None
    hint = ""
    if isinstance(data, np.ndarray):
        hint = array_hint
    elif isinstance(data, pd.Series) or hasattr(data, "to_frame"):
        hint = " Turn a Series into a frame with series.to_frame()."
    elif isinstance(data, Mapping):
        hint = " Wrap a dict of columns as pandas.DataFrame(data)."
    raise UnsupportedInputError(
        f"{owner} expects a DataFrame (pandas, polars, PyArrow or any frame that narwhals or "
        f"the DataFrame interchange protocol supports); got {type(data).__module__}."
        f"{type(data).__name__}.{hint}"
    )


def frame_from_arrays(
    arrays: Mapping[str, Any],
    owner: str,
    names: Mapping[str, Sequence[str] | str] | None = None,
    *,
    labels: Sequence[str] = (),
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """A DataFrame from named arrays, with the column names of each role.

    A 1-D array gives one column named after its role; a 2-D array of k columns gives
    ``role1 .. rolek`` (DoubleML's ``X1 .. Xp``) unless ``names`` says otherwise. O(n p).

    Parameters
    ----------
    arrays : mapping of str to array-like or None
        Role name to values, e.g. ``{"y": y, "d": d, "x": X}``; ``None`` entries are
        skipped.
    owner : str
        The calling function, for messages.
    names : mapping of str to sequence of str, optional
        Column names per role (a string for a 1-D array).
    labels : sequence of str, default=()
        Roles that hold labels of any type (cluster codes, strings); the others must be
        numeric.

    Returns
    -------
    frame : pandas.DataFrame
    columns : dict of str to list of str
        The column names of each role, in order.

    Raises
    ------
    DataMismatchError
        Arrays of different lengths, more than two dimensions, non-numeric values, a
        ``names`` entry of the wrong length, or duplicate column names.

    Examples
    --------
    >>> import numpy as np
    >>> frame, cols = frame_from_arrays({"y": np.zeros(3), "x": np.ones((3, 2))}, "demo")
    >>> frame.columns.tolist(), cols
    (['y', 'x1', 'x2'], {'y': ['y'], 'x': ['x1', 'x2']})
    """
    names = dict(names or {})
    unknown = sorted(set(names) - set(arrays))
    if unknown:
        raise DataMismatchError(f"{owner}: names given for unknown roles {unknown}.")
    columns: dict[str, Any] = {}
    roles: dict[str, list[str]] = {}
    n_rows: int | None = None
    for role, values in arrays.items():
        if values is None:
            continue
        arr = values.to_numpy() if isinstance(values, (pd.Series, pd.DataFrame)) else (
            np.asarray(values)
        )
        if arr.ndim == 0 or arr.ndim > 2:
            raise DataMismatchError(
                f"{owner}: '{role}' must be a 1-D or 2-D array; got shape {arr.shape}."
            )
        if role not in labels and arr.dtype.kind not in "biuf":
            raise DataMismatchError(
                f"{owner}: '{role}' must be numeric; got dtype {arr.dtype}. Encode categories "
                "as integer codes or pass a DataFrame with a formula."
            )
        if n_rows is None:
            n_rows = arr.shape[0]
        elif arr.shape[0] != n_rows:
            raise DataMismatchError(
                f"{owner}: all arrays need the same number of rows; '{role}' has "
                f"{arr.shape[0]}, the first array {n_rows}."
            )
        mat = arr.reshape(arr.shape[0], -1)
        given = names.get(role)
        if given is None:
            if isinstance(values, pd.DataFrame):
                col_names = [str(c) for c in values.columns]
            else:
                col_names = (
                    [role] if arr.ndim == 1 else [f"{role}{j + 1}" for j in range(mat.shape[1])]
                )
        else:
            col_names = [given] if isinstance(given, str) else [str(v) for v in given]
        if len(col_names) != mat.shape[1]:
            raise DataMismatchError(
                f"{owner}: {len(col_names)} names for the {mat.shape[1]} columns of '{role}'."
            )
        clash = [c for c in col_names if c in columns]
        if clash:
            raise DataMismatchError(f"{owner}: duplicate column names {clash}.")
        for j, label in enumerate(col_names):
            columns[label] = mat[:, j]
        roles[role] = col_names
    if n_rows is None:
        raise DataMismatchError(f"{owner}: no arrays given.")
    return pd.DataFrame(columns), roles
