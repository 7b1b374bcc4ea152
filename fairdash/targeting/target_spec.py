"""The one specification of a fairness target, from the slider to the report.

What the user asked for, validated once by :func:`make_target_spec` and handed, unchanged, to the
rates readout, FairLR/FairGP, ``fit_model``/``run_experiment``, the results rows, the command line, the
pages, the configuration JSON, the report and the model file:

- ``criterion``: the name of a criterion of :mod:`fairdash.targeting.criteria`, ``dp`` (demographic parity) or
  ``eo`` (equality of opportunity);
- one target for every group, either ``target_rate`` (a number ``PR_t`` in (0, 1)) or ``preset``
  (``"min"``, ``"avg"``, ``"max"`` of the training split's group base rates; the paper's default is
  ``"avg"``), or explicit ``tpr_target``/``tnr_target`` (equality of opportunity only; a missing one takes
  the default of docs/METHOD.md, ``TPR_t = 1``, ``TNR_t = 0.8``: :data:`DEFAULT_TPR_TARGET`,
  :data:`DEFAULT_TNR_TARGET`, which the command line and the dashboard use too);
- ``delta``, the keep-rate of demographic parity;
- ``strata_column``, the legitimate factor of conditional demographic parity. With strata a number
  ``PR_t`` is every stratum's target, a preset is taken of each stratum's own base rates, and
  ``stratum_target_rates`` (stratum code -> ``PR_t``) overrides single strata;
- ``chosen_rate``, the ``PR_t`` the analyst last chose: ``target_rate`` while one is in force, kept beside
  explicit targets and presets (the dashboard's slider comes back at it). It is no part of the target: the
  maths, the models, equality, ``to_dict`` (the files) and the cache keys ignore it.

The maths it resolves to lives in :mod:`fairdash.targeting.targets`; this module only says which of it applies.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ..errors import FairDashError
from . import targets as T
from .conditional import ConditionalTables, conditional_transition_tables

# (the criteria's names are re-exported: a TargetSpec's callers read them here)
from .criteria import CRITERIA, CRITERIA_INFO, CRITERION_NAMES, DEFAULT, DP, EO, Criterion, criterion_info  # noqa: F401
from .decision import PAPER_RULE, check_rule, check_with_strata, rule_info

# Explicit targets' defaults (docs/METHOD.md: keep every positive; TNR_t is the user's dial). The one
# home of these numbers: the command line's help and the dashboard's inputs read them from here.
DEFAULT_TPR_TARGET = 1.0
DEFAULT_TNR_TARGET = 0.8

@dataclass(frozen=True)
class RateTargets:
    """What a target asks of decisions, resolved on the training split: each group's target for the
    ``criterion``'s rate (its :attr:`rate`, ``"pr"`` or ``"tpr"``), the overall target positive rate, and with a
    legitimate factor each (stratum, group) cell's target positive rate (``cells``, shape (K, G))."""

    group: np.ndarray
    overall: float
    criterion: Criterion = DP
    cells: np.ndarray | None = None
    other: np.ndarray | None = None  # explicit TPR/TNR targets: each group's TNR target, reported beside the TPR

    @property
    def rate(self) -> str:
        """The name of the rate the group targets are of (``"pr"``, ``"tpr"``): its results columns' name."""
        return self.criterion.rate


@dataclass(frozen=True)
class ResolvedTarget:
    """The one target a model is measured against (``measure.evaluate``): the run's ``criterion``, what
    the model trained for (``spec``; ``None`` for a model that ignores targets), the PR_t it resolved to
    (``rate``; ``None`` where no single rate was used) and each group's target on the training split
    (``goal``; ``None`` where none resolves)."""

    criterion: Criterion = DP
    spec: "TargetSpec | None" = None
    rate: float | None = None
    goal: RateTargets | None = None


