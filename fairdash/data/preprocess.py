"""Preprocessing: the scikit-learn ``ColumnTransformer`` fitted on a training split, and the same fitted
transformer as plain numbers (:class:`PlainPreprocessor`) for the pickle-free model file."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import FairDashError
from .profile import MAX_CATEGORIES


def make_preprocessor(task):
    """For a :class:`~fairdash.data.task.Task`, a scikit-learn ``ColumnTransformer``: numeric columns
    scaled (and median-imputed), categorical columns one-hot encoded with unknown categories ignored and the
    rarest levels sharing one column beyond :data:`~fairdash.data.profile.MAX_CATEGORIES` columns a feature. Fit it
    on the training split only."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    num = Pipeline([("impute", SimpleImputer(strategy="median")), ("scale", StandardScaler())])
    cat = Pipeline([
        ("impute", SimpleImputer(strategy="constant", fill_value="(missing)")),
        ("onehot", OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=MAX_CATEGORIES,
                                 sparse_output=False, dtype=np.float64)),
    ])
    return ColumnTransformer(
        [("num", num, list(task.numeric_features)), ("cat", cat, list(task.categorical_features))],
        remainder="drop", sparse_threshold=0.0, verbose_feature_names_out=True,
    )


def categorical_as_text(X: pd.DataFrame, categorical) -> pd.DataFrame:
    """Categorical feature columns as text, so that integer-coded categories one-hot encode cleanly."""
    X = X.copy()
    for c in categorical:
        X[c] = X[c].where(X[c].isna(), X[c].astype(str))
    return X


