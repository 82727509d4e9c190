"""Release files: a privatised frame, its mechanism and its column roles, in one Parquet file.

The data holder runs ``mech.privatize(raw, public=[...])`` and then
:func:`write_release`; the analyst runs :func:`read_release` and hands the frame to a
model, which reads the mechanism from it. The file's metadata carries

* ``privinfer.mechanism``: the mechanism's description (:meth:`AlphaIdentity.to_dict`);
* ``privinfer.release``: the release's description (private and public columns, dropped
  columns, row order, leak-check overrides, number of rows);
* ``privinfer.fingerprint``: a SHA-256 over both descriptions and the released values,
  checked when the file is read.

The fingerprint is an integrity check against *accidental* change (a truncated copy, a
tool that rewrote a column, an edit by mistake). It is not an authenticity guarantee: it
uses no key, so whoever changes the file on purpose can recompute it and store the new
value. A data holder who needs analysts to know that a file is theirs and unaltered
signs the file with the tools they already use (an OpenPGP or S/MIME signature, a signed
checksum file), or publishes the fingerprint that :func:`write_release` returns through
a channel the analysts trust (the holder's own website, the paper or report), for the
analysts to compare with ``read_release(path).attrs["privinfer_release"]["fingerprint"]``.

A CSV file or a merge drops the pandas ``attrs`` that carry the mechanism; analysing
such data with an explicit ``mechanism=`` is possible but raises an
:class:`~privinfer.exceptions.UnverifiedReleaseWarning`. Parquet goes through pyarrow.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from privinfer.exceptions import DataMismatchError, MechanismMismatchError
from privinfer.mechanisms._levels import drop_unused_categories
from privinfer.mechanisms.alpha_identity import ATTRS_KEY, RELEASE_KEY, AlphaIdentity

__all__ = ["FORMAT", "read_release", "release_fingerprint", "write_release"]

#: Format tag written into every release file.
FORMAT = "privinfer-release/1"

_KEY_FORMAT = b"privinfer.format"
_KEY_MECHANISM = b"privinfer.mechanism"
_KEY_RELEASE = b"privinfer.release"
_KEY_FINGERPRINT = b"privinfer.fingerprint"


def _descriptions(released: pd.DataFrame, owner: str) -> tuple[dict[str, Any], dict[str, Any]]:
    if not isinstance(released, pd.DataFrame):
        raise DataMismatchError(
            f"{owner} expects a pandas DataFrame; got {type(released).__name__}."
        )
    mech, desc = released.attrs.get(ATTRS_KEY), released.attrs.get(RELEASE_KEY)
    if mech is None or desc is None:
        raise DataMismatchError(
            f"{owner}: this frame is not a privinfer release (it carries no mechanism or "
            "release description). Write the output of mech.privatize(raw, public=[...]) "
            "as it is."
        )
    if not isinstance(mech, Mapping) or not isinstance(desc, Mapping):
        raise DataMismatchError(
            f"{owner}: the frame's release attrs were edited (the mechanism and release "
            "descriptions must be mappings); write the output of privatize unmodified."
        )
    return dict(mech), {k: v for k, v in desc.items() if k != "fingerprint"}


def release_fingerprint(released: pd.DataFrame) -> str:
    """SHA-256 of a release: its descriptions, column names, dtypes and values.

    Row order counts (a release is one fixed table). The fingerprint identifies a
    release when it is cited, and :func:`read_release` checks it. It is an integrity
    check against accidental change, not an authenticity guarantee: it uses no key, so
    anyone who rewrites a file can recompute it (see Notes).

    Parameters
    ----------
    released : DataFrame
        Output of :meth:`AlphaIdentity.privatize` (or of :func:`read_release`).

    Returns
    -------
    str
        64 hexadecimal digits.

    Raises
    ------
    DataMismatchError
        The frame carries no release description.

    Notes
    -----
    An unkeyed hash detects a change that was not meant (a damaged or partial copy, a
    conversion that altered values): the stored fingerprint no longer matches. It does
    not show who wrote a file: a file altered on purpose can carry a fingerprint
    recomputed for the altered content. For authenticity the data holder signs the
    release file with their usual tools (an OpenPGP or S/MIME signature, a signed
    checksum file), or publishes the fingerprint through a channel the analysts trust
    (their website, the paper or report) for the analysts to compare. privinfer manages
    no keys.

    Examples
    --------
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    >>> raw = pd.DataFrame({"x": np.linspace(0, 1, 40)})
    >>> released = mech.privatize(raw, random_state=0)
    >>> fp = release_fingerprint(released)
    >>> len(fp), fp == release_fingerprint(released.copy())
    (64, True)
    """
    mech, desc = _descriptions(released, "release_fingerprint")
    h = hashlib.sha256()
    head = {"format": FORMAT, "mechanism": mech, "release": desc,
            "columns": [str(c) for c in released.columns]}
    h.update(json.dumps(head, sort_keys=True, default=str).encode())
    for col in released.columns:
        series = released[col]
        h.update(f"\x1e{col}\x1f{_kind(series)}\x1f".encode())
        hashed = pd.util.hash_pandas_object(_canonical(series), index=False, categorize=True)
        h.update(hashed.to_numpy(dtype=np.uint64).tobytes())
    return h.hexdigest()


def _kind(series: pd.Series) -> str:
    """A dtype label that survives a Parquet round trip."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return "category"
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    if pd.api.types.is_integer_dtype(series):
        return "int"
    if pd.api.types.is_float_dtype(series):
        return "float"
    return "object"


