"""The session file (``.fairdash-session``, issue 35 item 5): a session's table, task, target and runs with their
models saved as one file and read back with the same numbers; every altered byte, a foreign file, a newer format
and an oversized file refused in one line; ``fairdash report session.fairdash-session`` reads it.

Two runs on a 600-row COMPAS subsample (one of the table's task, one of another task of the same table), trained
once per module: quick on two cores."""
from __future__ import annotations

import hashlib
import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from fairdash import FairDashError, data
from fairdash.cli.main import main
from fairdash.files import session_file as sf
from fairdash.files.export import MANIFEST, model_bytes
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.runs import train_run
from fairdash.work.session_runs import restored_runs


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
    with pytest.raises(FairDashError, match="newer FairDash .*session file format 2.*Update FairDash") as e:
        sf.load_session(_with_manifest(raw, format_version=2, fairdash_version="9.0"))
    _one_line(e)
    assert sf.load_session(_with_manifest(raw, format_version=1)).runs  # rewritten alike, it still opens
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
