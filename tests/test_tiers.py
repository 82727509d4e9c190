"""The two tiers of the suite (``tests/conftest.py``): the default run skips the tests
marked ``extended`` and says how to run them; ``--extended`` or ``PRIVINFER_EXTENDED=1``
runs them."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: an extended test that is quick to collect (it is never run here)
ONE = "tests/test_trimming.py::test_trimmed_fits_cover_the_trimmed_effects_of_several_levels"
#: the files that hold the extended tests
FILES = (
    "tests/test_vignettes.py",
    "tests/models/test_validation_small.py",
    "tests/models/test_ate.py",
    "tests/models/test_inference_extras.py",
    "tests/test_trimming.py",
    "tests/models/test_foldboot.py",
    "tests/test_docs.py",
)


def _pytest(*args: str, extended_env: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PRIVINFER_EXTENDED"}
    if extended_env is not None:
        env["PRIVINFER_EXTENDED"] = extended_env
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", *args],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip


def test_default_run_skips_an_extended_test_and_names_the_switch():
    # --setup-plan applies the skip marks without running anything
    proc = _pytest("-q", "-rs", "--setup-plan", ONE, extended_env="0")  # "0" counts as unset
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "1 skipped" in proc.stdout
    assert "extended tier: run with python -m pytest --extended" in proc.stdout


def test_the_switch_and_the_variable_select_the_extended_tier():
    proc = _pytest("-q", "--collect-only", "-m", "extended", "--extended", *FILES)
    assert proc.returncode == 0, proc.stdout[-3000:]
    ids = [ln for ln in proc.stdout.splitlines() if "::" in ln]
    assert ONE in ids
    # the seven validation cells moved out of the default run, six other Monte Carlo
    # studies (heterogeneous ATT, weighted, clustered, trimmed with two and three levels,
    # the bootstrap SE against the Monte Carlo spread), the two longest vignettes and the
    # warning-free Sphinx build of the docs
    cells = [i for i in ids if "test_validation_cell_within_bands" in i]
    assert len(cells) == 7, cells
    assert len([i for i in ids if "test_vignette_runs" in i]) == 2, ids
    assert len(ids) == 16, ids
    assert "tests/test_docs.py::test_sphinx_build_is_warning_free" in ids
    # the variable does what the switch does: the extended test is planned, not skipped
    proc = _pytest("-q", "-rs", "--setup-plan", ONE, extended_env="1")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert ONE in proc.stdout and "skipped" not in proc.stdout, proc.stdout[-3000:]
