r"""Privatising a Dask DataFrame partition by partition (called by ``AlphaIdentity.privatize``).

Every partition goes through the pandas :meth:`AlphaIdentity.privatize` with its own
independent child stream (``SeedSequence.spawn`` of ``random_state``; with
``secure=True`` every partition draws from ``os.urandom``). The keep coin of a row and
its replacement draw depend on nothing but that stream, so each released row satisfies
the same local guarantee (TV = alpha) as with pandas: the guarantee is per record and
needs no coordination between partitions.

Row order. A global random permutation of a Dask frame is an all-to-all shuffle. The
default ``shuffle=True`` instead shuffles rows *within* each partition and releases the
partitions in random order: a file sorted by a private value within partitions, and
the position of a partition in the file, reveal nothing. What it does not hide is which
rows shared a raw partition; when partitions were formed by a private value (a file
split by income band), pass ``shuffle="global"``, which sends every row to a random
partition (Dask's shuffle on a random key) and then shuffles within partitions.

Categories. A public categorical column keeps the categories that some row of the
release takes, as with pandas; they are collected in the eager validation pass, and
every partition gets the same list.

Atoms. The same pass summarises every private column under an atomless reference
component (:func:`~privinfer.mechanisms._atoms.atom_stats`, when alpha < 1); the
summaries are merged and the column named by the pandas rule (an
:class:`~privinfer.exceptions.AtomLeakWarning`, once, before the lazy release). The grid
and single-precision tests are exact; the share of rows on repeated values counts the
values repeated within a partition (see :mod:`privinfer.mechanisms._atoms`).
"""

from __future__ import annotations

import glob
import json
import os
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privinfer._typing import RandomStateLike
from privinfer._validation import check_random_state
from privinfer.exceptions import (
    AlreadyReleasedError,
    DataMismatchError,
    UndeclaredColumnWarning,
)
from privinfer.mechanisms._atoms import (
    AtomStats,
    atom_columns,
    describe_all,
    frame_stats,
    merge_stats,
    warn_found,
)
from privinfer.mechanisms._levels import union_used, used_categories

if TYPE_CHECKING:  # pragma: no cover
    from privinfer.mechanisms.alpha_identity import AlphaIdentity

__all__ = ["privatize_dask", "read_release_dir", "write_release_dir"]

OWNER = "AlphaIdentity.privatize"
_KEY = "__privinfer_shuffle_key"


def _release_partition(
    part: pd.DataFrame,
    mech: AlphaIdentity,
    public: list[str],
    seed: np.random.SeedSequence | None,
    secure: bool,
    shuffle: bool,
    categories: dict[str, list[Any]],
) -> pd.DataFrame:
    """Privatise one partition (its columns already reduced to the published ones).

    ``categories`` are the categories of the public categorical columns that some row of
    the whole release takes (``privatize`` keeps those of the partition): every partition
    gets the same list, so the release has one dtype per column.

    The release is the whole frame: its description is attached to the Dask frame, and
    its leak and atom checks ran eagerly (``_check_partition``), with their warnings.
    The partition is validated again as it is loaded and then drawn without the pandas
    ``privatize``'s checks, which would warn again, per partition, at compute time (no
    warning filter is set here: partitions run in worker threads, and
    ``warnings.catch_warnings`` is not thread-safe).
    """
    mech.check_data(part, OWNER, verify=False)
    rs = None if secure else np.random.default_rng(seed)
    out = mech._draw_release(part, public, shuffle=shuffle, random_state=rs, secure=secure)
    for col, cats in categories.items():
        out[col] = out[col].cat.set_categories(cats)
    out.attrs = {}
    return out


def _check_partition(
    part: pd.DataFrame,
    mech: AlphaIdentity,
    public: list[str],
    exempt: list[str],
    leaks: bool,
    atoms: list[str],
) -> tuple[list[dict[str, Any]], dict[str, tuple[list[Any], list[bool]]], dict[str, AtomStats]]:
    """Validate one raw partition as the pandas path does; its overridden leaks, the
    categories its rows take in the public categorical columns, and the atom summaries
    of the private columns ``atoms``.
    """
    mech.check_data(part, OWNER, verify=False)
    used = used_categories(part, public)
    stats = frame_stats(part, atoms)
    if not leaks or len(part) == 0:
        return [], used, stats
    return mech._leak_check(part, public, exempt, OWNER), used, stats


def _random_keys(part: pd.DataFrame, seed: np.random.SeedSequence | None) -> pd.DataFrame:
    """Add a column of random 64-bit keys (the target of a global shuffle)."""
    from privinfer.mechanisms.alpha_identity import secure_uniform

    n = len(part)
    if seed is None:
        keys = (secure_uniform(n) * 2.0**53).astype(np.int64)
    else:
        keys = np.random.default_rng(seed).integers(0, 2**62, n)
    return part.assign(**{_KEY: keys})


