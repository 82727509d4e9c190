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
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from privinfer._typing import RandomStateLike
from privinfer._validation import check_random_state
from privinfer.exceptions import AlreadyReleasedError, UndeclaredColumnWarning

if TYPE_CHECKING:  # pragma: no cover
    from privinfer.mechanisms.alpha_identity import AlphaIdentity

__all__ = ["privatize_dask"]

OWNER = "AlphaIdentity.privatize"
_KEY = "__privinfer_shuffle_key"


def _release_partition(
    part: pd.DataFrame,
    mech: AlphaIdentity,
    public: list[str],
    seed: np.random.SeedSequence | None,
    secure: bool,
    shuffle: bool,
) -> pd.DataFrame:
    """Privatise one partition (its columns already reduced to the published ones)."""
    with warnings.catch_warnings():
        # the release is the whole frame: its description is attached to the Dask frame
        warnings.simplefilter("ignore", UndeclaredColumnWarning)
        rs = None if secure else np.random.default_rng(seed)
        out = mech.privatize(part, public=public, shuffle=shuffle, random_state=rs, secure=secure)
    out.attrs = {}
    return out


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
    # eager validation of the private columns of every partition: nothing is released
    # (not even a first partition written to disk) when some partition is invalid
    private = frame[list(mech.private_columns)]
    dask.compute(
        [dask.delayed(mech.check_data)(p, OWNER, verify=False) for p in private.to_delayed()]
    )
    n_parts = frame.npartitions
    if secure:
        seeds: list[np.random.SeedSequence | None] = [None] * (2 * n_parts)
        order = secure_permutation(n_parts)
    else:
        rng = check_random_state(random_state)
        seeds = list(np.random.SeedSequence(rng.integers(0, 2**63, 4)).spawn(2 * n_parts))
        order = rng.permutation(n_parts)
    out_meta = _release_partition(
        meta[published], mech, public_cols, np.random.SeedSequence(0), False, False
    ).iloc[:0]
    out_meta.attrs = {
        ATTRS_KEY: mech.to_dict(),
        RELEASE_KEY: {
            "private": list(mech.private_columns),
            "public": list(public_cols),
            "dropped": list(dropped),
            "publish_undeclared": publish_undeclared,
            "shuffled": shuffle,
            "allow_derived": exempt,
            "secure": secure,
            "n_rows": None,
            "partitions": n_parts,
        },
    }
    parts = frame.to_delayed()
    released = [
        dask.delayed(_release_partition)(p, mech, public_cols, seeds[i], secure, bool(shuffle))
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
