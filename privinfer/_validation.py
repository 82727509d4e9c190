"""Validation helpers used at the public boundary.

Every message names the parameter, its owner, the allowed values and what was received.
"""

from __future__ import annotations

import copy
import math
import os
import re
import sys
import warnings
from numbers import Integral, Real

import numpy as np

from privinfer._typing import RandomStateLike
from privinfer.exceptions import MissingValueError, SeedReleaseWarning

__all__ = [
    "check_alpha",
    "check_in_interval",
    "check_int",
    "check_level",
    "check_no_nan",
    "check_random_state",
    "plain_text",
    "spawn_generators",
    "user_stacklevel",
    "warn_if_seeded",
]


def check_random_state(random_state: RandomStateLike) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    ``None`` means fresh entropy from the operating system, never numpy's global state:
    privacy noise must not be predictable. An int or a SeedSequence gives reproducible
    draws (for research only); a Generator is used as it is.

    Raises
    ------
    TypeError
        For a bool, a legacy ``RandomState`` or anything else.
    ValueError
        For a negative int (numpy seeds must be non-negative).
    """
    if isinstance(random_state, bool | np.random.RandomState):
        raise TypeError(
            "random_state must be None, an int, a SeedSequence or a Generator; "
            f"got {type(random_state).__name__}."
        )
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, Integral) and random_state < 0:
        raise ValueError(
            "random_state must be None, a non-negative int, a SeedSequence or a Generator; "
            f"got the negative int {int(random_state)!r}."
        )
    if random_state is None or isinstance(random_state, Integral | np.random.SeedSequence):
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a SeedSequence or a Generator; "
        f"got {type(random_state).__name__}."
    )


def spawn_generators(random_state: RandomStateLike, n: int) -> list[np.random.Generator]:
    """Independent child generators of ``random_state`` (``SeedSequence.spawn``).

    Adding a child leaves the earlier ones unchanged, so an extra repetition of a
    cross-fitting split does not alter the others. A ``SeedSequence`` is a seed: its
    children are spawned from a copy, so passing the same one twice gives the same
    generators (``SeedSequence.spawn`` would otherwise advance the caller's object). A
    ``Generator`` is a stream: each call spawns the next children of its seed sequence,
    as ``Generator.spawn`` does.

    Examples
    --------
    >>> ss = np.random.SeedSequence(7)
    >>> a, b = spawn_generators(ss, 1)[0], spawn_generators(ss, 1)[0]
    >>> bool(a.random() == b.random())
    True
    """
    if isinstance(random_state, np.random.SeedSequence):
        random_state = copy.deepcopy(random_state)
    rng = check_random_state(random_state)
    return [np.random.default_rng(s) for s in rng.bit_generator.seed_seq.spawn(n)]


def check_alpha(alpha: object, owner: str) -> float:
    """Validate a keep probability ``alpha`` in (0, 1]."""
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0.0 < float(alpha) <= 1.0:
        raise ValueError(
            f"The 'alpha' parameter of {owner} must be a float in (0, 1]. Got {alpha!r} instead."
        )
    return float(alpha)


def check_in_interval(
    value: object,
    name: str,
    owner: str,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Validate a real number in an interval; the bounds' openness is configurable.

    Only finite values are accepted, so an infinite bound is always shown open in the
    message (``(0.0, inf)``), whatever ``low_open`` or ``high_open`` say.
    """
    lb = "(" if low_open or math.isinf(low) else "["
    rb = ")" if high_open or math.isinf(high) else "]"
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(float(value)):
        raise ValueError(
            f"The {name!r} parameter of {owner} must be a finite real number in "
            f"{lb}{low}, {high}{rb}. Got {value!r} instead."
        )
    v = float(value)
    bad_low = v <= low if low_open else v < low
    bad_high = v >= high if high_open else v > high
    if bad_low or bad_high:
        raise ValueError(
            f"The {name!r} parameter of {owner} must lie in {lb}{low}, {high}{rb}. "
            f"Got {value!r} instead."
        )
    return v


def check_level(alpha: object, owner: str) -> float:
    r"""Validate a significance level :math:`a \in (0, 1)` (not a keep probability).

    The intervals it sets cover with probability :math:`1 - a`. ``owner`` is the method
    the user called (``"PrivateResults.summary"``): a method that forwards ``alpha`` to
    another checks it under its own name first, so the message names what was called.

    Examples
    --------
    >>> check_level(0.1, "PrivateResults.summary")
    0.1
    >>> check_level(1.5, "summary")
    Traceback (most recent call last):
    ...
    ValueError: The 'alpha' parameter of summary must lie in (0.0, 1.0). Got 1.5 instead.
    """
    return check_in_interval(alpha, "alpha", owner, 0.0, 1.0, low_open=True, high_open=True)


def check_int(value: object, name: str, owner: str, minimum: int) -> int:
    """Validate an integer ``>= minimum`` (a bool is not an integer)."""
    if isinstance(value, bool) or not isinstance(value, Integral) or int(value) < minimum:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be an integer >= {minimum}. "
            f"Got {value!r} instead."
        )
    return int(value)


def check_no_nan(values: np.ndarray, name: str, owner: str) -> None:
    """Raise :class:`MissingValueError` if ``values`` holds NaN or infinite entries."""
    arr = np.asarray(values)
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        bad = int(np.sum(~np.isfinite(arr)))
        raise MissingValueError(
            f"{owner}: column {name!r} holds {bad} NaN or infinite value(s). Drop or impute "
            "them before privatisation/estimation; privinfer never drops rows silently."
        )


#: ANSI terminal escape sequences (colours, cursor moves).
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def plain_text(err: BaseException | str) -> str:
    r"""The message of ``err`` without terminal escape codes, to quote in an error message.

    formulaic marks the offending part of a formula or a restriction in bold red
    (``"\x1b[1;31m...\x1b[0m"``), which shows up as garbage in logs and notebooks. The
    escape codes are removed; the plain markers around that part stay.

    Examples
    --------
    >>> plain_text("a \x1b[1;31m+\x1b[0m b")
    'a + b'
    >>> plain_text(KeyError("zz"))
    "'zz'"
    """
    return _ANSI_ESCAPE.sub("", str(err))


def warn_if_seeded(random_state: object, owner: str, *, stacklevel: int = 3) -> None:
    """Issue :class:`SeedReleaseWarning` when a release is made from a guessable seed.

    An int or a ``SeedSequence`` determines every draw of the release; published
    randomness (a projection, a shift) lets an attacker test candidate seeds and then
    replay the noise. A ``Generator`` is not checked (its seed is not visible here).
    """
    if isinstance(random_state, bool):
        return
    if isinstance(random_state, Integral | np.random.SeedSequence):
        warnings.warn(
            f"{owner}: the release is made from a reproducible seed (an int or a "
            "SeedSequence random_state). Anyone who guesses the seed can regenerate "
            "the published randomness, replay the noise and recover the private values "
            "exactly. Use random_state=None (fresh OS entropy) for real releases; seeds "
            "are for research and tests.",
            SeedReleaseWarning,
            stacklevel=stacklevel,
        )


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside privinfer.

    Call it from the function that issues the warning: the count starts there, and frames
    in privinfer's own modules are skipped however deep the call chain is.
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level

