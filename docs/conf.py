"""Sphinx configuration of the privinfer documentation."""

from __future__ import annotations

import privinfer

project = "privinfer"
author = "privinfer developers"
copyright = "2025, privinfer developers"
version = release = privinfer.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

autosummary_generate = True
autodoc_typehints = "none"
autodoc_default_options = {"inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()



templates_path = ["_templates"]
exclude_patterns = ["_build", "api/generated/*.rst.bak"]
html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"privinfer {release}"
nitpicky = False
