r"""Privacy statements and minibatch composition for DPOT/DPDA through ``dp_accounting``.

Every number of this module comes from ``dp_accounting``'s privacy-loss-distribution
(PLD) accountant; privinfer only states which mechanism was run.

One minibatch step of DPOT draws a Poisson sample of the source rows (each row kept with
probability :math:`q`, independently) and publishes the kept rows as
:math:`x_i M + \Delta_i`. The rows are released **individually**, so an adversary who
knows the other records can tell whether a given record was sampled. We therefore do not
use the subsampled-Gaussian amplification of DP-SGD (which analyses a *sum* over the
batch and assumes hidden membership); the step is accounted as

.. math:: \text{with probability } q:\ N(0,\sigma^2)\text{ vs }N(\Delta_2,\sigma^2);
          \qquad\text{otherwise: nothing},

with the selection public. Its PLD is the mixture :math:`q\,L_{G} + (1-q)\,\delta_0`
(``PrivacyLossDistribution.compute_mixture`` with the identity PLD), and :math:`T` steps
compose by PLD convolution (``self_compose``). The label histogram of DPDA adds two
discrete-Laplace releases of sensitivity 1 (replacing one label moves one unit between two
bins).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from privinfer._validation import check_in_interval, check_int
from privinfer.transport.calibration import _import_dp_accounting

__all__ = [
    "NeighbourRelation",
    "PrivacyStatement",
    "minibatch_privacy",
]

NeighbourRelation = Literal["entry", "record"]

_RELATION_TEXT = {
    "entry": ("one entry of one source row changes by at most 1 (Le Tien, Habrard and "
              "Sebban, 2019, Theorem 2)"),
    "record": "one source row (clipped to the public norm bound) is replaced by another",
}


@dataclass(frozen=True)
class PrivacyStatement:
    r"""What a publication guarantees, and for which neighbour relation.

    Attributes
    ----------
    eps : float
        Total :math:`\varepsilon`.
    delta : float
        Total :math:`\delta`.
    neighbour : {"entry", "record"}
        The neighbour relation of the source data sets the guarantee refers to.
    mechanism : str
        Short description of what was released and how it was calibrated.
    sigma : float
        Standard deviation of the Gaussian noise on the projected rows.
    sensitivity : float
        :math:`\ell_2` sensitivity of :math:`X_s M` for ``neighbour``.
    note : str, default=""
        Caveats (for example which parts of a release the statement does not cover).

    Examples
    --------
    Every DPOT publication carries one:

    >>> from privinfer.transport import DPOTSource
    >>> Xs = np.random.default_rng(0).normal(size=(30, 5))
    >>> stmt = DPOTSource(eps=2.0, delta=1e-5, ell=16, neighbour="record", clip_norm=3.0,
    ...                   random_state=0).publish(Xs).privacy
    >>> stmt.eps, stmt.delta, stmt.neighbour
    (2.0, 1e-05, 'record')
    >>> stmt.relation
    'one source row (clipped to the public norm bound) is replaced by another'
    >>> str(stmt).startswith("(2, 1e-05)-DP for neighbours where one source row")
    True
    """

    eps: float
    delta: float
    neighbour: NeighbourRelation
    mechanism: str
    sigma: float
    sensitivity: float
    note: str = ""

    @property
    def relation(self) -> str:
        """The neighbour relation in words."""
        return _RELATION_TEXT[self.neighbour]

    def __str__(self) -> str:
        text = (
            f"({self.eps:.4g}, {self.delta:.3g})-DP for neighbours where {self.relation}; "
            f"{self.mechanism}; sigma={self.sigma:.4g}, sensitivity={self.sensitivity:.4g}."
        )
        return f"{text} {self.note}".strip()


def _check_relation(neighbour: object, owner: str) -> NeighbourRelation:
    if neighbour not in _RELATION_TEXT:
        raise ValueError(
            f"The 'neighbour' parameter of {owner} must be 'entry' or 'record'. "
            f"Got {neighbour!r} instead."
        )
    return neighbour  # type: ignore[return-value]


def minibatch_privacy(
    noise_multiplier: float,
    sampling_probability: float,
    n_steps: int,
    delta: float,
    *,
    label_eps: float | None = None,
    value_discretization_interval: float = 1e-4,
) -> float:
    r"""Total :math:`\varepsilon` of ``n_steps`` Poisson-sampled DPOT publications.

    Use it to choose the number of minibatches a budget allows, or to report the budget
    a run has spent (:meth:`DPOTSource.publish_minibatches` calls it). Cost: one PLD
    self-composition (milliseconds to a second).

    Parameters
    ----------
    noise_multiplier : float
        :math:`\sigma / \Delta_2`, the noise standard deviation over the sensitivity.
    sampling_probability : float
        Poisson sampling rate :math:`q \in (0, 1]` of a source row in a step.
    n_steps : int
        Number :math:`T \ge 1` of minibatch publications.
    delta : float
        Target :math:`\delta \in (0, 1)` of the whole run.
    label_eps : float or None, default=None
        If given, :math:`\varepsilon'` of the DPDA label histogram (discrete Laplace with
        parameter :math:`\varepsilon'/2`, released once), composed in the same PLD.
    value_discretization_interval : float, default=1e-4
        Discretisation of the privacy loss in ``dp_accounting`` (pessimistic rounding).

    Returns
    -------
    float
        The smallest :math:`\varepsilon` such that the whole run is
        :math:`(\varepsilon, \delta)`-DP.

    Raises
    ------
    ValueError
        If an argument is outside its range.
    ImportError
        If ``dp-accounting`` is missing.

    Notes
    -----
    Each step's privacy loss distribution is
    :math:`q\,L_{N(0,\sigma^2)\|N(\Delta_2,\sigma^2)} + (1-q)\,\delta_0` (a record's row
    is published or not, and an adversary may see which), composed :math:`T` times.
    With :math:`q = 1` this is ``dp_accounting``'s Gaussian event composed ``T`` times.
    The DP-SGD subsampled-Gaussian bound used in the minibatch experiment of Le Tien,
    Habrard and Sebban (2019) is smaller, but it analyses a noisy *sum* over the batch and does
    not apply to a per-row
    release.

    Examples
    --------
    >>> eps = minibatch_privacy(2.0, 0.05, n_steps=100, delta=1e-5)
    >>> 0 < eps < minibatch_privacy(2.0, 1.0, n_steps=100, delta=1e-5)
    True
    """
    owner = "minibatch_privacy"
    nm = check_in_interval(
        noise_multiplier, "noise_multiplier", owner, 0.0, np.inf, low_open=True, high_open=True
    )
    q = check_in_interval(sampling_probability, "sampling_probability", owner, 0.0, 1.0,
                          low_open=True)
    steps = check_int(n_steps, "n_steps", owner, 1)
    delta_f = check_in_interval(delta, "delta", owner, 0.0, 1.0, low_open=True, high_open=True)
    vdi = check_in_interval(value_discretization_interval, "value_discretization_interval",
                            owner, 0.0, 1.0, low_open=True)
    dpa = _import_dp_accounting()
    pld_mod = dpa.pld.privacy_loss_distribution
    step = pld_mod.from_gaussian_mechanism(
        standard_deviation=nm, sensitivity=1.0, value_discretization_interval=vdi
    )
    if q < 1.0:
        step = step.compute_mixture(
            pld_mod.identity(value_discretization_interval=vdi), self_weight=q
        )
    total = step.self_compose(steps)
    if label_eps is not None:
        eps_l = check_in_interval(label_eps, "label_eps", owner, 0.0, np.inf,
                                  low_open=True, high_open=True)
        hist = pld_mod.from_discrete_laplace_mechanism(
            parameter=eps_l / 2.0, sensitivity=1, value_discretization_interval=vdi
        ).self_compose(2)
        total = total.compose(hist)
    return float(total.get_epsilon_for_delta(delta_f))