@dataclass(frozen=True)
class TargetSpec:
    """A validated target request. Build it with :func:`make_target_spec` (or :meth:`from_dict`)."""

    # the criterion's name, as the configuration, the session and the model file hold it (to_dict); the
    # Criterion itself is :attr:`criterion_info`
    criterion: str = DEFAULT
    target_rate: float | None = None
    preset: str | None = "avg"
    delta: float = 1.0
    tpr_target: float | None = None
    tnr_target: float | None = None
    strata_column: str | None = None
    stratum_target_rates: tuple | None = None  # ((stratum code, PR_t), ...)
    # how scores become decisions (fairdash.targeting.decision): threshold | overall-rate | group-rates
    decision: str = PAPER_RULE
    # the PR_t the analyst last chose (see the module's notes): never compared, shown, saved nor used by the maths
    chosen_rate: float | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.target_rate is not None:  # a PR_t in force is the one chosen (a spec built without make_target_spec)
            object.__setattr__(self, "chosen_rate", self.target_rate)

    # ---------------------------------------------------------------------------------------------
    @property
    def explicit(self) -> bool:
        """Explicit TPR/TNR targets (equality of opportunity's second mode)."""
        return self.tpr_target is not None

    @property
    def conditional(self) -> bool:
        return self.strata_column is not None

    @property
    def mode(self) -> str:
        """``"explicit"`` (TPR/TNR), ``"rate"`` (one number) or ``"preset"``."""
        return "explicit" if self.explicit else ("rate" if self.target_rate is not None else "preset")

    def edited(self, **changes) -> "TargetSpec":
        """This request with some settings changed (``make_target_spec``'s arguments), validated again by
        :func:`make_target_spec`: the one way a target is edited (the dashboard's controls, a sweep's
        points). An invalid result is a :class:`FairDashError`."""
        unknown = sorted(set(changes) - set(self.__dataclass_fields__))
        if unknown:
            raise TypeError(f"unknown target setting(s): {', '.join(unknown)}")
        if changes.get("target_rate") is not None and "preset" not in changes:
            changes["preset"] = None  # a number replaces the preset
        if changes.get("tpr_target") is not None or changes.get("tnr_target") is not None:
            changes = {"target_rate": None, "preset": None, "delta": 1.0, "strata_column": None,
                       "stratum_target_rates": None, **changes}
        settings = {name: getattr(self, name) for name in self.__dataclass_fields__}
        return make_target_spec(**{**settings, **changes})

    def with_rate(self, rate) -> "TargetSpec":
        """The same request at another ``PR_t`` (a number or a preset name): one point of a sweep."""
        return self.edited(target_rate=rate, preset=None)

    def rate_for(self, base_rates) -> float | None:
        """The single ``PR_t`` this spec trains every group on, given the training split's base rates;
        ``None`` where there is none (explicit targets; a preset taken per stratum)."""
        if self.explicit or (self.conditional and self.target_rate is None):
            return None
        if self.target_rate is not None:
            return float(self.target_rate)
        return float(T.presets(base_rates)[self.preset])

    # ---------------------------------------------------------------------------------------------
    def table(self, base_rates, shares, group_names=None) -> T.TransitionTable:
        """The transition table over the groups (without strata; for a conditional spec, the table of the
        whole training split at the same target, as a reference)."""
        rates = np.asarray(base_rates, dtype=float)
        if self.explicit:
            return T.eo_transition_table(rates, shares, self.tpr_target, self.tnr_target, group_names)
        rate = self.target_rate if self.target_rate is not None else T.presets(rates)[self.preset]
        table = T.transition_table(rates, shares, rate, self.delta, group_names)
        return replace(table, criterion=self.criterion)

    def conditional_tables(self, y, s, strata_codes, strata_names=None, n_groups=None) -> ConditionalTables:
        """One table per stratum (conditional demographic parity)."""
        if self.explicit or not self.criterion_info.supports_strata:
            raise FairDashError("Conditional parity (a legitimate factor) is a demographic-parity target; "
                                "it cannot be combined with equality of opportunity.")
        rate = self.target_rate if self.target_rate is not None else self.preset
        return conditional_transition_tables(y, s, strata_codes, target_rates=self.stratum_rates_dict(),
                                               strata=strata_names, n_groups=n_groups, delta=self.delta,
                                               target_rate=rate)

    def rate_targets(self, y, s, strata=None, n_groups=None) -> "RateTargets":
        """What this target asks of decisions on the rows ``(y, s[, strata])`` (the training split):
        each group's target for the criterion's rate (positive rate under demographic parity, true
        positive rate under equality of opportunity) and the overall target positive rate. Conditional:
        each (stratum, group) cell's target, and a group's target is its cells' targets weighted by how
        its rows fall in the strata."""
        y = np.asarray(y).astype(int)
        s = np.asarray(s).astype(int)
        G = int(n_groups or (s.max() + 1))
        crit = self.criterion_info
        if self.conditional and strata is not None:
            tables = self.conditional_tables(y, s, strata, n_groups=G)
            cells = np.asarray(tables.cell_counts, dtype=float)  # (K, G)
            rates = np.array([tb.target_rates for tb in tables.tables])  # (K, G)
            with np.errstate(invalid="ignore", divide="ignore"):
                group = (cells * rates).sum(axis=0) / cells.sum(axis=0)
            return RateTargets(group, float((cells * rates).sum() / cells.sum()), crit, rates)
        table = self.table(T.base_rates(y, s, G), T.group_shares(s, G))
        positives = crit.positives_only  # a rate of the positive rows: the TPR
        per_group = table.p_ybar1_given_y[:, 1] if positives else table.target_rates
        if positives:  # one common TPR for every group: equality of opportunity equalises
            per_group = np.full(G, common_tpr(per_group, y, s, G))
        other = np.full(G, float(self.tnr_target)) if self.explicit else None
        return RateTargets(np.asarray(per_group, dtype=float), float(np.dot(table.target_rates, table.group_shares)),
                           crit, None, other)

    @property
    def decision_rule(self):
        return rule_info(self.decision)

    @property
    def criterion_info(self) -> Criterion:
        """The :class:`~fairdash.targeting.criteria.Criterion` this target is for (its ``criterion`` is the name)."""
        return criterion_info(self.criterion)

    def stratum_rates_dict(self) -> dict | None:
        return None if self.stratum_target_rates is None else {int(k): float(v) for k, v in self.stratum_target_rates}

    # ---------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The configuration format (plain JSON); :meth:`from_dict` reads it back."""
        d = asdict(self)
        for name in _NOT_SAVED:  # the configuration's format is that of the target alone
            del d[name]
        d["stratum_target_rates"] = (None if self.stratum_target_rates is None
                                     else {str(k): float(v) for k, v in self.stratum_target_rates})
        return d

    @classmethod
    def from_dict(cls, d) -> "TargetSpec":
        if isinstance(d, TargetSpec):
            return d
        if not isinstance(d, dict):
            raise FairDashError("The configuration's target is not a set of named settings.")
        unknown = sorted((set(d) - set(cls.__dataclass_fields__)) | (set(d) & set(_NOT_SAVED)))
        if unknown:
            raise FairDashError(f"The configuration's target has unknown setting(s): {', '.join(unknown)}.")
        return make_target_spec(**d)

    def describe(self, resolved_rate: float | None = None) -> str:
        """The target in words, e.g. ``PR_t = 0.213 (avg preset) for every group``."""
        if self.explicit:
            text = f"TPR_t = {self.tpr_target:.3f}, TNR_t = {self.tnr_target:.3f} in every group"
        elif self.target_rate is not None:
            text = f"PR_t = {self.target_rate:.3f} for every group" + (" in every stratum" if self.conditional else "")
        elif self.conditional:
            text = f"each stratum's own {self.preset} preset"
        else:
            shown = "" if resolved_rate is None else f" = {resolved_rate:.3f}"
            text = f"PR_t{shown} ({self.preset} preset of the training split's base rates) for every group"
        if self.stratum_target_rates:
            text += " (" + ", ".join(f"stratum {k}: {v:.3f}" for k, v in self.stratum_target_rates) + ")"
        if self.delta != 1.0:
            text += f", keep-rate delta {self.delta:g}"
        text = CRITERION_NAMES[self.criterion] + ": " + text
        if self.conditional:
            text += f"; conditional on `{self.strata_column}`"
        if self.decision_rule.aims_at_target:
            text += f"; decided by {self.decision_rule.named}"
        return text


