"""DPOT accuracy |W~ - W| / W (seed 000, sec. 5.1 shape) and DPDA accuracy on digits.

Data: scikit-learn's bundled 8x8 digits (pixel values 0..16), split at random into a
source half and a target half; the target images are shifted one pixel to the right
(a real, offline two-domain pair). W is POT's exact squared-Euclidean transport cost on
the raw rows; delta = 1 / (1.2 n_s) as in the paper. The "entry" relation means one pixel
of one source image changes by at most one grey level (of 16).

1. whole batch: Err against the noise ratio sigma/w and against eps (Theorem 2);
2. minibatch: Poisson batches (q = 128 / n_s), Err per batch against the non-private cost
   of the same batch, with the eps of the whole run from dp_accounting's PLD accountant
   (per-row release: batch membership treated as public) and, for comparison only, the
   DP-SGD subsampled-Gaussian epsilon the paper's accounting corresponds to;
3. DPDA (eps, eps_labels) vs non-private OTDA (POT SinkhornL1l2Transport) vs source-only,
   all with 1-NN.

Usage:  python benchmarks/dpot_err.py [--quick]
"""

from __future__ import annotations

import argparse
import pathlib

import dp_accounting as dpa
import numpy as np
import ot
from sklearn.datasets import load_digits
from sklearn.neighbors import KNeighborsClassifier

from privinfer.transport.accounting import PrivacyStatement, minibatch_privacy
from privinfer.transport.calibration import max_row_norm, theorem2_sigma
from privinfer.transport.da import DPDA, DPDASource
from privinfer.transport.dpot import (
    PublishedSource,
    dpot,
    draw_projection,
    publish_rows,
)

OUT = pathlib.Path(__file__).parent / "out"


def domains(n_per_domain: int, seed: int = 0):
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    src, tgt = perm[: len(y) // 2][:n_per_domain], perm[len(y) // 2:][:n_per_domain]
    imgs = X[tgt].reshape(-1, 8, 8)
    shifted = np.zeros_like(imgs)
    shifted[:, :, 1:] = imgs[:, :, :-1]
    return X[src], y[src], shifted.reshape(-1, 64), y[tgt]


def publication(Xs, ell, sigma, rng):
    M = draw_projection(Xs.shape[1], ell, rng)
    stmt = PrivacyStatement(eps=np.nan, delta=np.nan, neighbour="entry", mechanism="bench",
                            sigma=sigma, sensitivity=max_row_norm(M))
    return M, PublishedSource(projection=M, rows=publish_rows(Xs, M, sigma, rng),
                              sigma=sigma, privacy=stmt)


def whole_batch(Xs, Xt, ell, runs, rng):
    W = ot.emd2(np.full(len(Xs), 1 / len(Xs)), np.full(len(Xt), 1 / len(Xt)),
                ot.dist(Xs, Xt), numItermax=10**8)
    delta = 1 / (1.2 * len(Xs))
    ratios = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]
    by_ratio = []
    for r in ratios:
        errs = []
        for _ in range(runs):
            M = draw_projection(Xs.shape[1], ell, rng)
            sigma = r * max_row_norm(M)
            pub = PublishedSource(M, publish_rows(Xs, M, sigma, rng), sigma,
                                  PrivacyStatement(np.nan, np.nan, "entry", "bench", sigma, 1))
            errs.append(abs(dpot(pub, Xt).w_tilde - W) / W)
        by_ratio.append((r, np.mean(errs), np.std(errs) / np.sqrt(runs)))
    by_eps = []
    for eps in [1.0, 2.0, 4.0, 5.0, 10.0]:
        errs, sig = [], []
        for _ in range(runs):
            M = draw_projection(Xs.shape[1], ell, rng)
            sigma = theorem2_sigma(eps, delta, max_row_norm(M))
            pub = PublishedSource(M, publish_rows(Xs, M, sigma, rng), sigma,
                                  PrivacyStatement(eps, delta, "entry", "bench", sigma, 1))
            errs.append(abs(dpot(pub, Xt).w_tilde - W) / W)
            sig.append(sigma / max_row_norm(M))
        by_eps.append((eps, np.mean(sig), np.mean(errs), np.std(errs) / np.sqrt(runs)))
    return W, delta, by_ratio, by_eps