def _canonical(series: pd.Series) -> pd.Series:
    """Values in a form whose hash does not depend on the storage dtype."""
    kind = _kind(series)
    if kind == "category":
        return series.astype(object).astype(str)
    if kind == "object":
        return series.astype(object).map(lambda v: f"{type(v).__name__}:{v}")
    return series


def write_release(released: pd.DataFrame, path: str | os.PathLike[str]) -> str:
    """Write a release to a Parquet file with its mechanism, column roles and fingerprint.

    Parameters
    ----------
    released : DataFrame
        The output of :meth:`AlphaIdentity.privatize`, unmodified (same columns and
        rows).
    path : str or path-like
        Destination file (conventionally ``*.parquet``). For a Dask release, an empty
        directory that receives one release file per partition (the fingerprints of
        the files are returned, as a list).

    Returns
    -------
    str
        The release fingerprint (:func:`release_fingerprint`), also stored in the file:
        an integrity check against accidental change, not a signature. Publish it
        through a trusted channel, or sign the file, where analysts must be able to rely
        on the file being the holder's.

    Notes
    -----
    A categorical public column is written with the categories that some row takes
    only, the rule of :meth:`AlphaIdentity.privatize` (whose output already follows
    it): a category without rows would tell readers about rows removed before the
    release. The fingerprint covers the values, not the category lists, so it is the
    same either way.

    Raises
    ------
    TypeError
        ``path`` is not a str or path-like object.
    DataMismatchError
        The frame is not a release, or its columns or row count differ from its
        description (columns added, dropped or rows filtered after ``privatize``).
    MechanismMismatchError, OutOfSupportError, PrivateDtypeError
        The private columns no longer fit the mechanism.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 100), "y": rng.normal(size=100)})
    >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    >>> released = mech.privatize(raw, public=["y"], random_state=1)     # data holder
    >>> path = os.path.join(tempfile.mkdtemp(), "release.parquet")
    >>> fp = pi.write_release(released, path)
    >>> back = pi.read_release(path)                                       # analyst
    >>> pi.AlphaIdentity.from_released(back) == mech, back.equals(released)
    (True, True)
    """
    owner = "write_release"
    path = _check_path(path, owner)
    if type(released).__module__.split(".")[0] == "dask":  # one file per partition
        from privinfer.mechanisms._dask import write_release_dir

        return write_release_dir(released, path)  # type: ignore[return-value]
    return _write_release_file(released, path)