_NOT_SAVED = ("chosen_rate",)  # a TargetSpec's fields that are no part of its configuration (to_dict, from_dict)


def common_tpr(group_tprs, y, s, n_groups: int) -> float:
    """The one TPR equality of opportunity asks of every group: the TPR of the target labels over all
    groups together, ``sum_g P(ybar=1|y=1,g) n_g+ / sum_g n_g+`` (``n_g+``: group g's positives among the
    rows ``(y, s)``). With explicit targets every group's TPR target is the same and this is it; with one
    ``PR_t`` the groups' own target-label TPRs differ by construction (1 for a group whose base rate is
    below ``PR_t``), and a per-group rule held to them would not equalise (docs/METHOD.md)."""
    pos = np.bincount(np.asarray(s).astype(int), weights=np.asarray(y, dtype=float), minlength=n_groups)[:n_groups]
    tprs = np.asarray(group_tprs, dtype=float)
    if pos.sum() <= 0:
        return float(np.mean(tprs))
    return float(np.dot(tprs, pos) / pos.sum())


# --------------------------------------------------------------------------------------------------
def _number(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise FairDashError(f"The {what} must be a number; got {value!r}.") from None
    if not np.isfinite(v):
        raise FairDashError(f"The {what} must be a finite number.")
    return v


def _one_target(name: str, value) -> float:
    v = _number(value, f"target {name}")
    if not 0.0 <= v <= 1.0:
        raise FairDashError(f"The target {name} must lie between 0 and 1; got {v:g}.")
    return v


def _chosen(rate) -> float | None:
    """A TargetSpec's ``chosen_rate``: a number strictly inside (0, 1), else none (a memory, never a refusal)."""
    try:
        v = float(rate)
    except (TypeError, ValueError):
        return None
    return v if 0.0 < v < 1.0 else None


def make_target_spec(criterion: str | None = DEFAULT, target_rate=None, delta=1.0, tpr_target=None, tnr_target=None,
                     strata_column: str | None = None, stratum_target_rates=None, preset: str | None = None,
                     decision: str | None = PAPER_RULE, chosen_rate=None) -> TargetSpec:
    """Build and validate the target request: the one place where criterion and targets are resolved.

    ``criterion`` is a criterion's name as the command line, a page's widget or a file gives it (``None``:
    ``criteria.DEFAULT``); the request keeps the name (:attr:`TargetSpec.criterion_info` is the criterion).
    ``target_rate`` is a number in (0, 1), a preset name (``"min"``, ``"avg"``, ``"max"``) or ``None``
    (``preset``, default ``"avg"``). Explicit ``tpr_target``/``tnr_target`` need equality of opportunity (``EO``); a
    missing one is :data:`DEFAULT_TPR_TARGET` / :data:`DEFAULT_TNR_TARGET`; they exclude ``PR_t``, ``delta != 1`` and
    strata.
    Strata (conditional parity) need demographic parity. ``decision`` is the rule that turns scores
    into decisions (:mod:`fairdash.targeting.decision`); ``group-rates`` cannot be combined with strata.
    ``chosen_rate`` is the ``PR_t`` the analyst last chose, kept where no number ``target_rate`` is in force
    (which it always is where there is one; one outside (0, 1) is dropped). Every refusal is a
    :class:`FairDashError`.
    """

    decision = check_rule(decision)
    check_with_strata(decision, strata_column)
    crit = criterion_info(DEFAULT if criterion is None else str(criterion).strip().lower())
    delta = T.check_delta(_number(delta, "keep-rate delta"))
    strata_column = (str(strata_column) if strata_column not in (None, "") else None)
    rate_given = target_rate is not None or preset not in (None, "avg")  # anything but the default
    if isinstance(target_rate, str):
        name = target_rate.strip().lower()
        if name in T.PRESETS:
            target_rate, preset = None, name
        else:
            target_rate = _number(name, "target positive rate")
    if preset is not None:
        preset = str(preset).strip().lower()
        if preset not in T.PRESETS:
            raise FairDashError(f"Unknown target preset {preset!r}: use 'min', 'avg' or 'max'.")
    rates = None
    if stratum_target_rates:
        items = stratum_target_rates.items() if isinstance(stratum_target_rates, dict) else stratum_target_rates
        rates = tuple(sorted((int(k), float(T.check_target_rate(_number(v, "stratum target rate")))) for k, v in items))

    chosen = _chosen(chosen_rate)
    if tpr_target is not None or tnr_target is not None:
        spec = _explicit_target(crit, tpr_target, tnr_target, rate_given or bool(rates), delta, strata_column,
                                decision)
        return replace(spec, chosen_rate=chosen)

    if strata_column is not None and not crit.supports_strata:
        raise FairDashError("A legitimate factor (conditional parity) is a demographic-parity target; it cannot be "
                            "combined with equality of opportunity.")
    if target_rate is not None:
        target_rate = float(T.check_target_rate(_number(target_rate, "target positive rate")))
        return TargetSpec(criterion=crit.name, target_rate=target_rate, preset=None, delta=delta,
                          strata_column=strata_column, stratum_target_rates=rates, decision=decision,
                          chosen_rate=target_rate)
    return TargetSpec(criterion=crit.name, target_rate=None, preset=preset or "avg", delta=delta,
                      strata_column=strata_column, stratum_target_rates=rates, decision=decision, chosen_rate=chosen)


def _explicit_target(criterion: Criterion, tpr_target, tnr_target, rate_given: bool, delta: float, strata_column,
                     decision: str) -> TargetSpec:
    """:func:`make_target_spec` with explicit TPR/TNR targets: equality of opportunity only, no ``PR_t`` (nor
    ``rate_given``: a rate, a preset or strata's rates), no ``delta`` and no strata beside them; ``TPR_t + TNR_t``
    over 1."""
    if not criterion.positives_only:  # explicit TPR/TNR targets: a criterion judged by TPRs
        raise FairDashError(f"Explicit TPR/TNR targets belong to equality of opportunity: choose criterion "
                            f"{EO.name!r} ({EO.words}), or give a target positive rate instead.")
    if rate_given:
        raise FairDashError("A target positive rate PR_t does not apply with explicit TPR/TNR targets: "
                            "give one or the other.")
    if delta != 1.0:
        raise FairDashError("The keep-rate delta does not apply with explicit TPR/TNR targets (they set every "
                            "transition probability); leave delta at 1.")
    if strata_column is not None:
        raise FairDashError("A legitimate factor (conditional parity) cannot be combined with explicit TPR/TNR "
                            "targets.")
    tpr = DEFAULT_TPR_TARGET if tpr_target is None else _one_target("true positive rate", tpr_target)
    tnr = DEFAULT_TNR_TARGET if tnr_target is None else _one_target("true negative rate", tnr_target)
    if tpr + tnr <= 1.0:
        raise FairDashError(f"TPR_t + TNR_t must be more than 1 (got {tpr:g} + {tnr:g}): otherwise the target "
                            "labels no longer follow the observed labels and there is nothing to learn.")
    return TargetSpec(criterion=EO.name, target_rate=None, preset=None, delta=1.0, tpr_target=tpr, tnr_target=tnr,
                      decision=decision)
