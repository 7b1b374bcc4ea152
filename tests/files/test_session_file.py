"""The session file (``.fairdash-session``, issue 35 item 5): a session's table, task, target and runs with their
models saved as one file and read back with the same numbers; every altered byte, a foreign file, a newer format
and an oversized file refused in one line; ``fairdash report session.fairdash-session`` reads it.

Two runs on a 600-row COMPAS subsample (one of the table's task, one of another task of the same table), trained
once per module: quick on two cores."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairdash import FairDashError, data
from fairdash.app.ui.workspace import sample_spec
from fairdash.cli.main import main
from fairdash.data.split import split_arrays
from fairdash.evaluation.blindness import PRICE, PRICE_COLUMNS, PRICE_HI, PRICE_LO, RULES, price_sentences
from fairdash.files import session_file as sf
from fairdash.files.export import MANIFEST, model_bytes
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.runs import rows_together, train_run
from fairdash.work.session_runs import restored_runs

OLD_FILES = Path(__file__).resolve().parents[1] / "fixtures" / "session_files"


@pytest.fixture(scope="module")
def session():
    """A session: the table, its task and target, and two runs (the second on another task of the same table)."""
    df = data.load_sample("compas").sample(600, random_state=0).reset_index(drop=True)
    spec = data.PAPER_SETUPS["compas-race"].spec
    task = data.build_task(df, spec)
    target = make_target_spec("dp", 0.35)
    first = RunSpec(data="compas", task=spec, target=target, models=("lr", "fair-lr"), target_rates=(0.35,),
                    seeds=(0,), group_names=task.group_names)
    other_spec = data.TaskSpec(**{**spec.to_dict(), "features": tuple(f for f in task.features if f != "age")})
    other = data.build_task(df, other_spec)
    second = RunSpec(data="compas", task=other_spec, target=target, models=("lr",), target_rates=(0.35,),
                     seeds=(0,), group_names=other.group_names)
    runs = [train_run(task, first, data_name="COMPAS (600 rows)", number=1),
            train_run(other, second, data_name="COMPAS (600 rows)", number=2)]
    parts = {"table": df, "table_name": "COMPAS (600 rows)", "table_description": "a sample", "task": task,
             "target": target, "runs": runs}
    return parts, sf.session_bytes(**parts)


def _one_line(e) -> str:
    text = str(e.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_a_round_trip_gives_the_same_table_target_runs_and_numbers(session):
    parts, raw = session
    opened = sf.load_session(raw)
    pd.testing.assert_frame_equal(opened.table, parts["table"])
    assert opened.task.spec == parts["task"].spec and opened.task.fingerprint == parts["task"].fingerprint
    assert opened.target == parts["target"]
    assert (opened.table_name, opened.table_description) == ("COMPAS (600 rows)", "a sample")
    runs = restored_runs(opened)
    assert [r.number for r in runs] == [1, 2]
    assert runs[0].task is opened.task  # a run of the current task shares it (Compare and the report ask `is`)
    assert runs[1].task.fingerprint == parts["runs"][1].task.fingerprint and runs[1].task is not opened.task
    rows = parts["table"].head(200)
    for before, after in zip(parts["runs"], runs):
        pd.testing.assert_frame_equal(after.results, before.results)  # every number and type as it was
        assert after.title == before.title and after.spec.to_dict() == before.spec.to_dict()
        assert [str(k) for k in after.models] == [str(k) for k in before.models]
        for (_, old), (_, new) in zip(before.models.items(), after.models.items()):
            np.testing.assert_array_equal(new.predict_proba(rows), old.predict_proba(rows))
            np.testing.assert_array_equal(new.predict(rows), old.predict(rows))
            assert model_bytes(new)  # a restored model is exported again from the Export page
    again = sf.session_bytes(**{**parts, "task": opened.task, "runs": runs})  # saved again: opens again alike
    pd.testing.assert_frame_equal(restored_runs(sf.load_session(again))[1].results, parts["runs"][1].results)


def test_every_altered_byte_is_refused_in_one_line(session):
    _, raw = session
    step = max(len(raw) // 400, 1)
    positions = sorted(set(range(0, len(raw), step)) | set(range(len(raw) - 200, len(raw))))
    for i in positions:
        bad = bytearray(raw)
        bad[i] ^= 0x01
        with pytest.raises(FairDashError) as e:
            sf.load_session(bytes(bad))
        _one_line(e)
    with pytest.raises(FairDashError, match="damaged or altered"):
        sf.load_session(raw + b"\0")
    with pytest.raises(FairDashError):
        sf.load_session(raw[:-1])


def _rezip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


def _members(raw: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def test_an_edited_member_with_a_consistent_zip_is_refused_by_its_checksum(session):
    _, raw = session
    members = _members(raw)
    meta = json.loads(members[sf.SESSION])
    meta["target"]["target_rate"] = 0.9
    members[sf.SESSION] = json.dumps(meta).encode()
    with pytest.raises(FairDashError, match="altered or damaged: session.json"):
        sf.load_session(_rezip(members))


def test_foreign_files_are_refused_in_one_line(session):
    parts, raw = session
    cases = {
        b"a,b\n1,2\n": "not a FairDash session file: it is a text file",
        _rezip({"notes.txt": b"hello"}): "zip archive without a FairDash manifest",
        _rezip({MANIFEST: b'{"format": "something-else"}'}): "not a FairDash session file",
        model_bytes(next(iter(parts["runs"][0].models.values()))): "it is a model file",
        b"\x80\x04K\x01.": "pickle",
        b"": "it is empty",
    }
    for blob, words in cases.items():
        with pytest.raises(FairDashError, match=words) as e:
            sf.load_session(blob)
        _one_line(e)
    members = _members(raw)
    members["evil.py"] = b"print(1)"
    with pytest.raises(FairDashError, match="unexpected member"):
        sf.load_session(_rezip(members))


def _with_manifest(raw: bytes, **changes) -> bytes:
    members = _members(raw)
    manifest = {**json.loads(members[MANIFEST]), **changes}
    return _rezip({MANIFEST: json.dumps(manifest).encode(), **{k: v for k, v in members.items() if k != MANIFEST}})


def test_a_newer_format_is_refused_and_this_one_opens(session):
    _, raw = session
    newer = sf.FORMAT_VERSION + 1
    with pytest.raises(FairDashError, match=f"newer FairDash .*session file format {newer}.*Update FairDash") as e:
        sf.load_session(_with_manifest(raw, format_version=newer, fairdash_version="9.0"))
    _one_line(e)
    assert sf.load_session(_with_manifest(raw, format_version=sf.FORMAT_VERSION)).runs  # rewritten alike, it opens
    with pytest.raises(FairDashError, match="no valid format version"):
        sf.load_session(_with_manifest(raw, format_version="1"))


def test_a_file_over_the_size_limit_is_refused_saving_and_opening(session, monkeypatch, tmp_path):
    parts, raw = session
    monkeypatch.setattr(sf, "MAX_FILE_BYTES", len(raw) - 1)
    with pytest.raises(FairDashError, match="larger than") as e:
        sf.load_session(raw)
    _one_line(e)
    path = tmp_path / "big.fairdash-session"
    path.write_bytes(raw)
    with pytest.raises(FairDashError, match="larger than"):
        sf.load_session(path)
    with pytest.raises(FairDashError, match="more than the .* a session file may hold"):
        sf.session_bytes(**parts)


def test_the_file_holds_no_pickle_and_names_its_format(session):
    _, raw = session
    members = _members(raw)
    manifest = json.loads(members[MANIFEST])
    assert (manifest["format"], manifest["format_version"]) == (sf.FORMAT_NAME, sf.FORMAT_VERSION)
    assert all(manifest["members"][k]["sha256"] == hashlib.sha256(v).hexdigest()
               for k, v in members.items() if k != MANIFEST)
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(io.BytesIO(raw)).infolist())
    assert not any(b"\x80\x04\x95" in v[:3] for v in members.values())
    assert sf.session_file_name("Adult census / 1994") == "fairdash-Adult-census-1994.fairdash-session"


def test_the_cli_reports_a_run_of_a_session_file(session, tmp_path, capsys):
    _, raw = session
    path = tmp_path / "work.fairdash-session"
    path.write_bytes(raw)
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "COMPAS (600 rows)" in html and "Run 2" in capsys.readouterr().out
    assert main(["report", str(path), "--run", "1", "--out", str(out)]) == 0
    assert "FairLR" in out.read_text(encoding="utf-8")
    bad = tmp_path / "bad.fairdash-session"
    bad.write_bytes(raw[:100] + bytes([raw[100] ^ 1]) + raw[101:])
    assert main(["report", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bad.fairdash-session") and err.count("\n") == 1
    assert main(["report", str(path), "--run", "7", "--out", str(out)]) == 2
    assert "has no run 7" in capsys.readouterr().err
    assert main(["report", "--out", str(out)]) == 2


# --------------------------------------------------------------------------------------------------
# The runs' sides: the price of deciding without s measured over runs together survives a save and an open
# --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def priced():
    """Two runs of one task on 12,000 rows of Adult at demographic parity, PR_t 0.30 (the Compare page's price over
    runs): LR cut per group (decides with sex) and the target-reduction model at one threshold (decides without)."""
    df = data.load_sample("adult").sample(12_000, random_state=0).reset_index(drop=True)
    spec = sample_spec("adult", df)
    task = data.build_task(df, spec)
    target = make_target_spec("dp", 0.3)
    requests = [("lr", make_target_spec("dp", 0.3, decision="group-rates")), ("target-reduction", target)]
    runs = [train_run(task, RunSpec(data="adult.csv", task=spec, target=t, models=(m,), group_names=task.group_names),
                      data_name="adult.csv", number=i) for i, (m, t) in enumerate(requests, 1)]
    parts = {"table": df, "table_name": "adult.csv", "table_description": "", "task": task, "target": target,
             "runs": runs}
    return parts, sf.session_bytes(**parts)


def _price(runs):
    rows = rows_together(runs)
    return price_sentences(rows, "sex"), rows[[*PRICE_COLUMNS, PRICE_LO, PRICE_HI, *RULES]]


def _opened(raw: bytes) -> list:
    return restored_runs(sf.load_session(raw, name="adult.fairdash-session"))


def test_the_price_over_runs_is_the_same_after_a_round_trip(priced):
    parts, raw = priced
    live, live_columns = _price(parts["runs"])
    assert live[0].startswith("Deciding without sex costs 1.46 points of accuracy at PR_t 0.30")
    runs = _opened(raw)
    sentences, columns = _price(runs)
    assert sentences == live  # the very sentence; before the sides were saved: "No rule ... landed on the target"
    pd.testing.assert_frame_equal(columns, live_columns)  # the same numbers, exactly
    assert columns[PRICE].notna().all()
    for before, after in zip(parts["runs"], runs):
        assert len(after.sides) == len(before.sides) == 1
        for old, new in zip(before.sides, after.sides):
            assert (new.label, new.seed, new.target_rate, new.with_s) == (old.label, old.seed, old.target_rate,
                                                                          old.with_s)
            assert (new.train_rates, new.counts, new.targets, new.tnr) == (old.train_rates, old.counts, old.targets,
                                                                           old.tnr)
            if old.pred_test is None:
                assert new.pred_test is None
            else:
                assert new.pred_test.dtype == np.int8
                np.testing.assert_array_equal(new.pred_test, old.pred_test)
    again = sf.session_bytes(**{**parts, "task": runs[0].task, "runs": runs})  # saved again: the same price again
    assert _price(_opened(again))[0] == live


def test_a_with_s_side_gets_its_model_s_estimator_back_which_scores_the_same(priced):
    parts, raw = priced
    old, new = parts["runs"][0], _opened(raw)[0]
    (side_before,), (side_after,) = old.sides, new.sides
    assert side_before.with_s and side_before.estimator is next(iter(old.models.values())).estimator
    assert side_after.estimator is next(iter(new.models.values())).estimator  # as in the run that was saved
    X = split_arrays(new.task, side_after.seed).X_test  # what the price's "own scores" candidate scores
    np.testing.assert_array_equal(side_after.estimator.predict_proba(X), side_before.estimator.predict_proba(X))
    members = _members(raw)
    saved = json.loads(members[sf.SESSION])["runs"]
    assert [x["model"] for x in saved[0]["sides"]] == [0] and saved[0]["sides_member"] is None  # no blind side
    assert [x["model"] for x in saved[1]["sides"]] == [None] and saved[1]["sides_member"] == "run-2-sides.parquet"
    assert list(pd.read_parquet(io.BytesIO(members["run-2-sides.parquet"])).columns) == ["side", "pred"]


def test_a_with_s_side_whose_estimator_is_not_one_of_the_run_s_models_is_kept_without_it(priced):
    parts, _ = priced
    first = dataclasses.replace(parts["runs"][0], models={})  # its model not kept with the run
    runs = _opened(sf.session_bytes(**{**parts, "runs": [first, parts["runs"][1]]}))
    (side,) = runs[0].sides
    assert side.with_s and side.estimator is None and side.label == first.sides[0].label
    # the side still says a rule decides with sex: the price is measured against the scorers with s it fits itself
    # (here the most accurate with-s rule was one of those: the same sentence)
    assert _price(runs)[0] == _price(parts["runs"])[0]


def _resealed(members: dict, **manifest) -> bytes:
    """``members`` (a changed file) with a manifest that matches them: only the reader's own checks can refuse it."""
    old = json.loads(members[MANIFEST])
    listed = {k: {"size": len(v), "sha256": hashlib.sha256(v).hexdigest()} for k, v in members.items()
              if k != MANIFEST}
    return _rezip({MANIFEST: json.dumps({**old, **manifest, "members": listed}).encode(),
                   **{k: v for k, v in members.items() if k != MANIFEST}})


