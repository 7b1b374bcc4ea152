"""Target-rate maths of "Tuning Fairness by Balancing Target Labels" (see docs/METHOD.md).

Pure numpy functions: base rates and group shares, the PR_t presets, the transition probabilities
P(ybar=1 | y, s) for demographic parity (with keep-rate ``delta``) and for explicit TPR/TNR targets,
the reverse table ``d[s][ybar] = P(y=1 | ybar, s)`` by Bayes' rule, Theorem 1's ``t_s`` and Theorem 2's
accuracy ceiling, for two or more groups; per stratum (conditional demographic parity) in ``conditional``.

Groups are integer codes 0..G-1; the disadvantaged group (:func:`disadvantaged_group`), whatever its
code, is the one with the lowest base rate where a positive label is favourable for the person and the
one with the highest where it is unfavourable (rearrest, default).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import FairDashError
from .criteria import DEFAULT, DP, EO

# Theorem 2 over a criterion's ratio: its home is the criteria, read here by its older callers
from .criteria import pr_ratio_ceiling, tpr_ratio_ceiling  # noqa: F401 (re-exported)  # isort: skip

_EPS = 1e-12


# --------------------------------------------------------------------------------------------------
# Rates of the data
# --------------------------------------------------------------------------------------------------
def as_codes(s, n_groups: int | None) -> tuple[np.ndarray, int]:
    s = np.asarray(s)
    if s.size and not np.issubdtype(s.dtype, np.integer):
        if np.any(np.asarray(s, dtype=float) % 1 != 0):
            raise FairDashError("The sensitive attribute must be coded as group numbers 0, 1, ...")
        s = s.astype(int)
    if n_groups is None:
        n_groups = int(s.max()) + 1 if s.size else 0
    return s.astype(int, copy=False), n_groups


def group_counts(y, s, n_groups: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows and positives per group: ``(n_s, n_pos_s)``."""
    y = np.asarray(y).astype(int, copy=False)
    s, n_groups = as_codes(s, n_groups)
    if y.shape != s.shape:
        raise FairDashError("The label and the sensitive attribute have different lengths.")
    n = np.bincount(s, minlength=n_groups).astype(int)
    n_pos = np.bincount(s, weights=(y == 1), minlength=n_groups).astype(int)
    return n, n_pos


def base_rates(y, s, n_groups: int | None = None) -> np.ndarray:
    """``PR_b^s = P(y=1 | s)`` per group. A group with no rows is an error."""
    n, n_pos = group_counts(y, s, n_groups)
    if n.size == 0:
        raise FairDashError("There are no rows to compute base rates from.")
    empty = np.flatnonzero(n == 0)
    if empty.size:
        raise FairDashError(f"Group {int(empty[0])} of the sensitive attribute has no rows.")
    return n_pos / n


def group_shares(s, n_groups: int | None = None) -> np.ndarray:
    """``P(s = j)`` per group; ``group_shares(s)[0]`` is the paper's ``p = P(s=0)``."""
    s, n_groups = as_codes(s, n_groups)
    if s.size == 0:
        raise FairDashError("There are no rows to compute group shares from.")
    return np.bincount(s, minlength=n_groups) / s.size


PRESETS = ("min", "avg", "max")


def presets(rates) -> dict[str, float]:
    """The paper's target presets: ``min`` and ``max`` of the group base rates and ``avg``, the mean of
    the group base rates (the paper's default; with k > 2 groups the mean of all k, not (min + max) / 2)."""
    rates = np.asarray(rates, dtype=float)
    return {"min": float(rates.min()), "avg": float(rates.mean()), "max": float(rates.max())}


# --------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------
def disadvantaged_group(rates, favourable: bool = True) -> int:
    """The group the data disadvantages (the first of equals): where a positive label is favourable for the
    person (a loan granted) the one with the lowest base rate; where it is unfavourable (rearrest, default)
    the one with the highest."""
    rates = np.asarray(rates, dtype=float)
    return int(np.argmin(rates) if favourable else np.argmax(rates))


def check_target_rate(target_rate) -> np.ndarray:
    """A target rate must lie strictly between 0 and 1 (at 0 or 1 the model would predict one class)."""
    t = np.asarray(target_rate, dtype=float)
    if not np.all(np.isfinite(t)):
        raise FairDashError("The target positive rate must be a number between 0 and 1.")
    if np.any(t <= 0.0) or np.any(t >= 1.0):
        raise FairDashError(
            "The target positive rate must be strictly between 0 and 1: at 0 or 1 every prediction "
            "would be the same class, so there is nothing to learn."
        )
    return t


