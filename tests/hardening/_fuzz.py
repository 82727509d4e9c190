"""Shared machinery of the hardening fuzz tests.

``PRIVINFER_FUZZ_EXAMPLES`` scales every fuzz test's ``max_examples`` (the default run is
small, so the whole fuzz suite stays under a minute on two cores); ``examples(n)`` returns
the budget of one test. Each executed example is counted per entry point in ``COUNTS``;
``tests/hardening/conftest.py`` prints the table on request (``pytest --fuzz-summary``
or a campaign run).
"""

from __future__ import annotations

import os
import signal
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings

import privinfer
from privinfer.exceptions import PrivinferError, PrivinferWarning

PACKAGE_DIR = Path(privinfer.__file__).resolve().parent
CAMPAIGN = int(os.environ.get("PRIVINFER_FUZZ_EXAMPLES", "0") or 0)
COUNTS: Counter[str] = Counter()
FAILURES: Counter[str] = Counter()  # named (accepted) failures per entry point
#: Seconds one call may take before it counts as a hang.
HANG_SECONDS = 60


def examples(default: int) -> settings:
    """Hypothesis settings: ``default`` examples, or the campaign budget when set."""
    n = max(default, CAMPAIGN) if CAMPAIGN else default
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=not CAMPAIGN,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                               HealthCheck.data_too_large],
        database=None,
    )


class UnexplainedError(AssertionError):
    """A call failed with something other than a named privinfer failure."""


class _Hang(Exception):
    pass


@contextmanager
def _alarm(seconds: int):
    def handler(signum: int, frame: Any) -> None:
        raise _Hang(f"call did not return within {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _raised_in_package(exc: BaseException) -> bool:
    """Whether the innermost Python frame of ``exc`` lies in privinfer's own source."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    return Path(frames[-1].filename).resolve().is_relative_to(PACKAGE_DIR)


def is_named_failure(exc: BaseException) -> bool:
    """A privinfer exception, or a TypeError/ValueError raised by privinfer's validators."""
    if isinstance(exc, PrivinferError):
        return True
    if type(exc) in (TypeError, ValueError) and _raised_in_package(exc):
        return bool(str(exc).strip())
    return False


def call(entry: str, fn: Callable[[], Any]) -> tuple[Any, list[warnings.WarningMessage]]:
    """Run ``fn``; a named failure returns ``(None, ws)``, anything else raises.

    Warnings other than :class:`PrivinferWarning` subclasses are failures too (a numpy
    ``RuntimeWarning`` means an overflow or a division by zero reached the user).
    """
    COUNTS[entry] += 1
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            with _alarm(HANG_SECONDS):
                out = fn()
        except _Hang as exc:
            raise UnexplainedError(f"{entry}: hang ({exc})") from exc
        except Exception as exc:
            if is_named_failure(exc):
                FAILURES[entry] += 1
                if os.environ.get("PRIVINFER_FUZZ_DEBUG") == entry:
                    print(f"{entry}: {type(exc).__name__}: {exc}")
                out = None
            else:
                raise UnexplainedError(
                    f"{entry}: unexplained {type(exc).__name__}: {exc}"
                ) from exc
    bad = [w for w in ws if not issubclass(w.category, PrivinferWarning)
           and not issubclass(w.category, DeprecationWarning | PendingDeprecationWarning)]
    if bad:
        w = bad[0]
        raise UnexplainedError(
            f"{entry}: unnamed warning {w.category.__name__}: {w.message} "
            f"({w.filename}:{w.lineno})"
        )
    return out, ws


def assert_finite(entry: str, *values: Any) -> None:
    """No silent NaN: every float in ``values`` is finite (inf allowed only if told)."""
    for v in values:
        arr = np.asarray(v, dtype=float)
        if np.any(np.isnan(arr)):
            raise UnexplainedError(f"{entry}: silent NaN in a result: {v!r}")
