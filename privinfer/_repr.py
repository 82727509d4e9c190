"""One-line reprs for the package's dataclasses that hold arrays and tables.

A dataclass's own repr prints every field in full: the ``(n_boot, p)`` draws of a
bootstrap or the table of a plan run to hundreds of lines. :func:`short_repr` shows such
fields by their type and shape and keeps the short ones, so the repr is one line, as the
results' own (``<PrivateMean results: mean=0.5>``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sized
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["short_repr"]

#: A field whose repr is longer than this (or has several lines) is shown by its shape.
_MAX_FIELD = 80


def _short(value: Any) -> str:
    """``value`` in a few characters: floats to 4 digits, long values by type and size."""
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    text = repr(value)
    if "\n" not in text and len(text) <= _MAX_FIELD:
        return text
    name = type(value).__name__
    if isinstance(value, np.ndarray | pd.DataFrame | pd.Series):
        return f"<{name} {'x'.join(str(k) for k in value.shape)}>"
    if isinstance(value, Sized):
        return f"<{name} of {len(value)}>"
    return f"<{name}>"


def short_repr(obj: Any) -> str:
    """``Name(field=value, ...)`` of a dataclass on one line; long fields by their shape.

    Assign it as the class's ``__repr__`` (the dataclass decorator keeps it). Every field
    shown by the dataclass repr is listed; arrays, tables and other values whose repr is
    longer than 80 characters are named by type and shape (or length).

    Examples
    --------
    >>> @dataclasses.dataclass
    ... class Draws:
    ...     method: str
    ...     t_stats: np.ndarray
    ...     level: float
    ...     __repr__ = short_repr
    >>> Draws("normal", np.zeros((200, 3)), 0.1234567)
    Draws(method='normal', t_stats=<ndarray 200x3>, level=0.1235)
    """
    shown = (f for f in dataclasses.fields(obj) if f.repr)
    body = ", ".join(f"{f.name}={_short(getattr(obj, f.name))}" for f in shown)
    return f"{type(obj).__name__}({body})"