def _with_sides(raw: bytes, *, frame=None, side=None, member=None) -> bytes:
    """The file with run 2's sides member made from ``frame(decisions)`` or replaced by the bytes ``member``, or the
    sides' JSON changed by ``side(run 2's blind side, run 1's with-s side)``; resealed."""
    members = _members(raw)
    if frame is not None:
        members["run-2-sides.parquet"] = sf._parquet(frame(pd.read_parquet(io.BytesIO(members["run-2-sides.parquet"]))))
    if member is not None:
        members["run-2-sides.parquet"] = member
    if side is not None:
        meta = json.loads(members[sf.SESSION])
        side(meta["runs"][1]["sides"][0], meta["runs"][0]["sides"][0])
        members[sf.SESSION] = json.dumps(meta).encode()
    return _resealed(members)


def test_damaged_sides_are_refused_in_one_line(priced):
    _, raw = priced
    assert _opened(_resealed(_members(raw)))  # resealed as it is, it opens: the cases below are refused for cause
    cases = [
        dict(frame=lambda f: f.assign(pred=np.where(np.arange(len(f)) == 3, 2, f["pred"]).astype("int8"))),
        dict(frame=lambda f: f.iloc[:-1]),  # a decision short
        dict(frame=lambda f: f.rename(columns={"pred": "decision"})),
        dict(frame=lambda f: f.assign(pred=f["pred"].astype(float))),
        dict(frame=lambda f: f.assign(side=1)),  # the decisions of a side that is not there
        dict(member=b"PAR1 not a table PAR1"),
        dict(side=lambda blind, with_s: with_s.update(model=1)),  # a model the run does not have
        dict(side=lambda blind, with_s: blind.update(model=0)),  # a blind side does not cut a model's scores
        dict(side=lambda blind, with_s: blind.update(rows=blind["rows"] - 1)),  # not its split's test rows
        dict(side=lambda blind, with_s: blind.update(train_rates=["0.3", 0.3])),
        dict(side=lambda blind, with_s: blind.update(counts=[-1, 3])),
        dict(side=lambda blind, with_s: blind.update(targets=[0.3])),  # not one a group
        dict(side=lambda blind, with_s: blind.update(tnr=[[0.5]])),
        dict(side=lambda blind, with_s: blind.update(seed=True)),
        dict(side=lambda blind, with_s: blind.update(target_rate=3.0)),
        dict(side=lambda blind, with_s: blind.pop("label")),
    ]
    for case in cases:
        with pytest.raises(FairDashError, match=r"^adult.fairdash-session is damaged") as e:
            sf.load_session(_with_sides(raw, **case), name="adult.fairdash-session")
        _one_line(e)
    members = _members(raw)
    del members["run-2-sides.parquet"]
    with pytest.raises(FairDashError, match="is incomplete: a part it names .*run-2-sides.parquet.* is missing") as e:
        sf.load_session(_resealed(members))
    _one_line(e)


def test_a_session_file_of_format_1_opens_without_sides():
    """A file written before the sides (tests/fixtures/session_files/README.md) opens: its runs as they were, no
    sides, so the price over its two runs is what opening it gave then (none), not what it was live."""
    raw = (OLD_FILES / "f0e8e2a-two-runs.fairdash-session").read_bytes()
    expected = json.loads((OLD_FILES / "f0e8e2a-expected.json").read_text(encoding="utf-8"))
    assert json.loads(_members(raw)[MANIFEST])["format_version"] == 1
    opened = sf.load_session(raw)
    runs = restored_runs(opened)
    assert [r.number for r in runs] == [1, 2] and [len(r.models) for r in runs] == [1, 1]
    assert all(r.sides == [] for r in runs) and all(r.task is opened.task for r in runs)
    assert price_sentences(rows_together(runs), "race") == expected["opened"] != expected["live"]
    again = sf.load_session(sf.session_bytes(table=opened.table, table_name=opened.table_name, table_description="",
                                             task=opened.task, target=opened.target, runs=runs))
    assert [len(r.sides) for r in again.runs] == [0, 0]  # saved again in today's format: still none to keep
