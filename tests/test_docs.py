"""The documentation builds warning-free (-W) and the docstring examples run."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.extended  # a minute of the default run; CI runs the extended tier too
def test_sphinx_build_is_warning_free(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    assert (tmp_path / "html" / "api.html").exists()
    refs = (tmp_path / "html" / "references.html").read_text(encoding="utf-8")
    for paper in ("Private rate-double-robust inference",
                  "Contraction and statistical inference under privacy",
                  "Intrinsic-dimensional Wasserstein guarantees",
                  "Differentially private optimal transport"):
        assert paper in refs, paper


@pytest.mark.slow
def test_docstring_examples_run(tmp_path):
    """Every example runs, and with its seeds: an unseeded draw fails (``_seeded_doctests``)."""
    pytest.importorskip("matplotlib")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--doctest-modules", "-q", "-n", "0",
         "-p", "no:cacheprovider", "-p", "_seeded_doctests",
         "--rootdir", str(ROOT), str(ROOT / "privinfer")],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "MPLBACKEND": "Agg",
             "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])},
    )
    assert proc.returncode == 0, proc.stdout[-6000:]
