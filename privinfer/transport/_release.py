"""Small helpers shared by the transport releases: seed warnings and compact displays."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np

from privinfer.exceptions import SeedReleaseWarning

__all__ = ["SummaryText", "shape_text", "warn_if_seeded"]


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
            f"{owner}: the release is made from a reproducible seed "
            f"(random_state={random_state!r}). Anyone who guesses the seed can regenerate "
            "the published randomness, replay the noise and recover the private values "
            "exactly. Use random_state=None (fresh OS entropy) for real releases; seeds "
            "are for research and tests.",
            SeedReleaseWarning,
            stacklevel=stacklevel,
        )


class SummaryText(str):
    """A string that displays as itself (no quotes, real line breaks) at the prompt.

    ``summary()`` methods return it: they never print, and ``str(summary)`` is the text.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def shape_text(arr: object) -> str:
    """``'array(60, 2)'``-style description of an array, without its values."""
    shape = getattr(arr, "shape", None)
    if shape is None:
        return type(arr).__name__
    return "array(" + ", ".join(str(s) for s in shape) + ")"