class PlainPreprocessor:
    """The fitted ``ColumnTransformer`` of :func:`fairdash.data.make_preprocessor` as plain numbers.

    Numeric columns: median imputation, then ``(x - mean) / scale``. Categorical columns: missing
    values become the fill value, then one-hot over the frequent categories, in scikit-learn's order,
    and one last "infrequent" column (when the encoder made one) that also takes unknown values;
    unknown values of a column without one encode as all zeros. ``transform`` reproduces the fitted
    transformer's output exactly (same float64 operations).
    """

    def __init__(self, numeric: list, categorical: list, order: list):
        self.numeric = numeric  # [{"column", "median", "mean", "scale"}]; columns dropped by the imputer are absent
        self.categorical = categorical  # [{"column", "fill", "frequent": [...], "infrequent": [...] | None}]
        self.order = order  # ["num", "cat"] as the ColumnTransformer stacks them

    # ---- from scikit-learn ---------------------------------------------------------------------
    @classmethod
    def from_sklearn(cls, ct) -> "PlainPreprocessor":
        from sklearn.compose import ColumnTransformer
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import OneHotEncoder, StandardScaler

        if not isinstance(ct, ColumnTransformer) or not hasattr(ct, "transformers_"):
            raise FairDashError("This model's preprocessing is not a fitted FairDash ColumnTransformer; it cannot be "
                                "exported.")
        numeric, categorical, order = [], [], []
        for name, trans, cols in ct.transformers_:
            if name == "remainder":
                if trans != "drop":
                    raise FairDashError("Only preprocessing that drops unlisted columns can be exported.")
                continue
            cols = list(cols)
            if trans == "drop" or not cols:
                continue
            if not isinstance(trans, Pipeline):
                raise FairDashError(f"Unexpected preprocessing step {name!r}; it cannot be exported.")
            steps = dict(trans.steps)
            if isinstance(steps.get("scale"), StandardScaler):
                numeric += _numeric_columns(cols, steps)
                order.append("num")
            elif isinstance(steps.get("onehot"), OneHotEncoder):
                categorical += _categorical_columns(cols, steps)
                order.append("cat")
            else:
                raise FairDashError(f"Unexpected preprocessing step {name!r}; it cannot be exported.")
        return cls(numeric, categorical, order)

    # ---- plain data --------------------------------------------------------------------------
    def to_state(self) -> tuple[dict, dict]:
        arrays = {
            "pre.num.median": np.array([n["median"] for n in self.numeric], dtype=np.float64),
            "pre.num.mean": np.array([n["mean"] for n in self.numeric], dtype=np.float64),
            "pre.num.scale": np.array([n["scale"] for n in self.numeric], dtype=np.float64),
        }
        meta = {"order": list(self.order), "numeric_columns": [n["column"] for n in self.numeric],
                "categorical": [dict(c) for c in self.categorical]}
        return arrays, meta

    @classmethod
    def from_state(cls, arrays: dict, meta: dict) -> "PlainPreprocessor":
        try:
            cols = [str(c) for c in meta["numeric_columns"]]
            med, mean, scale = (np.asarray(arrays[f"pre.num.{k}"], dtype=np.float64).ravel()
                                for k in ("median", "mean", "scale"))
            if not (len(cols) == med.size == mean.size == scale.size):
                raise ValueError("numeric preprocessing arrays disagree in length")
            numeric = [{"column": c, "median": float(med[i]), "mean": float(mean[i]), "scale": float(scale[i])}
                       for i, c in enumerate(cols)]
            categorical = []
            for c in meta["categorical"]:
                inf = c.get("infrequent")
                categorical.append({"column": str(c["column"]), "fill": str(c["fill"]),
                                    "frequent": [str(v) for v in c["frequent"]],
                                    "infrequent": None if inf is None else [str(v) for v in inf]})
            order = [str(o) for o in meta["order"]]
            if not set(order) <= {"num", "cat"}:
                raise ValueError(f"unknown preprocessing block in {order}")
        except (KeyError, TypeError, ValueError) as e:
            raise FairDashError(f"The model file's preprocessing section is damaged ({e}).") from None
        return cls(numeric, categorical, order)

    @property
    def columns(self) -> list:
        return [n["column"] for n in self.numeric] + [c["column"] for c in self.categorical]

    @property
    def n_features_out(self) -> int:
        return len(self.numeric) + sum(len(c["frequent"]) + (c["infrequent"] is not None) for c in self.categorical)

    def feature_names_out(self) -> list:
        names = {"num": [f"num__{n['column']}" for n in self.numeric], "cat": []}
        for c in self.categorical:
            names["cat"] += [f"cat__{c['column']}_{v}" for v in c["frequent"]]
            if c["infrequent"] is not None:
                names["cat"].append(f"cat__{c['column']}_infrequent_sklearn")
        return [n for block in self.order for n in names[block]]

    # ---- the transform -----------------------------------------------------------------------
    def transform(self, X: pd.DataFrame) -> np.ndarray:
        blocks = {"num": self._numeric(X), "cat": self._categorical(X)}
        parts = [blocks[b] for b in self.order]
        if not parts:
            return np.zeros((len(X), 0), dtype=np.float64)
        return np.hstack(parts).astype(np.float64, copy=False)

    def _numeric(self, X) -> np.ndarray:
        n = len(X)
        out = np.empty((n, len(self.numeric)), dtype=np.float64)
        for j, spec in enumerate(self.numeric):
            col = X[spec["column"]]
            try:
                v = pd.to_numeric(col, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan).copy()
            except (TypeError, ValueError):
                raise FairDashError(f"Column {spec['column']!r} should hold numbers (it did when the model was "
                                    "trained) but holds text.") from None
            v[np.isnan(v)] = spec["median"]
            v -= spec["mean"]
            v /= spec["scale"]
            out[:, j] = v
        return out

    def _categorical(self, X) -> np.ndarray:
        n = len(X)
        width = sum(len(c["frequent"]) + (c["infrequent"] is not None) for c in self.categorical)
        out = np.zeros((n, width), dtype=np.float64)
        start = 0
        for spec in self.categorical:
            col = X[spec["column"]]
            values = np.where(pd.isna(col).to_numpy(), spec["fill"], col.astype(object).to_numpy()).astype(str)
            k = len(spec["frequent"])
            has_inf = spec["infrequent"] is not None
            # -1: not frequent (pd.Categorical with values outside its categories is deprecated in pandas 3)
            codes = pd.Index(spec["frequent"]).get_indexer(values).astype(np.int64)
            hit = codes >= 0
            out[np.flatnonzero(hit), start + codes[hit]] = 1.0
            if has_inf:  # infrequent and unknown values share the last column
                out[np.flatnonzero(~hit), start + k] = 1.0
            start += k + has_inf
        return out


def _numeric_columns(cols: list, steps: dict) -> list[dict]:
    """:meth:`PlainPreprocessor.from_sklearn`'s entries of a numeric pipeline (median imputer, standard scaler):
    each kept column's median, mean and scale."""
    from sklearn.impute import SimpleImputer

    imp, sc = steps.get("impute"), steps["scale"]
    if not isinstance(imp, SimpleImputer) or imp.strategy != "median" or len(steps) != 2:
        raise FairDashError("Unexpected numeric preprocessing; it cannot be exported.")
    stats = np.asarray(imp.statistics_, dtype=np.float64)
    keep = [i for i in range(len(cols)) if not np.isnan(stats[i])] if not imp.keep_empty_features \
        else list(range(len(cols)))
    mean = np.zeros(len(keep)) if sc.mean_ is None else np.asarray(sc.mean_, dtype=np.float64)
    scale = np.ones(len(keep)) if sc.scale_ is None else np.asarray(sc.scale_, dtype=np.float64)
    if not sc.with_mean:
        mean = np.zeros(len(keep))
    if not sc.with_std:
        scale = np.ones(len(keep))
    return [{"column": str(cols[i]), "median": float(stats[i]), "mean": float(mean[j]), "scale": float(scale[j])}
            for j, i in enumerate(keep)]


