"""The kernel outcome route reports the held-out rows its kernel fits had to floor."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi

NOTE = re.compile(r"Kernel outcome regression: (\d+) held-out row\(s\) had a kernel denominator")


def _isolated_release() -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    """Treated rows only where z > 0, plus three treated rows far from them and from each
    other (more than five bandwidths of 0.05 apart)."""
    rng = np.random.default_rng(3)
    n = 1200
    x, z = rng.uniform(0, 1, n), rng.uniform(-1, 1, n)
    d = ((z > 0) & (rng.random(n) < 0.6)).astype(int)
    for cx, cz in ((0.1, -0.9), (0.5, -0.5), (0.9, -0.9)):
        d[np.argmin((x - cx) ** 2 + (z - cz) ** 2)] = 1
    y = 1 + x + z + d * (1 + 0.5 * x) + 0.5 * rng.normal(size=n)
    mech = pi.AlphaIdentity(
        1.0, {"x": pi.reference.Uniform(0, 1), "z": pi.reference.Uniform(-1, 1)}
    )
    return pd.DataFrame({"y": y, "d": d, "x": x, "z": z}), mech


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_isolated_held_out_row_is_floored_and_counted(seed):
    """At alpha = 1 there is no statistical floor; the three isolated treated rows, when
    held out, have denominators at the round-off level. Each is floored (predicted by the
    treated rows' mean) and the note counts all three; before the round-off floor the
    count was 1 or 2 and the rest were noise ratios."""
    df, mech = _isolated_release()
    model = pi.PrivatePOM.from_formula(
        "y ~ d | x + z", df, mechanism=mech, outcome_model="kernel", kernel_bandwidth=0.05
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overlap is poor by construction
        res = model.fit(random_state=seed)
    counts = [int(m.group(1)) for n in res.diagnostics.notes if (m := NOTE.match(n))]
    assert counts == [3], res.diagnostics.notes
    assert "kernel denominator below its floor" in res.summary().as_text()


def test_no_note_where_every_row_has_neighbours():
    rng = np.random.default_rng(0)
    n = 1000
    x = rng.uniform(0, 1, n)
    d = (rng.random(n) < 0.5).astype(int)
    y = x + d + 0.3 * rng.normal(size=n)
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(0, 1)})
    res = pi.PrivateATE.from_formula(
        "y ~ d | x", pd.DataFrame({"y": y, "d": d, "x": x}), mechanism=mech,
        outcome_model="kernel",
    ).fit(random_state=0)  # fmt: skip
    assert not any(NOTE.match(n) for n in res.diagnostics.notes)
