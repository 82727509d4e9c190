"""privinfer: statistical inference on data released through local privacy mechanisms."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
