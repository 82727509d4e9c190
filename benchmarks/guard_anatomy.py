r"""Anatomy of the noise guard on one release: the shape of the Gram noise, and the fits
that the common and the per-function guard lead the private CV to.

The noise guard (:func:`privinfer.nuisance.regularize.noise_guard`) sizes the operator
norm of a training Gram matrix's privatisation noise by the semicircle edge
:math:`2\sigma\sqrt J` from the entry variance of the held-out folds' deviations
:math:`D_g`. This script prints, for the first guarded fits of one release:

* ``op/semicircle``: each fold's :math:`\lVert D_g\rVert_{op}` over the semicircle edge
  of the same deviation, :math:`2\lVert D_g\rVert_F/\sqrt J` (1 for noise spread evenly
  over the entries; more where a few rows or functions dominate), plain and whitened by
  the per-function noise sizes :math:`d_k` of ``GUARD_WEIGHTS``;
* per eigen-direction :math:`u_j` of the first training matrix (fold 0 held out, the
  constant profiled out): the noise :math:`\nu_j`, the folds' spread of
  :math:`u_j'D_gu_j` scaled to a training set (the first-order noise of eigenvalue
  :math:`\lambda_j`), against the common guard :math:`(1 - \alpha)\nu`: how many
  eigenvalues the guard sits above, and how many of those are well measured
  (:math:`\lambda_j > 3(1 - \alpha)\nu_j`);
* for the common guard (:math:`\gamma = 0`) and the per-function one (:math:`\gamma =
  1`): the estimate, its error in standard errors, the influence standard error, and
  the size and relative ridge of the sieve that each of the first fits chose.

::

    python benchmarks/guard_anatomy.py --design nsw_censored --alpha 0.7 --n 4000 --seed 1402 --rep 0
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate import DESIGNS, MODELS, replication

import privinfer.models._nuisances as nuisances
import privinfer.nuisance.regularize as regularize


def noise_shape(G_folds: np.ndarray, n_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Per fold, operator norm over semicircle edge of the deviation (plain, whitened),
    and the spread max/median of the per-function noise sizes (constant left out)."""
    w = n_rows / n_rows.sum()
    sub = G_folds[:, 1:, 1:]
    J = sub.shape[1]
    D = sub - np.tensordot(w, sub, 1)
    d = np.sqrt(np.tensordot(w, D**2, 1).sum(axis=1))
    r = 1.0 / np.sqrt(np.maximum(d, 1e-300))
    Dw = D * r[None, :, None] * r[None, None, :]

    def ratio(M: np.ndarray) -> np.ndarray:
        M = 0.5 * (M + M.transpose(0, 2, 1))
        op = np.abs(np.linalg.eigvalsh(M)).max(axis=1)
        return op / (2.0 * np.sqrt((M**2).sum(axis=(1, 2))) / np.sqrt(J))

    return ratio(D), ratio(Dw), float(d.max() / np.median(d))


def directions(G_folds: np.ndarray, n_rows: np.ndarray, share: float) -> str:
    """The per-direction noise of the first training matrix against the common guard."""
    F = n_rows.size
    w = n_rows / n_rows.sum()
    train = np.arange(F) != 0
    n_tr = float(n_rows[train].sum())
    Gt = np.tensordot(n_rows[train] / n_tr, G_folds[train], 1)
    S = regularize._penalised_block(Gt)
    lam, U = np.linalg.eigh(0.5 * (S + S.T))
    sub = G_folds[:, 1:, 1:]
    D = sub - np.tensordot(w, sub, 1)
    proj = np.einsum("kj,gkl,lj->gj", U, D, U)
    noise = np.sqrt(F / (F - 1) * float(n_rows.mean()) / n_tr * (w @ proj**2))
    guard = share * float(regularize._noise_norm(sub, n_rows, n_tr))
    below = lam < guard
    well = below & (lam > 3 * share * noise)
    ratio = np.round(lam[:8] / (share * noise[:8]), 1).tolist()
    return (
        f"common guard {guard:.3g} sits above {int(below.sum())} of {lam.size} eigenvalues, "
        f"{int(well.sum())} of them well measured; per-direction noise / semicircle noise: "
        f"median {np.median(noise) * share / guard:.3f}; smallest eigenvalues over their "
        f"noise {ratio}"
    )


def main(argv: list[str] | None = None) -> None:
    """Print the anatomy of one release's guarded fits."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--design", default="nsw_censored")
    parser.add_argument("--alpha", type=float, default=0.7)
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1402)
    parser.add_argument("--rep", type=int, default=0)
    parser.add_argument("--estimand", default="ATE", choices=sorted(MODELS))
    parser.add_argument("--fits", type=int, default=4, help="guarded fits to show")
    args = parser.parse_args(argv)
    design = DESIGNS[args.design]
    mech, released, s_fit, truths = replication(
        args.seed, args.design, args.alpha, args.n, args.rep
    )
    original = nuisances.fit_crossfit
    seen: list[tuple] = []

    def spy(G, rhs, n_rows, mask, **kw):
        out = original(G, rhs, n_rows, mask, **kw)
        if kw.get("noise_share", 0.0) > 0 and len(seen) < args.fits:
            rows = np.asarray(n_rows, dtype=float)
            plain, white, spread = noise_shape(G, rows)
            chosen = (len(out.choice.subset), out.choice.relative_ridge) if out.choice else None
            seen.append((G.shape[1], plain, white, spread, chosen))
            if regularize.GUARD_WEIGHTS == 0.0:
                seen[-1] += (directions(G, rows, kw["noise_share"]),)
        return out

    nuisances.fit_crossfit = spy
    before = regularize.GUARD_WEIGHTS
    try:
        for gamma in (0.0, 1.0):
            regularize.GUARD_WEIGHTS = gamma
            seen.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = (
                    MODELS[args.estimand]
                    .from_formula(design.formula, released, mechanism=mech, variance="influence")
                    .fit(random_state=np.random.default_rng(s_fit))
                )
            p = res.params.index[0]
            err = (res.params[p] - truths[p]) / res.bse[p]
            print(
                f"gamma {gamma:g}: {p} {res.params[p]:.3f} (truth {truths[p]:.3f}), "
                f"influence SE {res.bse[p]:.3f}, error {err:+.2f} SE"
            )
            for J, plain, white, spread, chosen, *more in seen:
                if gamma == 0.0:
                    print(
                        f"   J = {J}: op/semicircle plain {np.round(plain, 2).tolist()}, "
                        f"whitened {np.round(white, 2).tolist()}; d max/median {spread:.1f}"
                    )
                    print(f"   J = {J}: {more[0]}")
                if chosen is not None:
                    print(
                        f"   J = {J}: chose {chosen[0]} functions, relative ridge {chosen[1]:.1e}"
                    )
    finally:
        nuisances.fit_crossfit = original
        regularize.GUARD_WEIGHTS = before


if __name__ == "__main__":
    main()