def check_base_rates(rates, group_names=None) -> np.ndarray:
    rates = np.asarray(rates, dtype=float)
    for j, r in enumerate(rates):
        name = group_names[j] if group_names is not None else f"group {j}"
        if r <= 0.0:
            raise FairDashError(
                f"{name} has no positive labels in the training data, so its base rate is 0 and no "
                "transition to a target rate can be estimated. Choose another label or group."
            )
        if r >= 1.0:
            raise FairDashError(
                f"{name} has only positive labels in the training data (base rate 1), so no "
                "transition to a target rate can be estimated. Choose another label or group."
            )
    return rates


def check_delta(delta) -> float:
    delta = float(delta)
    if not (0.0 < delta <= 1.0) or not np.isfinite(delta):
        raise FairDashError("The keep-rate delta must lie in (0, 1].")
    return delta


# --------------------------------------------------------------------------------------------------
# Transition probabilities
# --------------------------------------------------------------------------------------------------
def dp_transition_probabilities(base_rate, target_rate, delta: float = 1.0, group_names=None) -> np.ndarray:
    """``P(ybar=1 | y, s)`` for demographic parity, shape ``(G, 2)`` indexed ``[s, y]``.

    If ``PR_t > PR_b^s``: ``P(ybar=1|y=1) = delta``, ``P(ybar=1|y=0) = (PR_t - delta PR_b) / (1 - PR_b)``;
    else ``P(ybar=1|y=0) = 1 - delta``, ``P(ybar=1|y=1) = (PR_t - (1-delta)(1-PR_b)) / PR_b``.
    ``P(ybar=1|s) = PR_t`` holds exactly. A ``delta`` that leaves [0, 1] is rejected, and so is one that
    makes a group's target labels no more likely positive for ``y = 1`` than for ``y = 0``
    (``P(ybar=1|y=1) <= P(ybar=1|y=0)``: a model trained on it ranks people backwards, or learns nothing),
    which happens exactly when ``delta <= PR_t`` for a group below the target or ``delta <= 1 - PR_t`` for
    one above it; the equality-of-opportunity path refuses the same (``TPR_t + TNR_t <= 1``).
    """
    r = np.atleast_1d(np.asarray(base_rate, dtype=float))
    t = np.broadcast_to(np.asarray(target_rate, dtype=float), r.shape)
    delta = check_delta(delta)
    out = np.empty(r.shape + (2,))
    up = t > r
    with np.errstate(divide="ignore", invalid="ignore"):
        p1_y0_up = (t - delta * r) / (1.0 - r)
        p1_y1_down = (t - (1.0 - delta) * (1.0 - r)) / r
    out[..., 1] = np.where(up, delta, p1_y1_down)
    out[..., 0] = np.where(up, p1_y0_up, 1.0 - delta)
    # a degenerate group (base rate 0 or 1) has one free entry; fill it with delta's choice
    out[..., 1] = np.where((~up) & (r <= 0.0), delta, out[..., 1])
    out[..., 0] = np.where(up & (r >= 1.0), 1.0 - delta, out[..., 0])
    if np.any(out < -_EPS) or np.any(out > 1 + _EPS):
        raise FairDashError(
            f"A keep-rate delta of {delta:g} cannot reach this target rate: some transition "
            "probability would leave [0, 1]. Use a larger delta (1 always works)."
        )
    out = np.clip(out, 0.0, 1.0)
    informative = (r > 0.0) & (r < 1.0)  # a group with one label value has no order to keep
    backwards = np.flatnonzero(informative.ravel() & (out[..., 1] - out[..., 0] <= _EPS).ravel())
    if backwards.size:
        j = int(backwards[0])
        name = group_names[j] if group_names is not None and j < len(group_names) else f"group {j}"
        floor = float(t.ravel()[j] if up.ravel()[j] else 1.0 - t.ravel()[j])
        p1, p0 = out.reshape(-1, 2)[j, 1], out.reshape(-1, 2)[j, 0]
        raise FairDashError(
            f"A keep-rate delta of {delta:g} at PR_t = {float(t.ravel()[j]):.3f} makes {name}'s target label "
            f"positive no more often for observed positives than for negatives (P(ybar=1|y=1) = {p1:.3f}, "
            f"P(ybar=1|y=0) = {p0:.3f}), so a model trained on it would rank people backwards: use a delta "
            f"above {floor:.3f} (1 always works)."
        )
    return out


