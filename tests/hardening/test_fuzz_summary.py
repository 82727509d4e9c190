"""The fuzz table stays out of a normal run and is worded as expected rejections."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _pytest(*extra: str) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PRIVINFER_FUZZ_EXAMPLES", "PRIVINFER_FUZZ_REPORT")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
         str(HERE / "test_fuzz_pml.py"), "-k", "eta_tv", *extra],
        capture_output=True, text=True, timeout=300, cwd=HERE.parents[1], env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.slow
def test_fuzz_table_is_silent_by_default():
    out = _pytest()
    assert "fuzz" not in out.lower()
    assert "failures" not in out.lower()


@pytest.mark.slow
def test_fuzz_table_on_request_says_rejections_are_expected():
    out = _pytest("--fuzz-summary")
    assert "privinfer fuzz inputs" in out
    assert "rejected as designed" in out
    assert "named failures" not in out
