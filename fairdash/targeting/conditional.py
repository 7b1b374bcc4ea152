"""Conditional demographic parity (docs/METHOD.md): the paper's transition tables per stratum of a legitimate
factor, each stratum's groups moved to that stratum's target rate (``conditional_transition_tables``), kept as
one :class:`ConditionalTables`."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .targets import as_codes, group_counts, presets, transition_table


@dataclass(frozen=True)
class ConditionalTables:
    """Per-stratum tables for conditional demographic parity; ``cell_d[k]`` is stratum ``k``'s ``d``."""

    strata: tuple  # stratum values, index k
    tables: tuple  # TransitionTable per stratum
    cell_counts: np.ndarray  # (K, G) rows per (stratum, group) cell
    warnings: tuple

    def row_d(self, s, strata_codes) -> np.ndarray:
        d = np.stack([tb.d for tb in self.tables])  # (K, G, 2)
        return d[np.asarray(strata_codes, dtype=int), np.asarray(s, dtype=int)]

    @property
    def accuracy_ceiling(self) -> float:
        """Theorem 2 summed over strata, each weighted by its share of the rows."""
        w = self.cell_counts.sum(axis=1) / self.cell_counts.sum()
        return float(np.sum([wk * tb.accuracy_ceiling for wk, tb in zip(w, self.tables)]))


def conditional_transition_tables(
    y, s, strata_codes, target_rates=None, strata=None, n_groups=None, delta: float = 1.0, min_cell: int = 20,
    target_rate=None,
) -> ConditionalTables:
    """Conditional demographic parity: ``P(ybar=1 | l, s)`` equal across ``s`` in every stratum ``l``.

    ``target_rate``: a number is every stratum's ``PR_t(l)``; a preset name (``"min"``, ``"avg"``,
    ``"max"``; ``None`` = ``"avg"``) is taken of each stratum's own base rates. ``target_rates`` maps a
    stratum index to its own ``PR_t(l)`` and overrides both for that stratum.
    Cells smaller than ``min_cell`` rows, or with base rate 0 or 1, produce warnings; a stratum whose
    groups all share one base rate of 0 or 1 keeps it unchanged.
    """
    y = np.asarray(y).astype(int)
    s, n_groups = as_codes(s, n_groups)
    codes = np.asarray(strata_codes, dtype=int)
    k_count = int(codes.max()) + 1 if codes.size else 0
    strata = tuple(strata) if strata is not None else tuple(range(k_count))
    tables, counts, warnings = [], [], []
    for k in range(k_count):
        mask = codes == k
        n, n_pos = group_counts(y[mask], s[mask], n_groups)
        counts.append(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(n > 0, n_pos / np.maximum(n, 1), np.nan)
        present = np.isfinite(r)
        if not present.any():
            r = np.zeros(n_groups)
        r_fill = np.where(present, r, np.nanmean(r) if present.any() else 0.0)
        for j in range(n_groups):
            if n[j] < min_cell:
                warnings.append(
                    f"Stratum {strata[k]!s}, group {j}: only {int(n[j])} rows; its rates are unreliable."
                )
            elif r[j] in (0.0, 1.0):
                warnings.append(
                    f"Stratum {strata[k]!s}, group {j}: every label is {int(r[j])}; its rows carry no "
                    "information about the target label."
                )
        if target_rates is not None and k in target_rates:
            t_k = float(target_rates[k])
        elif target_rate is None or isinstance(target_rate, str):
            t_k = presets(r_fill)[target_rate or "avg"]
        else:
            t_k = float(target_rate)
        t_k = float(np.clip(t_k, 1e-6, 1 - 1e-6))
        shares = n / max(n.sum(), 1)
        tables.append(transition_table(r_fill, shares, t_k, delta=delta, allow_degenerate=True))
    return ConditionalTables(tuple(strata), tuple(tables), np.array(counts).reshape(k_count, n_groups), tuple(warnings))