def privatize_dask(
    mech: AlphaIdentity,
    data: Any,
    *,
    public: Sequence[str] | None,
    publish_undeclared: bool,
    shuffle: bool | str,
    allow_derived: Sequence[str] | bool | None,
    random_state: RandomStateLike,
    secure: bool,
) -> Any:
    """The Dask path of :meth:`AlphaIdentity.privatize` (see the module docstring).

    The private columns are validated eagerly (one pass over them), so that nothing is
    released when validation fails; the release itself is lazy. The result carries the
    mechanism's and the release's description in the ``attrs`` of its ``_meta``; its
    index restarts in every partition (divisions unknown).

    Raises
    ------
    AlreadyReleasedError, MechanismMismatchError, DataMismatchError, MissingValueError,
    OutOfSupportError, UnknownCategoryError
        As the pandas path.
    ValueError
        ``shuffle`` not True, False or "global"; ``secure=True`` with a ``random_state``.
    """
    import dask
    import dask.dataframe as dd

    from privinfer.mechanisms.alpha_identity import ATTRS_KEY, RELEASE_KEY, secure_permutation

    meta = data._meta
    if ATTRS_KEY in meta.attrs or RELEASE_KEY in meta.attrs:
        raise AlreadyReleasedError(
            f"{OWNER}: these data already are a privinfer release (they carry a mechanism "
            "description); privatise the raw data once."
        )
    if shuffle not in (True, False, "global"):
        raise ValueError(f"{OWNER}: shuffle must be True, False or 'global'; got {shuffle!r}.")
    for name, flag in (("publish_undeclared", publish_undeclared), ("secure", secure)):
        if not isinstance(flag, bool):
            raise TypeError(f"{OWNER}: {name} must be a bool; got {flag!r}.")
    if secure and random_state is not None:
        raise ValueError(
            f"{OWNER}: secure=True draws from the OS generator and cannot be seeded; got "
            f"random_state={random_state!r}."
        )
    mech.check_data(meta, OWNER, verify=False)  # columns present, no duplicates
    public_cols, dropped = mech._published_columns(meta, public, publish_undeclared, OWNER)
    exempt = mech._exempt_columns(allow_derived, public_cols, OWNER)
    if dropped:
        warnings.warn(
            f"{OWNER}: {len(dropped)} column(s) neither private nor declared public were "
            f"dropped from the release: {dropped!r}. Declare the ones to publish with "
            "public=[...] (or publish_undeclared=True).",
            UndeclaredColumnWarning,
            stacklevel=3,
        )
    published = [c for c in meta.columns if c in mech.private_columns or c in public_cols]
    frame = data[published]
    if mech.alpha == 1.0:
        leak_check = "skipped (alpha = 1)"
    elif allow_derived is True:
        leak_check = "skipped (allow_derived=True)"
    else:
        leak_check = "passed, per partition" + (", with overrides" if exempt else "")
    # eager validation and leak checks of every partition: nothing is released (not even
    # a first partition written to disk) when some partition is invalid
    checks = leak_check.startswith("passed")
    atoms = atom_columns(mech.reference.parts, meta.dtypes) if mech.alpha < 1.0 else []
    (found,) = dask.compute(
        [
            dask.delayed(_check_partition)(p, mech, public_cols, exempt, checks, atoms)
            for p in frame.to_delayed()
        ]
    )
    overridden = list({json.dumps(o, sort_keys=True): o for f, _, _ in found for o in f}.values())
    categories = union_used([used for _, used, _ in found])
    merged = {col: merge_stats(stats[col] for _, _, stats in found) for col in atoms}
    warn_found(describe_all(merged, meta.dtypes), OWNER)
    n_parts = frame.npartitions
    if secure:
        seeds: list[np.random.SeedSequence | None] = [None] * (2 * n_parts)
        order = secure_permutation(n_parts)
    else:
        rng = check_random_state(random_state)
        seeds = list(np.random.SeedSequence(rng.integers(0, 2**63, 4)).spawn(2 * n_parts))
        order = rng.permutation(n_parts)
    out_meta = _release_partition(
        meta[published], mech, public_cols, np.random.SeedSequence(0), False, False, categories
    ).iloc[:0]
    out_meta.attrs = mech.release_attrs(
        public_cols, dropped, publish_undeclared=publish_undeclared, shuffled=shuffle,
        exempt=exempt, leak_check=leak_check, overridden=overridden, secure=secure,
        n_rows=None, partitions=n_parts,
    )
    parts = frame.to_delayed()
    released = [
        dask.delayed(_release_partition)(p, mech, public_cols, seeds[i], secure, bool(shuffle),
                                         categories)
        for i, p in enumerate(parts)
    ]
    out = dd.from_delayed(released, meta=out_meta, verify_meta=False)
    if shuffle == "global":
        keyed = [dask.delayed(_random_keys)(p, seeds[n_parts + i]) for i, p in enumerate(released)]
        key_meta = out_meta.assign(**{_KEY: np.zeros(0, dtype=np.int64)})
        key_meta.attrs = {}
        mixed = dd.from_delayed(keyed, meta=key_meta, verify_meta=False).shuffle(_KEY)
        out = mixed.map_partitions(
            lambda p: p.sort_values(_KEY).drop(columns=_KEY).reset_index(drop=True),
            meta=out_meta,
        )
    elif shuffle:
        out = out.partitions[[int(i) for i in order]]
    return out


