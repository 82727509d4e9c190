r"""The alpha-identity mechanism (Kormos and van der Vaart, 2026, sec. 4.1).

.. math:: Q(B \mid x) = \alpha\,\delta_x(B) + (1 - \alpha)\,\bar Q(B)

With probability ``alpha`` a record's private covariates are released unchanged,
otherwise *all of them jointly* are replaced by one fresh draw from the public reference
distribution :math:`\bar Q`. Declared public columns are never touched; other columns are
not published, and the rows go out in a fresh random order.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer._typing import RandomStateLike
from privinfer._validation import (
    check_alpha,
    check_no_nan,
    check_random_state,
    user_stacklevel,
    warn_if_seeded,
)
from privinfer.exceptions import (
    AlreadyReleasedError,
    DataMismatchError,
    DerivedColumnError,
    MechanismMismatchError,
    MissingValueError,
    UndeclaredColumnWarning,
    UnverifiedReleaseWarning,
)
from privinfer.mechanisms._atoms import warn_atom_leaks
from privinfer.mechanisms._consistency import check_reference_share
from privinfer.mechanisms._leaks import find_leaks, format_leaks
from privinfer.mechanisms._levels import drop_unused_categories, level_codes
from privinfer.mechanisms.guarantees import (
    PrivacyGuarantees,
    alpha_identity_guarantees,
    product_guarantees,
)
from privinfer.mechanisms.reference import (
    Component,
    Empirical,
    Frozen,
    ProductReference,
    _is_real_numeric,
    as_reference,
    check_private_columns,
    description_hash,
)

__all__ = ["ATTRS_KEY", "RELEASE_KEY", "AlphaIdentity", "secure_permutation", "secure_uniform"]

#: Key under which a released DataFrame carries the mechanism's description.
ATTRS_KEY = "privinfer_mechanism"

#: Key under which a released DataFrame carries the release's description (column roles,
#: row order, overrides).
RELEASE_KEY = "privinfer_release"


class AlphaIdentity:
    r"""Keep the private covariates with probability ``alpha``, else redraw them from Q̄.

    The mechanism is public: its parameters travel with the released data
    (``released.attrs["privinfer_mechanism"]``) so that an analyst can rebuild it with
    :meth:`from_dict` and invert it (:mod:`privinfer.inversion`).

    Parameters
    ----------
    alpha : float
        Keep probability in (0, 1]; ``alpha = 1`` releases the data unchanged.
    reference : mapping or ProductReference
        The public reference distribution :math:`\bar Q` over the private columns, e.g.
        ``{"age": Uniform(18, 90), "educ": Categorical(["hs", "college"])}``. Its keys
        define which columns are private.

    Raises
    ------
    ValueError
        If ``alpha`` is not a float in (0, 1] (a bool is rejected).
    MechanismMismatchError
        If the reference is empty or malformed.

    See Also
    --------
    privinfer.inversion.invert : the inverse operator :math:`Q_X^{-1}`.
    AlphaIdentity.guarantees : TV, LDP and PML guarantees.

    Notes
    -----
    Local total-variation privacy is exactly :math:`\alpha` (Kormos and van der Vaart, 2026,
    Definition 1):
    for any two inputs, :math:`\sup_B |Q(B|x) - Q(B|x')| = \alpha`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import privinfer as pi
    >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    >>> rng = np.random.default_rng(0)
    >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 50), "y": rng.normal(size=50)})
    >>> released = mech.privatize(raw, public=["y"], shuffle=False, random_state=0)
    >>> released["y"].equals(raw["y"])
    True
    """

    def __init__(self, alpha: float, reference: Mapping[Any, Any] | ProductReference) -> None:
        self.alpha = check_alpha(alpha, "AlphaIdentity")
        self.reference = as_reference(reference)

    # -- description -------------------------------------------------------------------
    @property
    def private_columns(self) -> tuple[str, ...]:
        """Names of the columns the mechanism protects."""
        return self.reference.columns

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description; :meth:`from_dict` rebuilds the mechanism."""
        return {"mechanism": "alpha-identity", "alpha": self.alpha, **self.reference.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | str) -> AlphaIdentity:
        """Rebuild a mechanism from :meth:`to_dict` output (or its JSON string)."""
        if isinstance(d, str):
            d = json.loads(d)
        if d.get("mechanism") != "alpha-identity":
            raise MechanismMismatchError(
                f"from_dict expects an alpha-identity description; got {d.get('mechanism')!r}."
            )
        return cls(d["alpha"], ProductReference.from_dict(d))

    @classmethod
    def from_released(cls, released: pd.DataFrame) -> AlphaIdentity:
        """Rebuild the mechanism from the description a released frame carries."""
        desc = released.attrs.get(ATTRS_KEY)
        if desc is None:
            raise MechanismMismatchError(
                "This DataFrame carries no mechanism description (attrs"
                f"[{ATTRS_KEY!r}]). Read releases with pi.read_release(path) (CSV files and "
                "merges drop it), or pass mechanism= explicitly."
            )
        return cls.from_dict(desc)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AlphaIdentity) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return description_hash(self.to_dict())

    def __repr__(self) -> str:
        return f"AlphaIdentity(alpha={self.alpha:g}, reference={self.reference!r})"

    # -- guarantees --------------------------------------------------------------------
    def guarantees(self, c: float | None = None) -> PrivacyGuarantees:
        """Privacy guarantees: TV, (eps, delta)-LDP and, for finite spaces, PML.

        Parameters
        ----------
        c : float, optional
            Density floor of the c-interior in ``[0, 1/N]`` for the PML figure (finite
            private spaces only); ``None`` means ``c = 0``.

        Examples
        --------
        >>> import privinfer as pi
        >>> mech = pi.AlphaIdentity(0.5, {"g": pi.reference.Categorical(["a", "b"])})
        >>> round(mech.guarantees().ldp_eps, 4)
        1.0986
        """
        if self.reference.is_discrete:
            pmfs = [_component_pmf(comp) for _, comp in self.reference.parts]
            return product_guarantees(self.alpha, pmfs, c)
        return alpha_identity_guarantees(
            self.alpha, None, c, atomless=self.reference.is_atomless
        )

    # -- holder side -------------------------------------------------------------------
    def check_data(self, data: pd.DataFrame, owner: str, *, verify: bool = True) -> None:
        r"""Validate the private columns of ``data`` against the reference.

        Parameters
        ----------
        data : DataFrame
            Released data (analyst side) or raw data (holder side, ``verify=False``).
        owner : str
            Name of the calling function, for messages.
        verify : bool, default=True
            Check that ``data`` are a release of *this* mechanism: a frame carrying
            another mechanism's description raises; a frame carrying none (raw data, a
            CSV, a merge that dropped ``attrs``) gets an
            :class:`~privinfer.exceptions.UnverifiedReleaseWarning` unless
            ``alpha = 1`` (which releases data unchanged). The released private values
            must also keep the mechanism's reference share: every cell of a private
            column's reference holds at least about :math:`n(1-\alpha)\bar Q(A)` rows (a
            one-sided binomial test at level 1e-6), which rows selected on a private
            column, raw data or another alpha violate (see the user guide's page on the
            mechanism).

        Raises
        ------
        MechanismMismatchError, MissingValueError, OutOfSupportError, UnknownCategoryError,
        PrivateDtypeError

        Warns
        -----
        UnverifiedReleaseWarning
            ``verify=True``, ``alpha < 1`` and ``data`` carry no release metadata.
        """
        if not isinstance(data, pd.DataFrame):
            raise DataMismatchError(
                f"{owner} expects a pandas DataFrame; got {type(data).__name__}."
            )
        check_private_columns(self.private_columns, data.columns, owner)
        duplicated = sorted({str(c) for c in data.columns[data.columns.duplicated()]})
        if duplicated:
            raise DataMismatchError(
                f"{owner}: the data hold duplicated column name(s) {duplicated!r}; every column "
                "must have a unique name (rename or drop the duplicates)."
            )
        if verify:
            self._verify_release(data, owner)
        self.reference.check_dtypes(data, owner)
        for col in self.private_columns:
            series = data[col]
            if series.isna().any():
                raise MissingValueError(
                    f"{owner}: private column {col!r} holds {int(series.isna().sum())} missing "
                    "value(s). Drop or impute them first; privinfer never drops rows silently."
                )
            if _is_real_numeric(series) and not pd.api.types.is_bool_dtype(series):
                check_no_nan(series.to_numpy(dtype=float), col, owner)
        self.reference.check_values(data, owner)
        if verify:
            check_reference_share(self, data, owner)

    def _verify_release(self, data: pd.DataFrame, owner: str) -> None:
        """Released by this mechanism? Raise on a different one, warn on none."""
        desc = data.attrs.get(ATTRS_KEY)
        if desc is None:
            if self.alpha < 1.0:
                warnings.warn(
                    f"{owner}: these data carry no privinfer release metadata, so nothing shows "
                    f"that they went through {self!r}. Raw data, or data privatised twice, "
                    "analysed with an explicit mechanism give confident wrong answers. Read "
                    "releases with pi.read_release(path) (CSV files and merges drop the "
                    "metadata).",
                    UnverifiedReleaseWarning,
                    stacklevel=user_stacklevel(),
                )
            return
        try:
            recorded = AlphaIdentity.from_dict(desc)
        except (KeyError, TypeError, ValueError) as exc:
            raise MechanismMismatchError(
                f"{owner}: the data carry an unreadable mechanism description ({exc})."
            ) from exc
        if recorded != self:
            raise MechanismMismatchError(
                f"{owner}: the data were released by {recorded!r}, not by the mechanism "
                f"passed ({self!r}). Analyse a release with the mechanism that produced it "
                "(omit mechanism= to read it from the data)."
            )

    def privatize(
        self,
        data: pd.DataFrame,
        *,
        public: Sequence[str] | None = None,
        publish_undeclared: bool = False,
        shuffle: bool = True,
        allow_derived: Sequence[str] | bool | None = None,
        random_state: RandomStateLike = None,
        secure: bool = False,
    ) -> pd.DataFrame:
        r"""Release ``data`` through the mechanism.

        Each row keeps its private columns with probability ``alpha``; otherwise all of
        them are replaced jointly by one draw from the reference. Only the private
        columns and the columns declared in ``public`` are published; the rows go out
        in a fresh random order with a fresh ``RangeIndex``. The input is never modified
        and nothing is released when validation fails.

        Parameters
        ----------
        data : DataFrame
            Raw records; must contain every private column of the mechanism. A Dask
            DataFrame is released lazily, partition by partition (``shuffle`` may then
            also be ``"global"``); see the user guide's page on working at scale.
        public : list of str, optional
            Columns published unchanged next to the private ones (outcome, treatment,
            public covariates). Every other column is dropped with an
            :class:`~privinfer.exceptions.UndeclaredColumnWarning`.
        publish_undeclared : bool, default=False
            Publish every non-private column unchanged, declared or not (explicit
            opt-in; the leak checks still run on all of them).
        shuffle : bool, default=True
            Release the rows in a fresh random order. ``False`` keeps the raw order
            (which can reveal whatever the file was sorted by) and is written into the
            release's description.
        allow_derived : list of str or True, optional
            Published columns exempted from the leak checks; the override and the
            relations found for them are written into the release's description.
            ``True`` skips the checks (for simulations, not publications) and says so.
        random_state : int, SeedSequence, Generator or None, default=None
            ``None`` draws fresh OS entropy (use this for real releases); an int makes
            the release reproducible, for research only, and issues
            :class:`~privinfer.exceptions.SeedReleaseWarning`: whoever guesses the seed can
            regenerate the coins and learn which rows went out verbatim.
        secure : bool, default=False
            Draw every random number (keep coins, replacements, row order) from the
            operating system's cryptographically secure generator (``os.urandom``)
            instead of numpy's PCG64 stream: for real releases, where the generator's
            state must never be recoverable. Needs ``random_state=None``. See Notes.

        Returns
        -------
        DataFrame
            A new frame with the published columns (private and public) in their raw
            order and dtypes (no ``columns.name``), a fresh ``RangeIndex`` and, by
            default, shuffled rows; categorical private columns carry the public levels.
            A categorical public column keeps only the categories that some released row
            takes (in their order, ``ordered`` kept): a category without rows would tell
            readers about rows removed before the release, and public columns declare no
            levels of their own.
            ``attrs["privinfer_mechanism"]`` holds :meth:`to_dict` and
            ``attrs["privinfer_release"]`` the release's description (column roles,
            row order, overrides). The raw frame's ``attrs`` and ``flags`` are never
            copied (the release starts from pandas' default flags).

        Raises
        ------
        AlreadyReleasedError
            ``data`` already is a privinfer release.
        MechanismMismatchError
            A private column is missing, or a declared public column is private.
        DataMismatchError
            A declared public column is not in the data.
        DerivedColumnError
            A published public column, or a pair of them, determines or nearly determines
            a private column (exact or partial function, monotone transform, polynomial
            or linear reconstruction with adjusted R² ≥ 0.99); see Notes. Not checked at
            ``alpha = 1``, which releases every private value anyway.
        PrivateDtypeError
            A numeric private column has an object, string, complex or mixed dtype.
        MissingValueError
            A private column holds NaN or infinite values.
        OutOfSupportError, UnknownCategoryError
            A private value lies outside the reference support.
        ValueError
            ``secure=True`` together with a ``random_state``.

        Warns
        -----
        UndeclaredColumnWarning
            Columns neither private nor declared public were dropped.
        AtomLeakWarning
            A private column under an atomless reference component has atoms (a decimal
            grid, single-precision values, a spike) that the reference never draws, so
            its kept values show (``alpha < 1``; on Dask, in the eager validation pass).

        Notes
        -----
        The guarantee (TV = alpha) rests on the keep coin alone: a replacement draw does
        not depend on the record, so floating-point artefacts of the reference sampler
        leak nothing about it. With ``secure=True`` the coin compares a 53-bit uniform
        from ``os.urandom`` with alpha, so the keep probability is alpha rounded up to a
        multiple of :math:`2^{-53}`, and the release's TV level exceeds alpha by at most
        :math:`2^{-53}`; the row order is the sort order of 128 random bits per row.
        (Continuous *additive* noise elsewhere in the package — Laplace or Gaussian in
        :mod:`privinfer.transport` — has the usual floating-point caveat; see the user
        guide's randomness page.)

        The guarantee covers the private columns only. A published column that is a
        function of a private one (``agesq`` next to a private ``age``) would reveal it
        in every row, kept or replaced; and a file sorted by a private value would
        reveal it through the row order. Hence the declared columns, the shuffle, and
        the leak checks, which run on the holder's side before anything is released: a
        group of rows sharing a public value (or a pair of values) with a single private
        value far more often than chance allows, :math:`|\rho_S| \ge 0.99` with one
        public column, or an adjusted :math:`R^2 \ge 0.99` when the private column is
        regressed on a cubic in one public column, a quadratic in two or a linear
        function of all numeric public columns; exact step functions (``nodegree = educ
        < 12``) count as monotone. They cannot see every relation (a public ``age``
        next to private ``exper`` and ``educ`` reveals their sum; a noisy threshold
        reveals part of a value), so declare public columns with care.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> import privinfer as pi
        >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
        >>> rng = np.random.default_rng(0)
        >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 50), "y": rng.normal(size=50),
        ...                     "x_squared": np.zeros(50)})
        >>> raw["x_squared"] = raw["x"] ** 2
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     released = mech.privatize(raw, public=["y"], random_state=0)
        >>> list(released.columns), caught[0].category.__name__  # x_squared stayed home
        (['x', 'y'], 'UndeclaredColumnWarning')
        >>> np.allclose(np.sort(released["y"]), np.sort(raw["y"]))
        True
        >>> try:
        ...     mech.privatize(raw, public=["y", "x_squared"])
        ... except pi.exceptions.DerivedColumnError as err:
        ...     print(str(err).splitlines()[1])
          'x_squared' -> 'x': monotone transform (Spearman rho = +1.0000)
        """
        owner = "AlphaIdentity.privatize"
        if type(data).__module__.split(".")[0] == "dask":  # partition-wise, lazy
            from privinfer.mechanisms._dask import privatize_dask

            warn_if_seeded(random_state, owner)

            return privatize_dask(self, data, public=public, publish_undeclared=publish_undeclared,
                                  shuffle=shuffle, allow_derived=allow_derived,
                                  random_state=random_state, secure=secure)  # fmt: skip
        if isinstance(data, pd.DataFrame) and (
            ATTRS_KEY in data.attrs or RELEASE_KEY in data.attrs
        ):
            raise AlreadyReleasedError(
                f"{owner}: these data already are a privinfer release (they carry a mechanism "
                "description). Privatising them again would release data of a different "
                "mechanism than the one recorded; privatise the raw data once."
            )
        self.check_data(data, owner, verify=False)
        if self.alpha < 1.0:
            warn_atom_leaks(self.reference.parts, data, owner)
        for name, flag in (("publish_undeclared", publish_undeclared), ("shuffle", shuffle),
                           ("secure", secure)):
            if not isinstance(flag, bool):
                raise TypeError(f"{owner}: {name} must be a bool; got {flag!r}.")
        public_cols, dropped = self._published_columns(data, public, publish_undeclared, owner)
        exempt = self._exempt_columns(allow_derived, public_cols, owner)
        if self.alpha == 1.0:
            leak_check = "skipped (alpha = 1)"
        elif allow_derived is True:
            leak_check = "skipped (allow_derived=True)"
        else:
            leak_check = "passed" if not exempt else "passed, with overrides"
        overridden = (
            self._leak_check(data, public_cols, exempt, owner)
            if leak_check.startswith("passed")
            else []
        )
        if dropped:
            warnings.warn(
                f"{owner}: {len(dropped)} column(s) neither private nor declared public were "
                f"dropped from the release: {dropped!r}. Declare the ones to publish with "
                "public=[...] (or publish_undeclared=True).",
                UndeclaredColumnWarning,
                stacklevel=2,
            )
        warn_if_seeded(random_state, owner)
        if secure and random_state is not None:
            raise ValueError(
                "AlphaIdentity.privatize: secure=True draws from the OS generator and "
                f"cannot be seeded; got random_state={random_state!r}."
            )
        out = self._draw_release(
            data, public_cols, shuffle=shuffle, random_state=random_state, secure=secure
        )
        out.attrs = self.release_attrs(
            public_cols, dropped, publish_undeclared=publish_undeclared, shuffled=shuffle,
            exempt=exempt, leak_check=leak_check, overridden=overridden, secure=secure,
            n_rows=len(data),
        )  # fmt: skip
        return out

    def _draw_release(
        self,
        data: pd.DataFrame,
        public_cols: Sequence[str],
        *,
        shuffle: bool,
        random_state: RandomStateLike,
        secure: bool,
    ) -> pd.DataFrame:
        """The released rows of validated ``data`` (no ``attrs``): the keep coins, the
        replacement draws, the published columns, the row order.

        Shared by :meth:`privatize` and the partitions of a Dask release, whose checks
        and warnings ran once, for the whole frame, before.
        """
        n = len(data)
        if secure:
            replaced = secure_uniform(n) >= self.alpha
            draws = self.reference.from_unit_draws(
                secure_uniform(int(replaced.sum()) * len(self.reference.parts)).reshape(
                    int(replaced.sum()), len(self.reference.parts)
                )
            )
            order = secure_permutation(n) if shuffle else None
        else:
            rng = check_random_state(random_state)
            replaced = rng.random(n) >= self.alpha
            draws = self.reference.sample(int(replaced.sum()), random_state=rng)
            order = rng.permutation(n) if shuffle else None
        published = [c for c in data.columns if c in self.private_columns or c in public_cols]
        out = data.loc[:, published].copy()
        out.index = pd.RangeIndex(n)
        out.attrs = {}  # the raw frame's attrs stay behind (the caller sets the release's)
        out.columns = out.columns.rename(None)  # the raw frame's columns.name stays behind
        # and so do its flags (allows_duplicate_labels=False would travel with .loc/.copy)
        out = out.set_flags(allows_duplicate_labels=True)
        rows = np.flatnonzero(replaced)
        levels = self.reference.categorical_levels()
        for cols, comp in self.reference.parts:
            if isinstance(comp, Empirical):
                # kept rows go out as the matching sample point: same type and form as
                # a replacement (membership was checked exactly by check_data)
                idx = comp.support_index(data[list(cols)])
                for j, col in enumerate(cols):
                    column = comp.sample_frame.iloc[:, j].to_numpy()[idx]
                    column[rows] = draws[col].to_numpy()
                    out[col] = column
                continue
            for col in cols:
                if col in levels:
                    codes = level_codes(out[col], levels[col], col)
                    codes[rows] = level_codes(draws[col], levels[col], col)
                    out[col] = pd.Categorical.from_codes(codes, categories=levels[col])
                    continue
                original = getattr(out[col].dtype, "numpy_dtype", out[col].dtype)
                column = out[col].to_numpy(dtype=original, copy=True)
                if column.dtype.kind in "iub":
                    column = column.astype(float)
                column[rows] = np.asarray(draws[col].to_numpy(), dtype=column.dtype)
                if original.kind in "iu" and np.all(column == np.round(column)):
                    column = column.astype(original)
                out[col] = column
        # a category of a public column that no row takes would tell of removed rows
        out = drop_unused_categories(out, public_cols)
        if order is not None:
            out = out.take(order)
            out.index = pd.RangeIndex(n)
        return out

    def release_attrs(
        self,
        public_cols: Sequence[str],
        dropped: Sequence[str],
        *,
        publish_undeclared: bool,
        shuffled: bool | str,
        exempt: Any,
        leak_check: str,
        overridden: list[Any],
        secure: bool,
        n_rows: int | None,
        **extra: Any,
    ) -> dict[str, Any]:
        """The ``attrs`` of a release: the mechanism and the release's description.

        The description records the column roles, the dropped columns, the row order,
        the leak checks and their overrides (one implementation for every backend).
        """
        return {
            ATTRS_KEY: self.to_dict(),
            RELEASE_KEY: {
                "private": list(self.private_columns),
                "public": list(public_cols),
                "dropped": list(dropped),
                "publish_undeclared": publish_undeclared,
                "shuffled": shuffled,
                "allow_derived": exempt,
                "leak_check": leak_check,
                "overridden_leaks": overridden,
                "secure": secure,
                "n_rows": n_rows,
                **extra,
            },
        }

    def _published_columns(
        self,
        data: pd.DataFrame,
        public: Sequence[str] | None,
        publish_undeclared: bool,
        owner: str,
    ) -> tuple[list[str], list[str]]:
        """Public columns to publish and undeclared columns to drop, in data order."""
        if public is None:
            declared: list[str] = []
        elif isinstance(public, str) or not isinstance(public, Sequence | pd.Index):
            raise TypeError(
                f"{owner}: public must be a list of column names; got {public!r}."
            )
        else:
            declared = list(public)
        absent = [c for c in declared if c not in data.columns]
        if absent:
            raise DataMismatchError(
                f"{owner}: declared public column(s) {absent!r} are not in the data "
                f"(columns present: {list(data.columns)!r})."
            )
        clash = [c for c in declared if c in self.private_columns]
        if clash:
            raise MechanismMismatchError(
                f"{owner}: column(s) {clash!r} are private (covered by the mechanism) and "
                "cannot also be declared public."
            )
        others = [c for c in data.columns if c not in self.private_columns]
        if publish_undeclared:
            return others, []
        return [c for c in others if c in declared], [str(c) for c in others
                                                       if c not in declared]

    def _leak_check(
        self, data: pd.DataFrame, public_cols: list[str], exempt: list[str], owner: str
    ) -> list[dict[str, Any]]:
        """Raise DerivedColumnError on a leak; return the overridden ones (no values)."""
        if self.alpha == 1.0 or not public_cols:
            return []  # alpha = 1 releases every private value anyway
        leaks = find_leaks(data, self.private_columns, public_cols)
        blocked = [lk for lk in leaks if not set(lk.public) & set(exempt)]
        if blocked:
            cols = sorted({c for lk in blocked for c in lk.public})
            raise DerivedColumnError(
                f"{owner}: published public column(s) reveal private ones, in every row, kept "
                f"or replaced:\n{format_leaks(blocked)}\nDrop these columns, privatise them "
                "(add them to the reference), rebuild them from released values (e.g. "
                "I(x**2) in a formula), or publish them anyway with "
                f"allow_derived={cols!r} (recorded in the release's description)."
            )
        return [
            {"public": list(lk.public), "private": lk.private, "relation": lk.relation}
            for lk in leaks
        ]

    @staticmethod
    def _exempt_columns(
        allow_derived: Sequence[str] | bool | None, public_cols: list[str], owner: str
    ) -> list[str]:
        """Published columns exempted from the leak checks."""
        if allow_derived is None or allow_derived is False:
            return []
        if allow_derived is True:
            return list(public_cols)
        if isinstance(allow_derived, str) or not isinstance(allow_derived, Sequence):
            raise TypeError(
                f"{owner}: allow_derived must be None, True or a list of column names; got "
                f"{allow_derived!r}."
            )
        unknown = [c for c in allow_derived if c not in public_cols]
        if unknown:
            raise DataMismatchError(
                f"{owner}: allow_derived names column(s) {unknown!r} that are not published "
                f"public columns ({public_cols!r})."
            )
        return list(allow_derived)


