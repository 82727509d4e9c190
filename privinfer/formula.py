r"""Formula parsing with formulaic, and the roles of columns (outcome, treatment, covariates).

``"y ~ d | x1 + x2 + C(g)"`` uses formulaic's own multipart ``|``: the outcome on the
left, the treatment in the first right-hand part and the covariates in the second. A
column is *private* because the mechanism's reference covers it, not because of where it
sits in the formula.

One formulaic ``ModelSpec`` is built on the released data and then materialises both the
released covariate design and the reference (quasi-Monte Carlo) design, so that both have
identical columns, levels and stateful-transform state (``center()``, splines).
Every covariate term must be a function of private variables only or of public variables
only: reference expectations are then separable (see the inversion user guide). Interactions between
private and public covariates come from the series basis, not from formula terms.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import formulaic
import numpy as np
import pandas as pd

from privinfer._typing import FloatArray
from privinfer._validation import plain_text
from privinfer.exceptions import (
    DataMismatchError,
    MechanismMismatchError,
    MissingValueError,
    NonSeparableTermError,
)
from privinfer.mechanisms._levels import as_levels
from privinfer.mechanisms.alpha_identity import AlphaIdentity

__all__ = ["CovariateSpec", "TreatmentFormula", "build_covariate_spec", "parse_treatment_formula"]


def _term_vars(term_variables: set[Any], columns: set[str]) -> set[str]:
    """Variables of a term that are data columns (drops function names like ``C``)."""
    return {str(v) for v in term_variables if str(v) in columns}


#: Names formulaic resolves itself (transforms), not data columns.
_FORMULA_NAMES = {
    "C",
    "I",
    "center",
    "scale",
    "bs",
    "cr",
    "cc",
    "poly",
    "log",
    "exp",
    "np",
    "lag",
    "hashed",
    "contr",
    "standardize",
}


def cast_private_categoricals(data: pd.DataFrame, mechanism: AlphaIdentity) -> pd.DataFrame:
    """Cast private categorical columns to the mechanism's public levels (a copy).

    Formulaic then codes every public level, even one absent from the data. Unknown
    categories were rejected earlier by :meth:`AlphaIdentity.check_data`.
    """
    out = data.copy(deep=False)  # the cast columns are replaced, never written into
    for col, levels in mechanism.reference.categorical_levels().items():
        if col in out.columns:
            out[col] = as_levels(out[col], levels, col)
    return out


@dataclass(frozen=True)
class CovariateSpec:
    """The covariate part of a model formula, split by privacy role.

    Attributes
    ----------
    formula : str
        The covariate formula as written.
    private_spec, public_spec : formulaic ModelSpec or None
        Specs materialising the private and the public covariate columns (no intercept).
    private_names, public_names : tuple of str
        Column names of the two designs.
    private_groups, public_groups : tuple of int
        Group label of each column: columns of one categorical term share a label (their
        products vanish); every other column has its own.
    private_variables, public_variables : tuple of str
        The raw data columns each part uses.
    """

    formula: str
    private_spec: Any
    public_spec: Any
    private_names: tuple[str, ...]
    public_names: tuple[str, ...]
    private_groups: tuple[int, ...]
    public_groups: tuple[int, ...]
    private_variables: tuple[str, ...]
    public_variables: tuple[str, ...]
    categorical_terms: tuple[str, ...] = field(default=())

    @property
    def variables(self) -> tuple[str, ...]:
        """All raw columns the covariates use."""
        return self.private_variables + self.public_variables

    def private_design(self, frame: pd.DataFrame, reference: bool = False) -> FloatArray:
        """Private covariate columns evaluated on ``frame`` (released or reference).

        ``reference=True`` (the reference's draws, in the caller's thread) refuses terms
        whose state formulaic learned from the released rows (:func:`_private_matrix`).
        The released rows are evaluated without that check: their partitions may be
        evaluated in worker threads, where catching warnings would swallow other
        threads' warnings (``warnings.catch_warnings`` is not thread-safe).
        """
        if self.private_spec is None:
            return np.zeros((len(frame), 0))
        plain = _plain_columns(frame, self.private_names, self.private_variables)
        if plain is not None:
            return plain
        columns = frame[list(self.private_variables)]
        if reference:
            return _to_float(_private_matrix(self.private_spec, columns))
        return _to_float(self.private_spec.get_model_matrix(columns))

    def public_design(self, frame: pd.DataFrame) -> FloatArray:
        """Public covariate columns evaluated on ``frame``."""
        if self.public_spec is None:
            return np.zeros((len(frame), 0))
        plain = _plain_columns(frame, self.public_names, self.public_variables)
        if plain is not None:
            return plain
        return _to_float(self.public_spec.get_model_matrix(frame[list(self.public_variables)]))


def _plain_columns(
    frame: pd.DataFrame, names: tuple[str, ...], variables: tuple[str, ...]
) -> FloatArray | None:
    """The design itself when every column is a bare numeric variable, else None.

    Formulaic passes such columns through unchanged, so reading them directly gives the
    same matrix without its per-call overhead (a third of a pass over many rows). Missing
    values return None: formulaic then reports them.
    """
    if not names or not set(names) <= set(variables) or not set(names) <= set(frame.columns):
        return None
    cols = [frame[c] for c in names]
    if any(
        not pd.api.types.is_numeric_dtype(c.dtype) or pd.api.types.is_bool_dtype(c.dtype)
        for c in cols
    ):
        return None
    out = np.column_stack([c.to_numpy(dtype=float) for c in cols])
    return None if np.isnan(out).any() else out


def _private_matrix(spec: Any, frame: pd.DataFrame) -> Any:
    """The private terms' model matrix on ``frame``, refusing what would be coded wrong.

    The private design is evaluated on the released rows and on draws of the reference.
    A term whose state formulaic learned from the released rows (the levels of ``C(x)``,
    the knots of ``bs(x)``) does not describe the reference draws unless the reference
    is a :class:`~privinfer.reference.Categorical` over public levels: formulaic would
    code a draw outside the learned levels as a row of zeros (with only a warning),
    which silently removes the adjustment, or stop at a draw outside the learned knots.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", formulaic.errors.DataMismatchWarning)
        try:
            mm = spec.get_model_matrix(frame)
        except Exception as err:  # formulaic raises several types
            raise DataMismatchError(
                f"cannot evaluate the private covariate terms {_spec_terms(spec)} at the "
                f"reference's draws: {err}. A transform that learns its state from the "
                "released data (bs(), cr(), scale(), center()) cannot be evaluated at the "
                "reference; enter the private column as it is (the series basis of the "
                "nuisance fits adapts to it) or transform it before privatising, with a "
                "reference on the transformed scale."
            ) from err
    unseen = [w for w in caught if issubclass(w.category, formulaic.errors.DataMismatchWarning)]
    for w in caught:
        if w not in unseen:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if unseen:
        raise DataMismatchError(
            f"the private covariate terms {_spec_terms(spec)} code a private column as "
            "categories learned from the released data, but the reference takes values "
            f"outside them ({str(unseen[0].message)[:160]}...). A private column used as a "
            "factor (C(x)) needs a Categorical reference over all its public levels "
            "(pi.reference.Categorical); a continuous one enters the formula as it is."
        )
    return mm