def eo_transition_probabilities(tpr_target, tnr_target, n_groups: int = 2) -> np.ndarray:
    """``P(ybar=1 | y, s)`` for explicit targets: ``TPR_t^s = P(ybar=1|y=1,s)``, ``TNR_t^s = P(ybar=0|y=0,s)``."""
    tpr = np.broadcast_to(np.asarray(tpr_target, dtype=float), (n_groups,))
    tnr = np.broadcast_to(np.asarray(tnr_target, dtype=float), (n_groups,))
    for name, v in (("true positive rate", tpr), ("true negative rate", tnr)):
        if not np.all(np.isfinite(v)) or np.any(v < 0) or np.any(v > 1):
            raise FairDashError(f"The target {name} must lie between 0 and 1.")
    out = np.empty((n_groups, 2))
    out[:, 1] = tpr
    out[:, 0] = 1.0 - tnr
    return out


def implied_target_rates(p_ybar1_given_y, rates) -> np.ndarray:
    """``P(ybar=1 | s) = P(ybar=1|y=1,s) PR_b + P(ybar=1|y=0,s) (1 - PR_b)``."""
    p = np.asarray(p_ybar1_given_y, dtype=float)
    r = np.asarray(rates, dtype=float)
    return p[..., 1] * r + p[..., 0] * (1.0 - r)


