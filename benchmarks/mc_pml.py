"""Power of the private simple-vs-simple test: c-interior PML vs LDP vs non-private.

Usage: python benchmarks/mc_pml.py [--quick]

For P, Q on N = 8 atoms in the c-interior, prints the exact power (and a Monte Carlo
check through privatize + test) against n for the PML test, the LDP (c = 0) test and the
non-private test, at eps below and above eps* = -log(c N / 2). Above eps* the PML column
equals the non-private one: "privacy for free".
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

# this checkout's privinfer ahead of any installed copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from privinfer.pml import PMLTest, eps_star

N, C = 8, 0.05
P = np.array([0.20, 0.18, 0.15, 0.12, 0.10, 0.09, 0.08, 0.08])
Q = np.array([0.08, 0.08, 0.09, 0.10, 0.12, 0.15, 0.18, 0.20])


def mc_power(test: PMLTest, n: int, reps: int, rng: np.random.Generator) -> float:
    x = rng.choice(N, size=(reps, n), p=Q)
    bits = test.privatize(x.ravel(), random_state=rng).reshape(reps, n)
    return float(np.mean([test.test(b).reject for b in bits]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    reps = 200 if args.quick else 2000
    ns = [25, 50, 100, 200, 400] if args.quick else [25, 50, 100, 200, 400, 800, 1600]
    rng = np.random.default_rng(2024)
    es = eps_star(C, N)
    print(f"N = {N}, c = {C}, eps* = {es:.3f}, high-privacy threshold = {-np.log(C * N):.3f}, "
          f"alpha = 0.05, MC reps = {reps}")
    for eps in (0.5, 1.0, es, es + 1.0):
        t = PMLTest(P, Q, eps=float(eps), c=C)
        pml, ldp, nonpriv = t.plans
        print(f"\neps = {eps:.3f}: eta_TV PML = {pml.eta_tv:.3f}, LDP = {ldp.eta_tv:.3f}; "
              f"TV(bits) PML = {pml.tv_bits:.3f}, LDP = {ldp.tv_bits:.3f}, "
              f"non-private = {nonpriv.tv_bits:.3f}")
        print(f"{'n':>6} {'PML exact':>10} {'PML MC':>8} {'LDP exact':>10} {'non-priv':>9}")
        for n in ns:
            print(f"{n:6d} {float(pml.power(n)):10.3f} {mc_power(t, n, reps, rng):8.3f} "
                  f"{float(ldp.power(n)):10.3f} {float(nonpriv.power(n)):9.3f}")
        print(t.compare(100).to_string(float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
