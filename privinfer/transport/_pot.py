"""Lazy access to POT (Python Optimal Transport), the optional ``transport`` extra."""

from __future__ import annotations

from types import ModuleType

__all__ = ["import_ot"]


def import_ot() -> ModuleType:
    """Import and return the ``ot`` module, or explain how to install it.

    Raises
    ------
    ImportError
        If POT is missing; the message names ``pip install privinfer[transport]``.
    """
    try:
        import ot
    except ImportError as err:  # pragma: no cover - exercised with a monkeypatched import
        raise ImportError(
            "privinfer.transport needs POT (Python Optimal Transport). Install it with "
            "`pip install privinfer[transport]`."
        ) from err
    return ot
