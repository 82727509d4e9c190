"""Differentially private optimal transport and private synthetic measures (extra)."""

__all__: list[str] = []