def _write_release_file(released: pd.DataFrame, path: str, *, partition: bool = False) -> str:
    """:func:`write_release` of a pandas frame; ``partition=True`` for one partition of a
    Dask release, whose public categories are those of the whole release (set by
    ``privatize``) and are kept as they are.
    """
    owner = "write_release"
    mech_desc, desc = _descriptions(released, owner)
    try:
        roles = [*desc.get("private", []), *desc.get("public", [])]
        n_rows = int(desc.get("n_rows", len(released)))
        mechanism = AlphaIdentity.from_dict(mech_desc)
    except (KeyError, TypeError, ValueError) as exc:
        raise DataMismatchError(
            f"{owner}: the frame's release attrs were edited and cannot be read ({exc!r}); "
            "write the output of privatize unmodified."
        ) from exc
    if sorted(map(str, released.columns)) != sorted(map(str, roles)):
        raise DataMismatchError(
            f"{owner}: the frame's columns {list(released.columns)!r} differ from the "
            f"release's columns {roles!r} (private and declared public). Write the output "
            "of privatize unmodified; privatise again to change what is published."
        )
    if n_rows != len(released):
        raise DataMismatchError(
            f"{owner}: the frame has {len(released)} rows but the release had "
            f"{n_rows}; write the output of privatize unmodified."
        )
    mechanism.check_data(released, owner)
    if not partition:  # the rule of privatize, for a frame whose categories were edited
        released = drop_unused_categories(released, desc.get("public", []))
    pa, pq = _pyarrow(owner)
    fingerprint = release_fingerprint(released)
    table = pa.Table.from_pandas(released, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    # pyarrow copies the frame's whole ``attrs`` into its pandas metadata; the file keeps
    # only the two descriptions below (under their own keys, covered by the fingerprint)
    if b"pandas" in meta:
        pandas_meta = json.loads(meta[b"pandas"])
        pandas_meta.pop("attributes", None)
        meta[b"pandas"] = json.dumps(pandas_meta).encode()
    meta.update({
        _KEY_FORMAT: FORMAT.encode(),
        _KEY_MECHANISM: json.dumps(mech_desc, default=str).encode(),
        _KEY_RELEASE: json.dumps(desc, default=str).encode(),
        _KEY_FINGERPRINT: fingerprint.encode(),
    })
    pq.write_table(table.replace_schema_metadata(meta), path)
    return fingerprint


def read_release(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a release file written by :func:`write_release`.

    The returned frame carries the mechanism and the release's description in its
    ``attrs``, so models read the mechanism from it (``PrivateATE.from_formula(f,
    read_release(path))``) and :meth:`AlphaIdentity.from_released` rebuilds it.

    Parameters
    ----------
    path : str or path-like
        A Parquet file written by :func:`write_release`, or a directory of them written
        from a Dask release (then a lazy Dask frame is returned; each file is checked
        against its fingerprint when its partition is loaded).

    Returns
    -------
    DataFrame
        The released rows and columns; ``attrs["privinfer_release"]["fingerprint"]``
        holds the verified fingerprint.

    Raises
    ------
    TypeError
        ``path`` is not a str or path-like object (None, an open file, bytes).
    DataMismatchError
        The file is not a Parquet file, carries no privinfer release metadata, or its
        content does not match its fingerprint (modified after it was written). A
        matching fingerprint rules out accidental change only: one who alters the file
        on purpose can store a recomputed fingerprint (see :func:`release_fingerprint`).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 100), "y": rng.normal(size=100)})
    >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    >>> path = os.path.join(tempfile.mkdtemp(), "release.parquet")
    >>> _ = pi.write_release(mech.privatize(raw, public=["y"], random_state=1), path)
    >>> data = pi.read_release(path)
    >>> data.attrs["privinfer_release"]["public"], len(data)
    (['y'], 100)
    """
    owner = "read_release"
    path = _check_path(path, owner)
    if os.path.isdir(path):  # written from a Dask release: a lazy Dask frame
        from privinfer.mechanisms._dask import read_release_dir

        return read_release_dir(path)
    pa, pq = _pyarrow(owner)
    try:
        table = pq.read_table(path)
    except pa.ArrowInvalid as exc:  # a CSV file, a truncated download, any other format
        raise DataMismatchError(
            f"{owner}: {path!r} is not a readable Parquet file ({exc}); release "
            "files are written by write_release."
        ) from exc
    meta = table.schema.metadata or {}
    if _KEY_MECHANISM not in meta or _KEY_RELEASE not in meta:
        raise DataMismatchError(
            f"{owner}: {path!r} carries no privinfer release metadata; it was not "
            "written by write_release."
        )
    fmt = meta.get(_KEY_FORMAT, b"").decode(errors="replace")
    if fmt != FORMAT:
        raise DataMismatchError(f"{owner}: unknown release format {fmt!r} (expected {FORMAT!r}).")
    mech_desc = _json_object(meta[_KEY_MECHANISM], "mechanism", owner, MechanismMismatchError)
    desc = _json_object(meta[_KEY_RELEASE], "release", owner, DataMismatchError)
    try:
        mechanism = AlphaIdentity.from_dict(mech_desc)
    except (KeyError, TypeError, ValueError) as exc:
        raise MechanismMismatchError(f"{owner}: unreadable mechanism description ({exc}).") from exc
    released = table.to_pandas()
    for col, levels in mechanism.reference.categorical_levels().items():
        if col in released.columns:
            released[col] = pd.Categorical(released[col], categories=levels)
    released.attrs = {ATTRS_KEY: mech_desc, RELEASE_KEY: desc}
    stored = meta.get(_KEY_FINGERPRINT, b"").decode(errors="replace")
    fingerprint = release_fingerprint(released)
    if stored != fingerprint:
        raise DataMismatchError(
            f"{owner}: the content of {path!r} does not match its release "
            "fingerprint; the file was modified after it was written."
        )
    released.attrs[RELEASE_KEY] = {**desc, "fingerprint": fingerprint}
    mechanism.check_data(released, owner)
    return released


def _check_path(path: object, owner: str) -> str:
    """``path`` as a str, or a TypeError naming the expected input.

    Examples
    --------
    >>> import pathlib
    >>> _check_path(pathlib.Path("release.parquet"), "read_release")
    'release.parquet'
    """
    fspath = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if not isinstance(fspath, str):
        raise TypeError(
            f"{owner}: 'path' must be a str or os.PathLike (e.g. pathlib.Path) naming a "
            "release file (.parquet) or, for a Dask release, a directory of them; got "
            f"{type(path).__name__}."
        )
    return fspath


def _json_object(raw: bytes, what: str, owner: str, error: type[Exception]) -> dict[str, Any]:
    """A JSON object stored in a release file's metadata; ``error`` when it is not one."""
    try:
        value = json.loads(raw)
    except ValueError as exc:  # not UTF-8 or not JSON (UnicodeDecodeError is a ValueError)
        raise error(f"{owner}: unreadable {what} description ({exc}).") from exc
    if not isinstance(value, dict):
        raise error(
            f"{owner}: unreadable {what} description (a JSON object was expected; got "
            f"{type(value).__name__})."
        )
    return value


def _pyarrow(owner: str) -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is a dependency
        raise ImportError(f"{owner} needs pyarrow: pip install pyarrow.") from exc
    return pa, pq