def secure_permutation(n: int) -> np.ndarray:
    """A uniformly random permutation of ``range(n)`` from ``os.urandom``.

    The rows are sorted by 128 random bits each (two 64-bit keys), so ties, which a
    stable sort would resolve by the raw order, have probability below
    :math:`n^2 2^{-129}`.

    Examples
    --------
    >>> sorted(secure_permutation(5).tolist())
    [0, 1, 2, 3, 4]
    """
    n = int(n)
    keys = np.frombuffer(os.urandom(16 * n), dtype=np.uint64).reshape(2, n)
    return np.lexsort((keys[1], keys[0]))


def secure_uniform(size: int) -> np.ndarray:
    """Uniforms on [0, 1) with 53 random bits each, from ``os.urandom`` (a CSPRNG).

    Examples
    --------
    >>> u = secure_uniform(1000)
    >>> bool(u.min() >= 0 and u.max() < 1)
    True
    """
    raw = np.frombuffer(os.urandom(8 * int(size)), dtype=np.uint64)
    return (raw >> np.uint64(11)).astype(np.float64) * 2.0**-53


#: Most support points of a scipy reference whose pmf :meth:`AlphaIdentity.guarantees`
#: evaluates (categorical and empirical supports are already in memory).
_MAX_PMF_POINTS = 10_000_000


def _component_pmf(comp: Component) -> np.ndarray:
    """Pmf over the distinct support points of one finite reference component."""
    if isinstance(comp, Frozen) and comp.n_support() > _MAX_PMF_POINTS:
        raise DataMismatchError(
            f"AlphaIdentity.guarantees: the reference {comp!r} has {comp.n_support():g} "
            f"support points; its pmf is evaluated for at most {_MAX_PMF_POINTS} of them."
        )
    points, probs = comp.support_points()
    frame = points if isinstance(points, pd.DataFrame) else pd.DataFrame({"value": points})
    return _distinct_pmf(frame, probs)


def _distinct_pmf(frame: pd.DataFrame, weights: np.ndarray) -> np.ndarray:
    """Aggregate the weights of identical rows (an empirical sample may repeat points).

    Rows are identical under the same (Python) equality as the exact support check.
    """
    keys, _ = pd.MultiIndex.from_frame(frame.astype(object)).factorize()
    return np.bincount(keys, weights=np.asarray(weights, dtype=float))
