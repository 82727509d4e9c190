"""User-facing text never points at files outside the repository.

Docstrings, summaries, docs, vignettes and the README cite papers by author and year
(docs/references.rst), not by the file names of a private working folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATTERN = re.compile(r"seed 00[0-3]|shared/seeds|\.\./shared|DESIGN\.md", re.IGNORECASE)
SUFFIXES = {".py", ".rst", ".md", ".txt", ".toml", ".cfg", ".ipynb"}


def _files():
    for top in ("privinfer", "docs", "vignettes"):
        for path in sorted((ROOT / top).rglob("*")):
            skip = {"_build", "generated"} & set(path.parts)  # build outputs
            if path.is_file() and path.suffix in SUFFIXES and not skip:
                yield path
    yield ROOT / "README.md"


@pytest.mark.parametrize("path", list(_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_to_files_outside_the_repository(path):
    hits = [
        f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PATTERN.search(line)
    ]
    assert not hits, "cite by author and year (docs/references.rst):\n" + "\n".join(hits)
