"""Splits: train/test by seed (stratified by group and label), the paper's balanced test set, and the
preprocessed arrays of a split (remembered for a live task's recent seeds)."""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..errors import FairDashError
from .preprocess import categorical_as_text, make_preprocessor
from .task import Task


@dataclass
class Split:
    """Row indices into the task: training, test and the balanced test subset (indices into the task too)."""

    seed: int
    train: np.ndarray
    test: np.ndarray
    balanced_test: np.ndarray

    @property
    def n_balanced_dropped(self) -> int:
        return int(len(self.test) - len(self.balanced_test))


def balanced_subset(y, s, idx, seed: int = 0) -> np.ndarray:
    """METHOD.md's balanced test set: for each ``y``, cut every ``(s, y)`` cell of ``idx`` down to the
    size of the smallest cell with that ``y``, so that ``P(s=j | y=i)`` is equal across groups."""
    rng = np.random.default_rng(seed + 7919)
    y = np.asarray(y)[idx]
    s = np.asarray(s)[idx]
    groups = np.unique(s)
    keep = []
    for yv in (0, 1):
        cells = [np.flatnonzero((y == yv) & (s == g)) for g in groups]
        m = min(len(c) for c in cells)
        for c in cells:
            keep.append(rng.choice(c, size=m, replace=False) if len(c) > m else c)
    return np.sort(np.asarray(idx)[np.concatenate(keep)]) if keep else np.asarray(idx)[:0]


def _too_few_words(counts, task) -> str:
    """Which (group, label) combinations are too small to split, named (the group and label names where the task
    gives them)."""
    def group(g):
        names = getattr(task, "group_names", None) or ()
        return repr(str(names[g])) if g < len(names) else f"s={g}"

    def label(v):
        names = getattr(task, "label_names", None) or ()
        return repr(str(names[v])) if v < len(names) else str(v)

    s_name = f" of {task.spec.s_column!r}" if task is not None else ""
    small = [f"group {group(c // 2)}{s_name} has {int(counts[c])} row with label {label(c % 2)} (of "
             f"{int(counts[2 * (c // 2):2 * (c // 2) + 2].sum())} rows in the group)"
             for c in np.flatnonzero((counts > 0) & (counts < 2))]
    return ("Too few rows to split into training and test sets: " + "; ".join(small) + ". Each (group, label) "
            "combination needs at least 2 rows: merge the group with another (the groups of s) or leave its rows out.")


TEST_SIZE = 0.2  # the share of each (s, y) cell held out for testing on every split
TEST_TO_TRAIN = TEST_SIZE / (1 - TEST_SIZE)  # n_test / n_train: how much two random splits' training rows overlap


def split_task(task_or_y, s=None, seed: int = 0, test_size: float = TEST_SIZE) -> Split:
    """80/20 split stratified by the ``(s, y)`` cell, with the balanced test subset.

    Each cell's rows are shuffled with the seed and ``round(test_size * n_cell)`` of them (at least one)
    go to the test set, so every cell keeps its share in both parts."""
    task = task_or_y if isinstance(task_or_y, Task) else None
    if task is not None:
        y, s = task.y, task.s
    else:
        y = np.asarray(task_or_y)
    y, s = np.asarray(y), np.asarray(s)
    cell = s * 2 + y
    counts = np.bincount(cell)
    if counts[counts > 0].min() < 2:
        raise FairDashError(_too_few_words(counts, task))
    rng = np.random.default_rng(seed)
    test = []
    for c in np.flatnonzero(counts):
        rows = rng.permutation(np.flatnonzero(cell == c))
        k = min(max(1, int(round(test_size * len(rows)))), len(rows) - 1)
        test.append(rows[:k])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(len(y)), test, assume_unique=True)
    return Split(seed, train, test, balanced_subset(y, s, test, seed))


@dataclass
class Arrays:
    """A task on one split, preprocessed: what the models train and are scored on."""

    X_train: np.ndarray
    y_train: np.ndarray
    s_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    s_test: np.ndarray
    balanced_test: np.ndarray  # indices into the test arrays
    feature_names: list
    preprocessor: object
    split: Split
    strata_train: np.ndarray | None = None
    strata_test: np.ndarray | None = None
    paper_setup: str | None = None  # the paper's set-up the task is (models that solve as the paper did use it)
    # each stratum code's name with its column: "education = Bachelors" (the worst cell's words)
    strata_names: tuple = ()


def prepare_arrays(task: Task, split: Split) -> Arrays:
    """Fit the preprocessor on the training rows and transform both splits."""
    pre = make_preprocessor(task)
    X = categorical_as_text(task.X, task.categorical_features)
    import warnings as _w

    with _w.catch_warnings():
        _w.simplefilter("ignore", UserWarning)
        Xtr = pre.fit_transform(X.iloc[split.train])
        Xte = pre.transform(X.iloc[split.test])
    pos = {r: i for i, r in enumerate(split.test)}
    bal = np.array([pos[r] for r in split.balanced_test], dtype=int)
    st = task.strata
    arrays = Arrays(
        np.asarray(Xtr, dtype=np.float64), task.y[split.train], task.s[split.train],
        np.asarray(Xte, dtype=np.float64), task.y[split.test], task.s[split.test], bal,
        list(pre.get_feature_names_out()), pre, split,
        None if st is None else st[split.train], None if st is None else st[split.test],
        getattr(task, "paper_setup", None),
        tuple(f"{task.spec.strata_column} = {v}" for v in task.strata_names) if st is not None else (),
    )
    # read-only: nothing downstream may change them, and the fit cache remembers their digests, so a
    # repeated request on the same arrays is answered without hashing the matrix again
    for name in ("X_train", "y_train", "s_train", "X_test", "y_test", "s_test", "balanced_test",
                 "strata_train", "strata_test"):
        a = getattr(arrays, name)
        if isinstance(a, np.ndarray):
            a.setflags(write=False)
    return arrays


# A few recently prepared splits, per live task object: asking again for the same task and seed (the
# dashboard's second Train press, a cached request) reuses them instead of refitting the preprocessing,
# which is most of such a request's time (about 0.5 s on Adult). Entries go with their task; at most
# SPLIT_MEMO_SIZE are kept in all (each Adult split is about 36 MB), least recently used first out.
SPLIT_MEMO_SIZE = 4
_SPLIT_MEMO: dict = {}  # (id(task), seed) -> (weakref to task, Arrays), in use order
_SPLIT_MEMO_LOCK = threading.RLock()


def split_arrays(task: Task, seed: int = 0) -> Arrays:
    """``prepare_arrays(task, split_task(task, seed))``, remembered for the live task object.

    The arrays are read-only, so sharing them is safe; a task is never changed after ``build_task``.
    Safe from several threads (the dashboard's sessions): at worst two threads prepare the same split."""
    import weakref

    key = (id(task), int(seed))
    with _SPLIT_MEMO_LOCK:
        hit = _SPLIT_MEMO.pop(key, None)
        if hit is not None and hit[0]() is task:
            _SPLIT_MEMO[key] = hit  # most recently used last
            return hit[1]
    arrays = prepare_arrays(task, split_task(task, seed=seed))

    def forget(_ref, k=key):
        with _SPLIT_MEMO_LOCK:
            _SPLIT_MEMO.pop(k, None)

    with _SPLIT_MEMO_LOCK:
        _SPLIT_MEMO[key] = (weakref.ref(task, forget), arrays)
        while len(_SPLIT_MEMO) > SPLIT_MEMO_SIZE:
            _SPLIT_MEMO.pop(next(iter(_SPLIT_MEMO)))
    return arrays