def _spec_terms(spec: Any) -> str:
    return repr([str(t) for t in spec.terms if str(t) != "1"])


def _to_float(mm: Any) -> FloatArray:
    arr = np.asarray(mm, dtype=float)
    return np.ascontiguousarray(arr)


def build_covariate_spec(
    formula: str, data: pd.DataFrame, mechanism: AlphaIdentity, owner: str
) -> CovariateSpec:
    """Build the covariate spec on the released ``data`` (categoricals already cast).

    Raises
    ------
    NonSeparableTermError
        A term mixes private and public variables.
    DataMismatchError
        A variable is not a column of ``data`` or the formula cannot be materialised.
    """
    private = set(mechanism.private_columns)
    spec = _covariate_model_spec(formula, data, mechanism, owner)
    priv_terms, pub_terms, cat_terms, priv_vars, pub_vars = _split_terms(
        spec, formula, data, private, owner
    )
    ps, pn, pg = _sub_spec(spec, priv_terms, cat_terms)
    qs, qn, qg = _sub_spec(spec, pub_terms, cat_terms)
    return CovariateSpec(
        formula=formula,
        private_spec=ps,
        public_spec=qs,
        private_names=pn,
        public_names=qn,
        private_groups=pg,
        public_groups=tuple(g + len(pg) + 1 for g in qg),
        private_variables=tuple(priv_vars),
        public_variables=tuple(pub_vars),
        categorical_terms=tuple(cat_terms),
    )


