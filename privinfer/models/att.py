r"""PrivateATT: the average treatment effect on the treated."""

from __future__ import annotations

from typing import Any

import numpy as np

from privinfer._typing import FloatArray
from privinfer.inversion import ReferenceMoments
from privinfer.models._onestep import TreatmentModel
from privinfer.models.scores import ReferenceTerms, att_estimate

__all__ = ["PrivateATT"]


class PrivateATT(TreatmentModel):
    r"""Average effect on the treated from data with private covariates.

    Only the control regression :math:`\mu_0` and the odds :math:`w = \pi/(1-\pi)` enter
    (Kormos and van der Vaart, 2026). Options as :class:`PrivateATE`; the treatment must
    be binary (the second level is "treated").

    Notes
    -----
    .. math:: \tau = \frac{E[D(Y - \mu_0(X)) - (1-D)w(X)(Y - \mu_0(X))]}{p_1},
       \qquad \varphi_i = \frac{Q_X^{-1}[d(y-\mu_0) - (1-d)w(y-\mu_0)]_i - d_i\tau}{p_1},

    with :math:`p_1 = \frac1n\sum_i D_i` (public). With ``riesz="auto"`` the odds come
    from the automatic Riesz representer :math:`w = \theta_w'\varphi`,
    :math:`\theta_w = G_0^{-1}\frac1n\sum_i Q_X^{-1}[d\varphi]`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 3000)
    >>> d = (rng.random(3000) < 1 / (1 + np.exp(-x))).astype(int)
    >>> raw = pd.DataFrame({"x": x, "d": d, "y": d * (1 + x) + x + rng.normal(size=3000)})
    >>> mech = pi.AlphaIdentity(0.8, {"x": pi.reference.Uniform(-1, 1)})
    >>> released = mech.privatize(raw, public=["d", "y"], random_state=1)
    >>> res = pi.PrivateATT.from_formula("y ~ d | x", released,
    ...                                  mechanism=mech).fit(random_state=2)
    >>> list(res.params.index)
    ['ATT']
    """

    _name = "PrivateATT"
    _components = "att"
    _binary_reason = "the ATT"
    _odds = True

    def _param_names(self) -> list[str]:
        return ["ATT"]

    def _combine(
        self, pom_phi: FloatArray, att_phi: FloatArray, wt: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """The ATT numerator score over the (weighted) share of treated rows."""
        est, phi = att_estimate(att_phi, self.inputs.d, wt)
        return est, phi, None

    def _from_means(self, m: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        r"""From the means :math:`(	au p_1, p_1)` of the numerator score and the treated."""
        tau, p1 = m[0] / m[1], m[1]
        return np.array([tau]), np.array([[1.0 / p1], [-tau / p1]]), None

    def _reference_errors(
        self,
        terms: tuple[ReferenceTerms, ...],
        contrast: Any,
        ref: ReferenceMoments,
        scale: float,
        names: list[str],
    ) -> dict[str, float]:
        """The odds score's reference error over the treated share :math:`p_1`."""
        x = self.inputs
        p1 = x.treated_share
        odds_terms = terms[x.n_levels]
        return {names[0]: ref.error(lambda mm, oo: -scale * odds_terms.value(mm, oo)) / p1}