def minibatch(Xs, Xt, ell, n_batches, rng, batch=128):
    n = len(Xs)
    q, delta = batch / n, 1 / (1.2 * n)
    rows = []
    for r in [0.7, 1.0, 1.3]:
        M = draw_projection(Xs.shape[1], ell, rng)
        sigma = r * max_row_norm(M)
        errs = []
        for _ in range(n_batches):
            keep = np.flatnonzero(rng.random(n) < q)
            tgt = rng.choice(len(Xt), size=keep.size, replace=False)
            if keep.size < 2:
                continue
            w_b = ot.emd2(np.full(keep.size, 1 / keep.size), np.full(keep.size, 1 / keep.size),
                          ot.dist(Xs[keep], Xt[tgt]))
            pub = PublishedSource(M, publish_rows(Xs[keep], M, sigma, rng), sigma,
                                  PrivacyStatement(np.nan, delta, "entry", "bench", sigma, 1))
            errs.append(abs(dpot(pub, Xt[tgt]).w_tilde - w_b) / w_b)
        eps_ours = minibatch_privacy(r, q, n_batches, delta)
        acc = dpa.pld.PLDAccountant()
        acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(r)), n_batches)
        rows.append((r, np.mean(errs), eps_ours, acc.get_epsilon(delta)))
    return q, delta, rows


def domain_adaptation(Xs, ys, Xt, yt, ell, eps, eps_labels, rng):
    delta = 1 / (1.2 * len(Xs))
    src_only = KNeighborsClassifier(1).fit(Xs, ys).score(Xt, yt)
    otda = ot.da.SinkhornL1l2Transport(reg_e=0.1, reg_cl=0.5, norm="max", max_iter=10)
    otda.fit(Xs=Xs, ys=ys, Xt=Xt)
    acc_otda = KNeighborsClassifier(1).fit(otda.transform(Xs=Xs), ys).score(Xt, yt)
    accs = []
    for _ in range(3):
        pub = DPDASource(eps, delta, ell, eps_labels, classes=np.arange(10),
                         random_state=rng).publish(Xs, ys)
        accs.append(DPDA(reg_e=0.1, reg_cl=0.5).fit(pub, Xt).score(Xt, yt))
    return delta, src_only, acc_otda, float(np.mean(accs)), float(np.std(accs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="400 rows per domain, few runs")
    args = parser.parse_args()
    n, runs, n_batches = (400, 3, 20) if args.quick else (898, 10, 100)
    ell = 64
    rng = np.random.default_rng(2024)
    Xs, ys, Xt, yt = domains(n)
    print(f"digits: n_s = {len(Xs)}, n_t = {len(Xt)}, 64 pixels, ell = {ell}")

    W, delta, by_ratio, by_eps = whole_batch(Xs, Xt, ell, runs, rng)
    print(f"\n1. whole batch, W = {W:.2f}, delta = {delta:.3g}, {runs} runs per point")
    print(f"{'sigma/w':>8}{'Err':>9}{'(se)':>8}")
    for r, e, se in by_ratio:
        print(f"{r:>8.2f}{e:>9.3f}{se:>8.3f}")
    print(f"{'eps':>8}{'sigma/w':>9}{'Err':>9}{'(se)':>8}")
    for eps, s, e, se in by_eps:
        print(f"{eps:>8.1f}{s:>9.3f}{e:>9.3f}{se:>8.3f}")

    q, dmb, mb = minibatch(Xs, Xt, ell, n_batches, rng)
    print(f"\n2. minibatch, q = {q:.3f} (expected batch 128), {n_batches} batches, "
          f"delta = {dmb:.3g}")
    print(f"{'sigma/w':>8}{'Err':>9}{'eps (ours, per-row)':>22}{'eps (DP-SGD style)':>21}")
    for r, e, eo, ep in mb:
        print(f"{r:>8.2f}{e:>9.3f}{eo:>22.2f}{ep:>21.2f}")

    eps, eps_l = 5.0, 1.0
    d, so, ota, dp, dps = domain_adaptation(Xs, ys, Xt, yt, ell, eps, eps_l, rng)
    print(f"\n3. domain adaptation (1-NN), DPDA at eps = {eps}, eps_labels = {eps_l}, "
          f"delta = {d:.3g} (total eps {eps + eps_l})")
    print(f"{'source only':<28}{so:>7.3f}")
    print(f"{'OTDA (POT, non-private)':<28}{ota:>7.3f}")
    print(f"{'DPDA (3 runs, mean/sd)':<28}{dp:>7.3f} ({dps:.3f})")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    ax[0].errorbar([r for r, *_ in by_ratio], [e for _, e, _ in by_ratio],
                   [se for *_, se in by_ratio], marker="o", label="whole batch")
    ax[0].plot([r for r, *_ in mb], [e for _, e, *_ in mb], "s--", label="minibatch (128)")
    ax[0].set(xlabel="noise ratio sigma / w", ylabel="|W~ - W| / W", title="DPOT on digits")
    ax[0].legend()
    ax[1].errorbar([e for e, *_ in by_eps], [x[2] for x in by_eps], [x[3] for x in by_eps],
                   marker="o")
    ax[1].set(xlabel="eps (whole batch, Theorem 2)", ylabel="|W~ - W| / W")
    fig.tight_layout()
    OUT.mkdir(exist_ok=True)
    path = OUT / ("dpot_err_quick.png" if args.quick else "dpot_err.png")
    fig.savefig(path, dpi=120)
    print(f"\nplot: {path}")


if __name__ == "__main__":
    main()