def bayes_d(p_ybar1_given_y, rates) -> np.ndarray:
    """The likelihood table ``d[s, ybar] = P(y=1 | ybar, s)`` by Bayes' rule.

    ``d[s, 1] = P(ybar=1|y=1,s) PR_b / P(ybar=1|s)``, ``d[s, 0] = P(ybar=0|y=1,s) PR_b / P(ybar=0|s)``.
    Where ``P(ybar|s) = 0`` (a ybar value that never occurs) the entry is set to ``PR_b``: it is never used.
    """
    p = np.asarray(p_ybar1_given_y, dtype=float)
    r = np.asarray(rates, dtype=float)
    q1 = implied_target_rates(p, r)
    d = np.empty(p.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        d[..., 1] = np.where(q1 > _EPS, p[..., 1] * r / q1, r)
        d[..., 0] = np.where(1.0 - q1 > _EPS, (1.0 - p[..., 1]) * r / (1.0 - q1), r)
    return np.clip(d, 0.0, 1.0)


# --------------------------------------------------------------------------------------------------
# Theorem 1 and Theorem 2
# --------------------------------------------------------------------------------------------------
def t_general(p_ybar1_given_y) -> np.ndarray:
    """Theorem 1: ``t_s = |(m_s + 2 b_s - 1) / (2 m_s)|`` with ``m_s = P(ybar=1|y=1) - P(ybar=1|y=0)``,
    ``b_s = P(ybar=1|y=0)``. ``inf`` where ``m_s = 0``. The flipped region is one-sided (METHOD.md,
    third fix): see :func:`flip_regions`.
    """
    p = np.asarray(p_ybar1_given_y, dtype=float)
    m = p[..., 1] - p[..., 0]
    b = p[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs((m + 2.0 * b - 1.0) / (2.0 * m))
    return np.where(np.abs(m) > _EPS, t, np.inf)


def flip_regions(p_ybar1_given_y) -> list[dict | None]:
    """Where the target changes the Bayes decision, per group (METHOD.md, third fix; the labels themselves
    move at random at every ``eta``: :attr:`TransitionTable.labels_moved`): with ``b_s = P(ybar=1|y=0,s)``,
    ``m_s = P(ybar=1|y=1,s) - b_s > 0`` and ``c_s = (1 - 2 b_s) / (2 m_s)``, the Bayes decision for
    ``ybar`` differs from the one for ``y`` exactly when ``eta(x, s)`` lies between ``c_s`` and 1/2:

    - ``c_s < 1/2``: ``eta`` in ``(c_s, 1/2)``, labels move 0 -> 1 (``{"from": 0, "to": 1}``);
    - ``c_s > 1/2``: ``eta`` in ``(1/2, c_s)``, labels move 1 -> 0;
    - ``c_s = 1/2``: nothing flips (``from``/``to`` are ``None`` and the interval is empty).

    The interval is clipped to [0, 1]. ``None`` for a group whose target labels do not increase with ``y``
    (``m_s <= 0``), where no interval describes the change.
    """
    p = np.atleast_2d(np.asarray(p_ybar1_given_y, dtype=float))
    out: list[dict | None] = []
    for b, p1 in zip(p[:, 0], p[:, 1]):
        m = p1 - b
        if m <= _EPS:
            out.append(None)
            continue
        c = (1.0 - 2.0 * b) / (2.0 * m)
        if abs(c - 0.5) <= 1e-12:
            out.append({"from": None, "to": None, "eta_low": 0.5, "eta_high": 0.5})
        elif c < 0.5:
            out.append({"from": 0, "to": 1, "eta_low": float(max(c, 0.0)), "eta_high": 0.5})
        else:
            out.append({"from": 1, "to": 0, "eta_low": 0.5, "eta_high": float(min(c, 1.0))})
    return out


def t_closed_form(base_rate, target_rate) -> np.ndarray:
    """``t_s`` for ``delta = 1`` (METHOD.md's corrected form of the paper's equation):
    ``(PR_t - PR_b) / (2 (1 - PR_t))`` if ``PR_t > PR_b``, else ``(PR_b - PR_t) / (2 PR_t)``.
    """
    r = np.asarray(base_rate, dtype=float)
    t = np.broadcast_to(np.asarray(target_rate, dtype=float), r.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t > r, (t - r) / (2.0 * (1.0 - t)), (r - t) / (2.0 * t))


def accuracy_ceiling(rates, shares, predicted_rates) -> float:
    """Theorem 2: ``acc <= 1 - sum_s p_s |rhat_s - r_s|`` for a classifier with positive rate
    ``rhat_s`` in group ``s``. Under demographic parity pass one ``PR_t`` for every group."""
    r = np.asarray(rates, dtype=float)
    p = np.asarray(shares, dtype=float)
    rhat = np.broadcast_to(np.asarray(predicted_rates, dtype=float), r.shape)
    return float(1.0 - np.sum(p * np.abs(rhat - r)))


def accuracy_at_targets(rates, shares, tpr_target, tnr_target) -> float:
    """The accuracy of any classifier that meets explicit targets exactly: in group ``s`` it is right on
    a share ``TPR_t^s`` of the positives and ``TNR_t^s`` of the negatives, so its accuracy is
    ``sum_s p_s (TPR_t^s r_s + TNR_t^s (1 - r_s))``, whatever else it does. Theorem 2 at the implied
    positive rates only bounds it from above (it lets the positives predicted be the true ones), and with
    both targets below 1 that bound is several points too high (issue 19, item 7)."""
    r = np.asarray(rates, dtype=float)
    p = np.asarray(shares, dtype=float)
    tpr = np.broadcast_to(np.asarray(tpr_target, dtype=float), r.shape)
    tnr = np.broadcast_to(np.asarray(tnr_target, dtype=float), r.shape)
    return float(np.sum(p * (tpr * r + tnr * (1.0 - r))))


def accuracy_ceiling_curve(rates, shares, grid=None) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 2's ceiling under demographic parity for every ``PR_t`` of ``grid`` (default 0..1, 201 points)."""
    grid = np.linspace(0.0, 1.0, 201) if grid is None else np.asarray(grid, dtype=float)
    r = np.asarray(rates, dtype=float)
    p = np.asarray(shares, dtype=float)
    ceiling = 1.0 - np.abs(grid[:, None] - r[None, :]) @ p
    return grid, ceiling


def best_target_rate(rates, shares) -> float:
    """The ``PR_t`` that maximises the ceiling: a weighted median of the base rates."""
    r = np.asarray(rates, dtype=float)
    p = np.asarray(shares, dtype=float)
    order = np.argsort(r)
    cum = np.cumsum(p[order])
    return float(r[order][np.searchsorted(cum, 0.5 - 1e-12)])


# --------------------------------------------------------------------------------------------------
# The whole readout for one target
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TransitionTable:
    """Everything a target implies for the groups: what the slider readouts show and what the fair
    likelihood needs (``d``). Arrays are indexed by group code."""

    base_rates: np.ndarray
    group_shares: np.ndarray
    target_rates: np.ndarray  # P(ybar=1 | s), equal across groups under demographic parity
    p_ybar1_given_y: np.ndarray  # (G, 2) indexed [s, y]
    d: np.ndarray  # (G, 2) indexed [s, ybar]: P(y=1 | ybar, s)
    t: np.ndarray  # Theorem 1's t_s
    accuracy_ceiling: float  # Theorem 2 at the target rates; explicit TPR/TNR targets: the accuracy at them
    criterion: str = DEFAULT  # its criterion's name, as a model file's state and ``rates --json`` hold it
    delta: float = 1.0
    group_names: tuple = field(default=())

    @property
    def n_groups(self) -> int:
        return int(self.base_rates.shape[0])

    @property
    def labels_moved(self) -> np.ndarray:
        """Shares of each group's labels the transition changes, ``(G, 2)``: ``[:, 0]`` from 0 to 1
        (``P(ybar=1|y=0,s) (1 - PR_b^s)``), ``[:, 1]`` from 1 to 0 (``P(ybar=0|y=1,s) PR_b^s``). Each is
        drawn at random from the whole class, whatever a person's chance of a positive label; for
        ``delta = 1`` one of them is ``|PR_t - PR_b^s|`` and the other 0."""
        p, r = self.p_ybar1_given_y, self.base_rates
        return np.column_stack([p[:, 0] * (1.0 - r), (1.0 - p[:, 1]) * r])

    def to_dict(self) -> dict:
        """Plain-JSON form, groups keyed "0", "1", ... (the ``rates --json`` layout)."""
        g = range(self.n_groups)
        return {
            "criterion": self.criterion,
            "delta": self.delta,
            "base_rates": {str(j): float(self.base_rates[j]) for j in g},
            "group_share": {str(j): float(self.group_shares[j]) for j in g},
            "target_rates": {str(j): float(self.target_rates[j]) for j in g},
            "t": {str(j): _finite_or_none(self.t[j]) for j in g},
            "transition": {
                str(j): {
                    "p_ybar1_given_y1": float(self.p_ybar1_given_y[j, 1]),
                    "p_ybar1_given_y0": float(self.p_ybar1_given_y[j, 0]),
                    "p_y1_given_ybar0": float(self.d[j, 0]),
                    "p_y1_given_ybar1": float(self.d[j, 1]),
                }
                for j in g
            },
            "ceiling_at_target": float(self.accuracy_ceiling),
            "flips": {str(j): f for j, f in zip(g, flip_regions(self.p_ybar1_given_y))},
            "labels_moved": {str(j): {"0_to_1": float(self.labels_moved[j, 0]),
                                      "1_to_0": float(self.labels_moved[j, 1])} for j in g},
        }


def _finite_or_none(x):
    x = float(x)
    return x if np.isfinite(x) else None


def transition_table(
    rates,
    shares,
    target_rate,
    delta: float = 1.0,
    group_names=None,
    allow_degenerate: bool = False,
) -> TransitionTable:
    """The demographic-parity table for one target rate ``PR_t`` in (0, 1).

    Groups with a base rate of 0 or 1 are an error unless ``allow_degenerate`` (used per stratum for
    conditional parity), where their ``d`` row says nothing about ``ybar``.
    """
    rates = np.asarray(rates, dtype=float)
    shares = np.asarray(shares, dtype=float)
    t_rate = float(check_target_rate(target_rate))
    if not allow_degenerate:
        check_base_rates(rates, group_names)
    p = dp_transition_probabilities(rates, t_rate, delta, group_names)
    return TransitionTable(
        base_rates=rates,
        group_shares=shares,
        target_rates=np.full(rates.shape, t_rate),
        p_ybar1_given_y=p,
        d=bayes_d(p, rates),
        t=t_general(p),
        accuracy_ceiling=accuracy_ceiling(rates, shares, t_rate),
        criterion=DP.name,
        delta=float(delta),
        group_names=tuple(group_names or ()),
    )


def eo_transition_table(rates, shares, tpr_target, tnr_target, group_names=None) -> TransitionTable:
    """The table for explicit TPR/TNR targets (one pair for all groups, or one per group).

    ``P(ybar=1|s) = TPR_t PR_b + (1 - TNR_t)(1 - PR_b)``; ``d`` follows by Bayes with that denominator.
    The ceiling is the exact accuracy of a classifier that meets the targets (:func:`accuracy_at_targets`),
    not Theorem 2 at the implied positive rates, which overstates it.
    """
    rates = check_base_rates(rates, group_names)
    shares = np.asarray(shares, dtype=float)
    p = eo_transition_probabilities(tpr_target, tnr_target, rates.shape[0])
    implied = implied_target_rates(p, rates)
    return TransitionTable(
        base_rates=rates,
        group_shares=shares,
        target_rates=implied,
        p_ybar1_given_y=p,
        d=bayes_d(p, rates),
        t=t_general(p),
        accuracy_ceiling=accuracy_at_targets(rates, shares, p[:, 1], 1.0 - p[:, 0]),
        criterion=EO.name,
        delta=1.0,
        group_names=tuple(group_names or ()),
    )


def identity_table(n_groups: int = 2) -> np.ndarray:
    """The ``d`` table that turns the fair likelihood into the ordinary one: ``d[s] = (0, 1)``."""
    d = np.zeros((n_groups, 2))
    d[:, 1] = 1.0
    return d


def row_d(d, s) -> np.ndarray:
    """Each row's ``(d[s_i, 0], d[s_i, 1])``, shape ``(n, 2)``."""
    return np.asarray(d, dtype=float)[np.asarray(s, dtype=int)]
