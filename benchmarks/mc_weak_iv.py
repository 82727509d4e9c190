"""Monte Carlo: weak private first stages, Wald vs the private Anderson-Rubin test.

Privacy weakens the first stage: for a share 1 - alpha of the rows the released value of a
private instrument (or control) is a reference draw. Wald tests of the IV coefficient then
over-reject, while the private Anderson-Rubin (AR) test keeps its size.

Designs (n released rows per replication, one endogenous regressor x, true beta = 1):

* ``private-z``: z ~ U(0, 1) private instrument, x = 0.32 z + v, y = 1 + x + u,
  corr(u, v) = 0.8; ``y ~ 1 + [x ~ z]``.
* ``private-control``: a Card-like design; c ~ U(0, 20) a private control ("experience")
  that drives x, z ~ Bernoulli(0.5) a public instrument ("near a college"),
  x = 12 + 0.19 z - 0.25 c + v, y = 1 + x + 0.05 c + u, corr(u, v) = 0.8;
  ``y ~ c + [x ~ z]``.

The strengths are set so that the mean first-stage F is about 18 at alpha = 1 and falls
with alpha roughly as in Card's data with experience private (about 18, 5.5 and 1.9 at
alpha = 1, 0.6 and 0.4). For each alpha: mean private first-stage partial F, rejection rates at 5% of the Wald test
and of the AR test of H0: beta = 1, share of unbounded AR sets. When the private first
stage is so close to zero that the IV estimate does not exist (``fit`` raises
SingularDesignError) the Wald test counts as a rejection and the AR test comes from
``PrivateGMM.anderson_rubin``; the share of such replications is reported.

Run: python benchmarks/mc_weak_iv.py [--quick] [--reps R] [--n N] [--seed S]

Results (3000 replications, n = 2000, seed 2026; size MC s.e. 0.004)::

             design  alpha  mean F  median F  Wald size  AR size  AR unbounded
          private-z    1.0   18.10     17.01     0.0647   0.0517        0.0123
          private-z    0.6    7.11      6.13     0.0807   0.0560        0.3067
          private-z    0.4    3.71      2.67     0.0993   0.0567        0.6223
    private-control    1.0   18.86     17.97     0.0610   0.0500        0.0120
    private-control    0.6    4.73      3.76     0.0057   0.0467        0.5097
    private-control    0.4    2.45      1.58     0.0090   0.0500        0.7683

The AR test keeps its size (4.7% to 5.7%) at every alpha. The Wald test over-rejects with
a weak private instrument (up to 10%) and, with a weak first stage caused by a private
control, its heavy-tailed standard errors make it reject far too rarely (under 1%) while
its intervals are meaningless; 0.1% of the private-control replications at alpha = 0.6
have no Wald estimate at all.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import privinfer as pi

Z975 = 1.959963984540054
BETA = 1.0


def private_z(rng: np.random.Generator, n: int) -> pd.DataFrame:
    z = rng.uniform(0, 1, n)
    e = rng.standard_normal((n, 2))
    v = e[:, 0]
    u = 0.8 * v + 0.6 * e[:, 1]
    x = 0.32 * z + v
    return pd.DataFrame({"y": 1.0 + BETA * x + u, "x": x, "z": z})


def private_control(rng: np.random.Generator, n: int) -> pd.DataFrame:
    c = rng.uniform(0, 20, n)
    z = (rng.uniform(size=n) < 0.5).astype(float)
    e = rng.standard_normal((n, 2))
    v = e[:, 0]
    u = 0.8 * v + 0.6 * e[:, 1]
    x = 12.0 + 0.19 * z - 0.25 * c + v
    return pd.DataFrame({"y": 1.0 + BETA * x + 0.05 * c + u, "x": x, "z": z, "c": c})


DESIGNS: dict[str, tuple[Callable[[np.random.Generator, int], pd.DataFrame], dict, str]] = {
    "private-z": (private_z, {"z": (0, 1)}, "y ~ 1 + [x ~ z]"),
    "private-control": (private_control, {"c": (0, 20)}, "y ~ c + [x ~ z]"),
}


def run(design: str, alpha: float, reps: int, n: int, seed: int) -> dict[str, float | str]:
    draw, priv, formula = DESIGNS[design]
    mech = pi.AlphaIdentity(alpha, {c: pi.reference.Uniform(*b) for c, b in priv.items()})
    F = np.empty(reps)
    wald = np.empty(reps, dtype=bool)
    ar = np.empty(reps, dtype=bool)
    unbounded = np.empty(reps, dtype=bool)
    undefined = np.zeros(reps, dtype=bool)
    root = np.random.SeedSequence([seed, round(alpha * 100), len(design)])
    for r, child in enumerate(root.spawn(reps)):
        rng = np.random.default_rng(child)
        raw = draw(rng, n)
        public = [c for c in raw.columns if c not in priv]
        released = mech.privatize(raw, public=public, random_state=rng)
        model = pi.PrivateGMM.iv(formula, released, mechanism=mech)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)
            try:
                res = model.fit(random_state=r)
                wald[r] = abs(res.params["x"] - BETA) > Z975 * res.bse["x"]
                weak = res.weak_iv
            except pi.exceptions.SingularDesignError:  # private first stage ~ 0: no Wald
                wald[r], undefined[r] = True, True
                weak = model.anderson_rubin(random_state=r)
        F[r] = weak.first_stage()["first_stage[x]"].stat
        ar[r] = weak.ar_test(BETA).pvalue < 0.05
        unbounded[r] = not weak.conf_set(0.95).bounded
    return {
        "design": design,
        "alpha": alpha,
        "n": n,
        "reps": reps,
        "mean F": float(F.mean()),
        "median F": float(np.median(F)),
        "Wald size": float(wald.mean()),
        "AR size": float(ar.mean()),
        "AR unbounded": float(unbounded.mean()),
        "Wald undefined": float(undefined.mean()),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="300 replications instead of 3000")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    reps = args.reps or (300 if args.quick else 3000)
    rows = []
    t0 = time.perf_counter()
    for design in DESIGNS:
        for alpha in (1.0, 0.6, 0.4):
            rows.append(run(design, alpha, reps, args.n, args.seed))
            print(
                f"  {design:15s} alpha={alpha:.1f} done ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.float_format", "{:.4f}".format):
        print(table.to_string(index=False))
    mc = np.sqrt(0.05 * 0.95 / reps)
    print(
        f"\nTarget: AR size in (0.04, 0.06) at every alpha; Wald size reported beside it. "
        f"Size MC s.e. at {reps} reps: {mc:.4f}."
    )


if __name__ == "__main__":
    main()
