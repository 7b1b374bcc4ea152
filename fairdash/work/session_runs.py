"""A session file's runs as the dashboard and the command line keep runs: each :class:`fairdash.files.session_file.
SavedRun` made a :class:`fairdash.work.runs.Run` again, its models :class:`fairdash.work.fitting.TrainedModel`
(read from their model files: the same estimator state, preprocessing and decision rule, so the same predictions)."""
from __future__ import annotations

from ..files.session_file import SavedRun, SessionFile
from ..targeting.target_spec import TargetSpec
from .fitting import TrainedModel
from .runs import Run

_NONFINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}  # as the model file writes them


def trained_model(loaded) -> TrainedModel:
    """A model read from its model file (:class:`fairdash.files.export.LoadedModel`) as a run holds its models."""
    meta = loaded.metadata
    return TrainedModel(
        name=loaded.name, estimator=loaded.estimator, preprocessor=loaded.preprocessor, spec=loaded.spec,
        feature_columns=loaded.feature_columns, categorical_features=loaded.categorical_features,
        group_names=loaded.group_names, label_names=loaded.label_names, criterion=loaded.criterion,
        target_rate=loaded.target_rate, seed=int(loaded.seed), data_fingerprint=loaded.data_fingerprint,
        metrics={k: _NONFINITE.get(v, v) if isinstance(v, str) else v for k, v in loaded.metrics.items()},
        fit_seconds=float(loaded.fit_seconds or 0.0), device=str(meta.get("trained_on") or "CPU"),
        target=None if loaded.target is None else TargetSpec.from_dict(loaded.target),
        fitted_at=str(loaded.fitted_at or ""), decision=loaded.decision, schema=loaded.schema)


def restored_run(saved: SavedRun) -> Run:
    """The run a session file saved, as it was (its number, time, results, models and sides: a with-s side's
    estimator is its model's, as in the run that was saved)."""
    return Run(saved.spec, saved.task, saved.data_name, saved.results,
               {k: trained_model(m) for k, m in saved.models.items()}, list(saved.skipped), saved.data_description,
               saved.seconds, created=saved.created, number=saved.number, leaks=tuple(saved.leaks),
               sides=list(saved.sides), same_as=saved.same_as)


def restored_runs(session: SessionFile) -> list[Run]:
    """Every run of a session file, oldest first."""
    return [restored_run(r) for r in session.runs]