def _covariate_model_spec(
    formula: str, data: pd.DataFrame, mechanism: AlphaIdentity, owner: str
) -> Any:
    """Formulaic model spec of the covariates, after checking the columns they use."""
    private = set(mechanism.private_columns)
    columns = {str(c) for c in data.columns}
    try:
        needed = {str(v) for v in formulaic.Formula(formula).required_variables}
    except Exception as err:
        raise DataMismatchError(
            f"{owner}: cannot parse covariates {formula!r}: {plain_text(err)}"
        ) from err
    missing = sorted(needed - columns - _FORMULA_NAMES)
    if missing:
        raise DataMismatchError(
            f"{owner}: covariate formula {formula!r} uses {missing!r}, which are not columns of "
            f"the data (columns: {sorted(columns)!r})."
        )
    check_public_columns(data, sorted(needed & columns - private), mechanism, {}, owner)
    try:
        mm = formulaic.model_matrix(formula, data, na_action="raise")
    except Exception as err:  # formulaic raises several types; re-raise as ours
        raise DataMismatchError(
            f"{owner}: cannot build the covariate design {formula!r}: {err}"
        ) from err
    return mm.model_spec


def _split_terms(
    spec: Any, formula: str, data: pd.DataFrame, private: set[str], owner: str
) -> tuple[list[Any], list[Any], list[str], list[str], list[str]]:
    """Private terms, public terms, categorical terms, private and public variables.

    The private and public terms are formulaic's term objects: their text loses the
    quoting of ``{...}`` and backtick terms, so a spec subset by text would read
    ``{x**2}`` as ``x``.
    """
    columns = {str(c) for c in data.columns}
    priv_terms, pub_terms, cat_terms = [], [], []
    priv_vars: list[str] = []
    pub_vars: list[str] = []
    for term, tvars in spec.term_variables.items():
        used = _term_vars(tvars, columns)
        if str(term) == "1":
            continue
        if not used:
            raise DataMismatchError(
                f"{owner}: term {str(term)!r} of {formula!r} uses no data column."
            )
        if used <= private:
            priv_terms.append(term)
            priv_vars += [v for v in sorted(used) if v not in priv_vars]
        elif not used & private:
            pub_terms.append(term)
            pub_vars += [v for v in sorted(used) if v not in pub_vars]
        else:
            raise NonSeparableTermError(
                f"{owner}: term {str(term)!r} in {formula!r} mixes private variables "
                f"{sorted(used & private)!r} with public ones {sorted(used - private)!r}. "
                "Reference "
                "expectations must be separable: list the variables as separate terms; the series "
                "basis adds their interactions."
            )
        sl = spec.term_slices[term]
        if sl.stop - sl.start > 1 or any(
            isinstance(data[v].dtype, pd.CategoricalDtype) or data[v].dtype == object for v in used
        ):
            cat_terms.append(str(term))
    return priv_terms, pub_terms, cat_terms, priv_vars, pub_vars


def _sub_spec(
    spec: Any, terms: list[Any], cat_terms: list[str]
) -> tuple[Any, tuple[str, ...], tuple[int, ...]]:
    """Sub-spec of ``terms``, its column names and column groups.

    A categorical term of several columns is one group; every other column is its own.
    """
    if not terms:
        return None, (), ()
    s = spec.subset(terms)
    names: list[str] = []
    groups: list[int] = []
    gid = 0
    for term in s.terms:
        width = s.term_slices[term].stop - s.term_slices[term].start
        cols = list(s.column_names[s.term_slices[term]])
        if str(term) in cat_terms and width > 1:
            names += cols
            groups += [gid] * width
            gid += 1
        else:
            for c in cols:
                names.append(c)
                groups.append(gid)
                gid += 1
    return s, tuple(names), tuple(groups)


@dataclass(frozen=True)
class TreatmentFormula:
    """Parsed ``"y ~ d | covariates"``.

    Attributes
    ----------
    formula : str
        As written by the user.
    outcome, treatment : str
        Names of the (public) outcome and treatment columns.
    covariates : str
        The covariate part, a formulaic right-hand side.
    """

    formula: str
    outcome: str
    treatment: str
    covariates: str

    def __post_init__(self) -> None:
        if self.outcome == self.treatment:
            raise DataMismatchError(
                f"In {self.formula!r} the outcome and the treatment are the same column."
            )