# -- release files: one per partition --------------------------------------------------
_PART_FIELDS = ("n_rows", "part", "parts", "fingerprint")


def _write_part(part: pd.DataFrame, attrs: dict[str, Any], path: str, i: int, n: int) -> str:
    from privinfer.mechanisms.alpha_identity import ATTRS_KEY, RELEASE_KEY
    from privinfer.release import _write_release_file

    part = part.reset_index(drop=True)
    desc = {**attrs[RELEASE_KEY], "n_rows": len(part), "part": i, "parts": n}
    part.attrs = {ATTRS_KEY: attrs[ATTRS_KEY], RELEASE_KEY: desc}
    return _write_release_file(part, path, partition=True)


def write_release_dir(released: Any, directory: str | os.PathLike[str]) -> list[str]:
    """Write a Dask release as one release file per partition (``part-00000.parquet``, ...).

    Every file is a complete release file (mechanism, column roles, its own row count
    and fingerprint) and records its position ``part`` among ``parts`` files, so that
    :func:`read_release_dir` detects a missing or foreign file.

    Returns
    -------
    list of str
        The fingerprints of the files, in partition order.

    Raises
    ------
    DataMismatchError
        The frame carries no release description, or ``directory`` already holds
        Parquet files.
    """
    import dask

    from privinfer.mechanisms.alpha_identity import ATTRS_KEY, RELEASE_KEY

    attrs = dict(released._meta.attrs)
    if ATTRS_KEY not in attrs or RELEASE_KEY not in attrs:
        raise DataMismatchError(
            "write_release: this Dask frame is not a privinfer release (its _meta carries no "
            "mechanism or release description); write the output of mech.privatize as it is."
        )
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    if glob.glob(os.path.join(directory, "*.parquet")):
        raise DataMismatchError(
            f"write_release: {directory!r} already holds Parquet files; write a Dask release "
            "into an empty directory."
        )
    parts = released.to_delayed()
    tasks = [
        dask.delayed(_write_part)(p, attrs, os.path.join(directory, f"part-{i:05d}.parquet"), i,
                                  len(parts))
        for i, p in enumerate(parts)
    ]  # fmt: skip
    return list(dask.compute(*tasks))


def read_release_dir(directory: str | os.PathLike[str]) -> Any:
    """A directory written by :func:`write_release_dir` as a lazy Dask frame.

    The files' metadata are read and checked eagerly (same mechanism and release, every
    part present once); each file's content is checked against its fingerprint when
    its partition is loaded. The mechanism's and the release's descriptions are in the
    ``attrs`` of the frame's ``_meta``, where the models find them.

    Raises
    ------
    DataMismatchError
        No release files, files of different releases, or a missing part.
    """
    import dask.dataframe as dd
    import pyarrow.parquet as pq

    from privinfer.mechanisms.alpha_identity import ATTRS_KEY, RELEASE_KEY, AlphaIdentity
    from privinfer.release import read_release

    directory = os.fspath(directory)
    files = sorted(glob.glob(os.path.join(directory, "*.parquet")))
    if not files:
        raise DataMismatchError(f"read_release: {directory!r} holds no Parquet files.")
    descs = []
    for f in files:
        meta = pq.read_schema(f).metadata or {}
        if b"privinfer.mechanism" not in meta or b"privinfer.release" not in meta:
            raise DataMismatchError(
                f"read_release: {f!r} carries no privinfer release metadata; it was not "
                "written by write_release."
            )
        descs.append((json.loads(meta[b"privinfer.mechanism"]),
                      json.loads(meta[b"privinfer.release"])))  # fmt: skip
    mech_desc, first = descs[0]
    common = {k: v for k, v in first.items() if k not in _PART_FIELDS}
    for m, d in descs[1:]:
        if m != mech_desc or {k: v for k, v in d.items() if k not in _PART_FIELDS} != common:
            raise DataMismatchError(
                f"read_release: the files in {directory!r} belong to different releases."
            )
    parts = sorted(int(d.get("part", -1)) for _, d in descs)
    if parts != list(range(int(first.get("parts", -1)))):
        raise DataMismatchError(
            f"read_release: {directory!r} holds parts {parts} of a release of "
            f"{first.get('parts')} file(s); a file is missing or foreign."
        )
    mechanism = AlphaIdentity.from_dict(mech_desc)
    empty = pq.read_schema(files[0]).empty_table().to_pandas()
    for col, levels in mechanism.reference.categorical_levels().items():
        if col in empty.columns:
            empty[col] = pd.Categorical(empty[col], categories=levels)
    empty.attrs = {
        ATTRS_KEY: mech_desc,
        RELEASE_KEY: {**common, "n_rows": int(sum(d["n_rows"] for _, d in descs)),
                      "parts": len(files)},
    }  # fmt: skip
    return dd.from_map(read_release, files, meta=empty)
