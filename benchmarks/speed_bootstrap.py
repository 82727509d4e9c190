"""Speed of the default fit below alpha = 1, where the fold-block bootstrap dominates.

Below ``alpha = 1`` a default fit runs 30 bootstrap draws, and each draw re-runs the
private cross-validation of every nuisance. This script fits five hard validation cells
at n = 4000 (``nsw_censored`` ATE at 0.7, ``overlap_s`` ATE at 0.5, ``topcoded_income``
ATT at 0.5, ``lognormal_clip`` POM at 0.5, ``factor_12`` ATE at 0.7; the seeds of
``validate.py --seed 51``) and prints, per cell, the seconds of the default fit and of
the same fit with ``variance="influence"``, and their ratio. An influence-SE fit whose
interval would widen for regularisation bias still bootstraps the shift (the widening is
checked against the shift's noise), so on such cells the two cost about the same.

``--vs PATH`` compares two checkouts of privinfer on the same fits: each round runs this
checkout and ``PATH`` in fresh processes, alternating which goes first, and prints the
ratio of their total fit seconds round by round and the median (below 1: this checkout
is faster). The standard errors printed by both must agree for a pure speed change.

Usage: ``python benchmarks/speed_bootstrap.py [--reps 3] [--vs PATH] [--rounds 3]``
(``--quick``: one replication per cell).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
CELLS = [
    ("nsw_censored", 0.7, "ATE"),
    ("overlap_s", 0.5, "ATE"),
    ("topcoded_income", 0.5, "ATT"),
    ("lognormal_clip", 0.5, "POM"),
    ("factor_12", 0.7, "ATE"),
]


def _fit_all(root: str, reps: int, influence: bool) -> dict:
    """Fit every cell ``reps`` times with the privinfer of checkout ``root``."""
    sys.path[:0] = [os.path.join(root, "benchmarks"), root]
    import numpy as np
    from threadpoolctl import threadpool_limits
    from validate import MODELS, _rep_seed
    from validate_designs import DESIGNS, privatize

    import privinfer as pi

    assert os.path.abspath(pi.__file__).startswith(os.path.abspath(root)), pi.__file__
    warnings.simplefilter("ignore")
    out: dict = {"seconds": {}, "influence_seconds": {}, "se": []}
    with threadpool_limits(1):
        for name, alpha, estimand in CELLS:
            design = DESIGNS[name]
            mech = pi.AlphaIdentity(alpha, design.reference())
            secs, secs_if = 0.0, 0.0
            for rep in range(reps):
                s_data, s_rel, _ = _rep_seed(51, design.name, alpha, 4000, rep).spawn(3)
                raw = design.simulate(4000, np.random.default_rng(s_data))
                rel = privatize(mech, raw, design.public, np.random.default_rng(s_rel))
                model = MODELS[estimand]
                t = time.perf_counter()
                res = model.from_formula(design.formula, rel, mechanism=mech).fit(random_state=1)
                secs += time.perf_counter() - t
                out["se"].append(float(res.bse.iloc[0]))
                if influence:
                    t = time.perf_counter()
                    model.from_formula(
                        design.formula, rel, mechanism=mech, variance="influence"
                    ).fit(random_state=1)
                    secs_if += time.perf_counter() - t
            key = f"{name} {estimand} {alpha}"
            out["seconds"][key] = secs / reps
            out["influence_seconds"][key] = secs_if / reps
    return out


def _child(root: str, reps: int, influence: bool) -> dict:
    """``_fit_all`` in a fresh process (one privinfer per process)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", root, "--reps", str(reps)]
    if not influence:
        cmd.append("--no-influence")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": root}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one replication per cell")
    parser.add_argument("--vs", default=None, help="another checkout of privinfer")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--no-influence", action="store_true", help=argparse.SUPPRESS)
    a = parser.parse_args()
    reps = 1 if a.quick else a.reps
    if a.child is not None:
        print(json.dumps(_fit_all(a.child, reps, not a.no_influence)))
        return
    root = os.path.dirname(HERE)
    if a.vs is None:
        res = _child(root, reps, True)
        print(f"{'cell':32s} {'default s':>10s} {'influence s':>12s} {'ratio':>7s}")
        for key, s in res["seconds"].items():
            s_if = res["influence_seconds"][key]
            print(f"{key:32s} {s:10.2f} {s_if:12.2f} {s / s_if:7.1f}")
        total = sum(res["seconds"].values())
        print(f"{'total':32s} {total:10.2f} {sum(res['influence_seconds'].values()):12.2f}")
        return
    ratios = []
    for r in range(a.rounds):
        order = [root, a.vs] if r % 2 == 0 else [a.vs, root]
        got = {p: _child(p, reps, False) for p in order}
        mine, other = got[root], got[a.vs]
        ratio = sum(mine["seconds"].values()) / sum(other["seconds"].values())
        ratios.append(ratio)
        same = mine["se"] == other["se"]
        print(f"round {r + 1}: this {sum(mine['seconds'].values()):.1f} s, other "
              f"{sum(other['seconds'].values()):.1f} s, ratio {ratio:.3f}, "
              f"standard errors {'identical' if same else 'DIFFER'}", flush=True)  # fmt: skip
    ratios.sort()
    print(f"median ratio this / other: {ratios[len(ratios) // 2]:.3f}")


if __name__ == "__main__":
    main()
