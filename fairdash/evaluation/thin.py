"""Where the numbers rest on few rows (issue 27, item 4): a group whose decision threshold is chosen on
too few training rows, and a group with too few rows in the rows a criterion is judged on (the paper's
balanced test set for parity, the test set for opportunity). One warning line per group, naming it and
the count; the command line prints them before its summaries."""
from __future__ import annotations

import numpy as np

from ..errors import shorten
from ..targeting.criteria import DP, Criterion
from ..targeting.decision import PAPER_RULE, rule_info

MIN_CUT_ROWS = 30  # a group's own threshold chosen on fewer training rows than this is a rough guess
MIN_EVAL_ROWS = 30  # a group's rates measured on fewer rows than this move by 0.1 or more with one row's label


def thin_notes(arrays, group_names, *, criterion: Criterion = DP, rule: str = PAPER_RULE) -> list[str]:
    """The warning lines for one split (``arrays``, :func:`fairdash.data.split_arrays`) of a task with groups
    ``group_names``, for a run judged by ``criterion`` whose decision rule is ``rule``."""

    names = [shorten(n, 60) for n in group_names]
    notes = []
    if rule_info(rule).cuts_per_group:  # one threshold per group, chosen on its own training rows
        among = criterion.rows(arrays.y_train)
        counts = np.bincount(np.asarray(arrays.s_train)[among], minlength=len(names))
        what = criterion.rows_words
        for g, n in enumerate(counts):
            if n < MIN_CUT_ROWS:
                notes.append(f"The decision threshold of group {names[g]!r} ({rule}) is chosen on {int(n)} training "
                             f"row(s){what} only (fewer than {MIN_CUT_ROWS}); its decisions rest on a rough guess.")
    s_test = np.asarray(arrays.s_test)
    if criterion.balanced_eval:
        rows = s_test[np.asarray(arrays.balanced_test, dtype=int)]
        where = "the balanced test set (the paper's protocol)"
    else:
        rows, where = s_test, "the test set"
    counts = np.bincount(rows, minlength=len(names))
    few = [g for g, n in enumerate(counts) if n < MIN_EVAL_ROWS]
    if few:
        per = ", ".join(f"{names[g]!r} {int(counts[g])}" for g in range(len(names)))
        notes.append(f"{where[0].upper()}{where[1:]} holds {len(rows):,} row(s) ({per}); "
                     f"{', '.join(repr(names[g]) for g in few)} {'has' if len(few) == 1 else 'have'} fewer than "
                     f"{MIN_EVAL_ROWS}, so one row moves {'its' if len(few) == 1 else 'their'} measured rates by "
                     f"{1 / max(int(counts[few].min()), 1):.2f} or more.")
    return notes
