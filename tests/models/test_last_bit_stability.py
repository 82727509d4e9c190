"""Last-bit stability of the treatment-effect estimators' discrete choices.

OpenBLAS picks its kernels by CPU, so the same code differs in the last bits across
machines. A discrete choice taken at a near-tie (a private CV minimum over sieve
candidates, ridges or bandwidths, a median over splits, an argmin) could then flip and move
the published numbers by far more than round-off. Every snapshot case is refitted with its
outcome, continuous covariates and weights perturbed at round-off level (relative 1e-13);
``params`` and ``bse`` must stay equal, to a relative 1e-7, to the unperturbed fit stored in
``snapshots/treatment_snapshot.json`` (which ``test_snapshot_treatment.py`` checks to 1e-9):
round-off alone moves them by ~1e-13, a flipped choice by ~1e-3 or more.
"""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent / "snapshots"
_spec = importlib.util.spec_from_file_location("treatment_cases", HERE / "treatment_cases.py")
cases = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("treatment_cases", cases)
_spec.loader.exec_module(cases)

SNAPSHOT = json.loads((HERE / "treatment_snapshot.json").read_text())
PERTURB = 1e-13
RTOL = 1e-7


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_last_bit_stability(name):
    got, want = cases.run_case(name, perturb=PERTURB), SNAPSHOT[name]
    assert got["names"] == want["names"]
    for key in ("params", "bse"):
        np.testing.assert_allclose(
            got[key], want[key], rtol=RTOL, atol=0.0, err_msg=f"{name}: {key}"
        )
