"""The overlap warning for few effective rows, n / E[rho^2] (Kish's effective sample size).

A limited-overlap design (propensity expit(4x) clipped to [0.03, 0.97], E[1/pi] = 7.2) at
n = 600 and alpha = 1 has about 85 effective rows behind each arm's representer: the fit
must warn, name the number of rows that would lift it to ``MIN_EFFECTIVE_ROWS`` and note
it in the diagnostics. The same design with good overlap must not warn, nor must the
limited-overlap design at n = 4000 (about 560 effective rows).
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.models._diagnose import MIN_EFFECTIVE_ROWS


def _fit(n: int, slope: float, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    p = np.clip(1 / (1 + np.exp(-slope * x)), 0.03, 0.97)
    d = rng.binomial(1, p)
    y = 2 * np.tanh(3 * x) + d * (1 + 0.5 * np.tanh(3 * x)) + rng.normal(0, 1, n)
    data = pd.DataFrame({"y": y, "d": d, "x": x})
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-1, 1)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = pi.PrivatePOM.from_formula("y ~ d | x", data, mechanism=mech).fit(random_state=0)
    kind = pi.exceptions.OverlapWarning
    overlap = [str(w.message) for w in caught if issubclass(w.category, kind)]
    return res, overlap


@pytest.mark.parametrize("seed", [1, 2])
def test_few_effective_rows_warn_and_name_n(seed):
    res, overlap = _fit(600, 4.0, seed)
    assert len(overlap) == 1, overlap
    msg = overlap[0]
    assert "effective rows" in msg
    r2 = max(res.diagnostics.riesz_second_moment.values())
    assert 600 / r2 < MIN_EFFECTIVE_ROWS
    need = int(re.search(r"n >= (\d+) rows", msg).group(1))
    assert need == int(np.ceil(MIN_EFFECTIVE_ROWS * r2))
    assert need > 600
    assert any("effective rows" in note for note in res.diagnostics.notes)


def test_good_overlap_or_enough_rows_do_not_warn():
    _, good = _fit(600, 0.5, 1)
    assert good == []
    _, large = _fit(4000, 4.0, 1)
    assert large == []
