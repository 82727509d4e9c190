"""Regenerate ``treatment_snapshot.json`` (run from the repository root).

The stored file is the oracle of ``tests/models/test_snapshot_treatment.py``; it was made
by the pre-refactor implementation of the treatment models (commit fe577cc), regenerated
for the regularised nuisance fits of issue 14 and for the sieve's public-lead candidates
(the three cases with a public continuous covariate below alpha = 1; their estimates
moved by at most 0.007, 0.13 SE) and for the few-clusters warning (the warnings of the
four clustered cases, 7 to 40 clusters; no number moved) and for the noise guard that
spares the public functions of the outcome fits below alpha = 1 (``ate_weights_public``:
estimate 1.0976 -> 1.1003, 0.05 SE; ``att_cluster_weights``: bootstrap refits only,
``bse`` +0.6%) and for the sieve caps by each fit's own arm (eleven cases: the larger
basis's indefiniteness notes, ``ate_nrep3``'s estimate by 0.05 SE, bootstrap ``bse`` by
-2% to +6%) and for the products of a factor's tail contrasts with the squares and cubes
of the other columns (``ate_mixed_public``, ``ate_weights_public``,
``att_cluster_weights``: estimates by 0.01, 0.10 and 0.15 SE, ``bse`` by -4% to +4%), and
for the indefinite Gram matrices that the ridges regularise becoming a summary note
instead of a warning (fourteen cases lost an ``IndefiniteGramWarning``; no number moved),
and for the Riesz fits undersmoothed within a variance budget at alpha = 1 (four cases:
``ate_kernel_a1_bw`` by -0.38 SE, ``functional_a1`` by +0.05 SE, ``att_auto_a1`` and
``pom_3levels_a1`` by at most 0.01 SE; ``bse`` by +0.2% to +5.7%), and for that rule
leaving the kernel outcome route (``ate_kernel_a1_bw`` back to its value before it, to
the last bit) and for the kernel route's note on floored held-out rows (three cases
below alpha = 1 gained it; no number moved), and for the products of bumps and lines
in the sieve's interactions becoming the default (21 cases: estimates by at most 0.29 SE,
fifteen not at all; ``bse`` by up to +17%, and by +44% to +55% in ``pom_binary`` and
``ate_multilevel``, whose estimates did not move: their bootstrap draws now reach the
richer candidates; over 40 releases of those two designs the mean ``bse`` rose by 2% to
3%), and must only be
regenerated
when a change of numbers or warnings is intended:
``python tests/models/snapshots/make_treatment_snapshot.py [CASE ...]`` (named cases
only, or all).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from treatment_cases import CASES, run_case  # noqa: E402


def main(names: list[str]) -> None:
    """Regenerate every case, or only ``names`` (the others keep their stored values)."""
    path = HERE / "treatment_snapshot.json"
    out = json.loads(path.read_text()) if names else {}
    for name in names or CASES:
        out[name] = run_case(name)
    out = {name: out[name] for name in CASES}
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