def _is_one_call(expr: str) -> bool:
    """Whether ``expr`` is a single call ``name(...)`` whose parenthesis closes at its end."""
    head = re.match(r"[A-Za-z_][A-Za-z0-9_.]*\(", expr)
    if head is None or not expr.endswith(")"):
        return False
    depth = 0
    for i, ch in enumerate(expr[head.end() - 1 :], start=head.end() - 1):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i == len(expr) - 1
    return False


def _factor_text(factor: Any) -> str:
    """Formula text of one formulaic factor that parses back to the same factor.

    ``str(factor)`` drops the quoting: a Python expression written ``{x**2}`` prints as
    ``x ** 2`` (which re-parses as the term power of ``x``, i.e. ``x``), and a column name
    written with backticks prints bare. Calls such as ``C(g)`` or ``np.log(x)`` are kept
    as written.
    """
    expr = str(factor.expr)
    method = getattr(factor.eval_method, "value", factor.eval_method)
    if method == "lookup":
        return expr if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", expr) else f"`{expr}`"
    if method == "python" and not _is_one_call(expr):
        return "{" + expr + "}"
    return expr


def term_text(term: Any) -> str:
    """Formula text of one formulaic term (its factors joined by ``:``)."""
    return ":".join(_factor_text(f) for f in term.factors)


def parse_treatment_formula(formula: str, owner: str) -> TreatmentFormula:
    """Parse ``"y ~ d | x1 + x2"`` with formulaic's multipart ``|``.

    The treatment is a single column, always treated as categorical; ``C(d)`` is
    accepted for it and means ``d``.

    Raises
    ------
    DataMismatchError
        The formula does not have one outcome, one treatment and a covariate part.
    """
    if not isinstance(formula, str):
        raise DataMismatchError(f"{owner}: formula must be a string; got {type(formula).__name__}.")
    try:
        f = formulaic.Formula(formula)
    except Exception as err:
        raise DataMismatchError(
            f"{owner}: cannot parse formula {formula!r}: {plain_text(err)}"
        ) from err
    rhs = getattr(f, "rhs", None)
    if not isinstance(rhs, tuple) or len(rhs) != 2:
        raise DataMismatchError(
            f"{owner}: formula {formula!r} must read 'outcome ~ treatment | covariates', e.g. "
            "'y ~ d | x1 + x2 + C(g)'."
        )

    def single(part: Any, what: str) -> str:
        terms = [t for t in part if str(t) != "1"]
        if len(terms) != 1 or len(terms[0].factors) != 1:
            raise DataMismatchError(
                f"{owner}: the {what} in {formula!r} must be a single column; got "
                f"{[str(t) for t in terms]!r}."
            )
        expr = str(terms[0].factors[0].expr)
        # statsmodels' quoting of a name, Q("out come"), means the column itself
        quoted = re.fullmatch(r"""Q\(\s*(['"])(.*)\1\s*\)""", expr)
        return quoted.group(2) if quoted else expr

    outcome = single(f.lhs, "outcome")
    treatment = single(rhs[0], "treatment")
    # the treatment is always categorical: accept statsmodels' C(d) for it
    wrapped = re.fullmatch(r"C\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)", treatment)
    if wrapped:
        treatment = wrapped.group(1)
    cov_terms = [term_text(t) for t in rhs[1] if str(t) != "1"]
    if not cov_terms:
        raise DataMismatchError(f"{owner}: formula {formula!r} has no covariates after '|'.")
    return TreatmentFormula(formula, outcome, treatment, " + ".join(cov_terms))


def check_public_columns(
    data: pd.DataFrame,
    columns: list[str],
    mechanism: AlphaIdentity,
    roles: dict[str, str],
    owner: str,
) -> None:
    """Check that model columns exist, are public where required and hold no NaN."""
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise DataMismatchError(
            f"{owner}: column(s) {missing!r} are not in the data (columns: {list(data.columns)!r})."
        )
    for col, role in roles.items():
        if col in mechanism.private_columns:
            raise MechanismMismatchError(
                f"{owner}: the {role} {col!r} is covered by the mechanism, but the {role} must be "
                "public (V in Kormos and van der Vaart, 2026). Only covariates after '|' may be "
                "private."
            )
    for col in columns:
        s = data[col]
        if s.isna().any():
            raise MissingValueError(
                f"{owner}: column {col!r} holds {int(s.isna().sum())} missing value(s); privinfer "
                "never drops rows silently. Drop or impute them first."
            )
        numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
        if numeric and not np.all(np.isfinite(s.to_numpy(dtype=float))):
            raise MissingValueError(f"{owner}: column {col!r} holds infinite values.")
