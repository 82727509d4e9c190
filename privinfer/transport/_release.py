"""Small helpers shared by the transport releases: seed warnings and compact displays."""

from __future__ import annotations

from privinfer._validation import warn_if_seeded

__all__ = ["SummaryText", "shape_text", "warn_if_seeded"]


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
