"""The extrapolation of ``benchmarks/noise_sensitivity.py`` (a SIMEX probe).

Estimates that move linearly in the noise level :math:`\\lambda = 1/\\alpha^2 - 1` must be
extrapolated to the exact privatisation bias :math:`s\\,\\lambda(\\alpha)`; a probe that
used :math:`\\alpha` instead of :math:`\\lambda`, or the wrong sign, would not recover it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import noise_sensitivity as NS


@pytest.mark.parametrize("alpha,slope", [(0.7, 0.3), (0.5, -1.2), (0.9, 2.0)])
def test_a_linear_drift_is_extrapolated_to_its_bias(alpha: float, slope: float):
    levels = [0.85, 0.7]
    truth = 3.0

    def lam(a: float) -> float:  # written out here, not the probe's own
        return 1.0 / a**2 - 1.0

    def at(a: float) -> float:
        return truth + slope * lam(a)

    b = NS.extrapolated_bias(alpha, levels, at(alpha), [at(alpha * a) for a in levels])
    assert b == pytest.approx(slope * lam(alpha), rel=1e-9)
    assert at(alpha) - b == pytest.approx(truth, rel=1e-9)


def test_no_drift_no_bias():
    rng = np.random.default_rng(0)
    est = float(rng.normal())
    assert NS.extrapolated_bias(0.6, [0.9, 0.8, 0.7], est, [est] * 3) == pytest.approx(
        0.0, abs=1e-12
    )