def _categorical_columns(cols: list, steps: dict) -> list[dict]:
    """:meth:`PlainPreprocessor.from_sklearn`'s entries of a categorical pipeline (constant imputer, one-hot
    encoder): each column's fill value, frequent and infrequent categories as text."""
    from sklearn.impute import SimpleImputer

    imp, oh = steps.get("impute"), steps["onehot"]
    if not isinstance(imp, SimpleImputer) or imp.strategy != "constant" or len(steps) != 2:
        raise FairDashError("Unexpected categorical preprocessing; it cannot be exported.")
    if oh.drop_idx_ is not None or oh.handle_unknown not in ("infrequent_if_exist", "ignore"):
        raise FairDashError("Unexpected one-hot encoding settings; they cannot be exported.")
    infrequent = oh.infrequent_categories_ if hasattr(oh, "infrequent_categories_") else [None] * len(cols)
    out = []
    for i, col in enumerate(cols):
        cats = [_category_text(c) for c in oh.categories_[i]]
        inf = None if infrequent[i] is None else [_category_text(c) for c in infrequent[i]]
        frequent = [c for c in cats if inf is None or c not in set(inf)]
        out.append({"column": str(col), "fill": _category_text(imp.fill_value), "frequent": frequent,
                    "infrequent": inf})
    return out


def folded_levels(preprocessor) -> dict[str, tuple[int, int]]:
    """The categorical features whose rarer levels the one-hot cap (:data:`~fairdash.data.profile.MAX_CATEGORIES`
    columns a feature) folded into one shared column, from a fitted ``ColumnTransformer`` of
    :func:`make_preprocessor` or a :class:`PlainPreprocessor`: ``{column: (levels seen in training, levels
    folded)}``; empty where nothing was cut."""
    plain = (preprocessor if isinstance(preprocessor, PlainPreprocessor)
             else PlainPreprocessor.from_sklearn(preprocessor))
    return {c["column"]: (len(c["frequent"]) + len(c["infrequent"]), len(c["infrequent"]))
            for c in plain.categorical if c["infrequent"]}


def folded_words(folded: dict) -> str:
    """:func:`folded_levels` in words: ``c-charge-desc (339 of its 389 levels folded into one)``; empty where none."""
    return "; ".join(f"{c} ({k:,} of its {n:,} levels folded into one)" for c, (n, k) in folded.items())


def feature_words(preprocessor) -> list[tuple[str, str]]:
    """Each column the preprocessor produces, in its order, as ``(the table's column, words)``: ``("age", "age")`` for
    a numeric feature, ``("race", "race = African-American")`` for a one-hot level, ``("c-charge-desc",
    "c-charge-desc = one of its 339 rarer levels")`` for the column the one-hot cap folds the rest into (from a fitted
    ``ColumnTransformer`` of :func:`make_preprocessor` or a :class:`PlainPreprocessor`)."""
    plain = (preprocessor if isinstance(preprocessor, PlainPreprocessor)
             else PlainPreprocessor.from_sklearn(preprocessor))
    words = {"num": [(str(n["column"]), str(n["column"])) for n in plain.numeric], "cat": []}
    for c in plain.categorical:
        col = str(c["column"])
        words["cat"] += [(col, f"{col} = {v}") for v in c["frequent"]]
        if c["infrequent"] is not None:
            words["cat"].append((col, f"{col} = one of its {len(c['infrequent']):,} rarer levels"))
    return [w for block in plain.order for w in words[block]]


def known_categories(preprocessor) -> dict:
    """Each categorical feature's categories seen in training, as text: ``{column: set}`` (from a fitted
    ``ColumnTransformer`` of :func:`make_preprocessor` or a :class:`PlainPreprocessor`)."""
    plain = (preprocessor if isinstance(preprocessor, PlainPreprocessor)
             else PlainPreprocessor.from_sklearn(preprocessor))
    return {c["column"]: set(c["frequent"]) | set(c["infrequent"] or ()) for c in plain.categorical}


def _category_text(v) -> str:
    return v if isinstance(v, str) else str(v)
