"""Crafted files against the readers the dashboard and the command line use (issue 46): each file of
tests/hostile_files.py opened as the Data page opens it (``load_session``, ``load_model``, ``read_table``), with
this process and its children (the reading process) measured as a server's process tree would be. Run by hand:

    python -m benchmarks.bench_crafted_files                     # every file, FAIRDASH_TABLE_MB=256
    python -m benchmarks.bench_crafted_files --cases gzip-members --table-mb 1024

Recorded per file: its size, the answer (refused: the first 160 characters of the sentence; else read), the seconds
to answer, the peak of this process tree's proportional memory (Pss) above its level before (sampled every 10 ms;
the fork server of the reading processes started before), and this process's own growth after (what the server
would keep).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import threading
import time

from benchmarks.common import ROOT, Recording

MIB = 2**20


def _hostile():
    """tests/hostile_files.py, the generators the tests use (loaded by its path: the tests are not a package)."""
    spec = importlib.util.spec_from_file_location("hostile_files", ROOT / "tests" / "hostile_files.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases(hf) -> dict:
    """name -> (reader, file bytes, file name)."""
    from fairdash import data
    from fairdash.files import session_file as sf
    from fairdash.files.export import load_model

    raw, model = hf.saved_session_and_model(400)
    results = next(n for n in hf.members_of(raw) if n.endswith("-results.parquet")).replace(".", "__")
    return {
        "honest-session": (sf.load_session, raw, "work.fairdash-session"),
        "session-json-objects": (sf.load_session, hf.resealed(raw, session__json=hf.json_of_small_objects(20)),
                                 "objects.fairdash-session"),
        "results-list-column": (sf.load_session, hf.resealed(raw, **{results: hf.parquet_of_results_with_a_list_column(
            20_000)}), "lists.fairdash-session"),
        "results-not-results": (sf.load_session, hf.resealed(raw, **{results: hf.parquet_of_plain_numbers()}),
                                "plain.fairdash-session"),
        "model-meta-objects": (load_model, hf.resealed(model, meta__json=hf.json_of_small_objects(20)),
                               "objects.fairdash"),
        "safetensors-600k": (load_model, hf.resealed(model, arrays__safetensors=hf.safetensors_index(600_000)),
                             "index.fairdash"),
        "parquet-4000-groups": (data.read_table, hf.parquet_of_one_row_groups(4000), "groups.parquet"),
        "gzip-members": (data.read_table, hf.gzip_of_many_members(300_000), "members.csv.gz"),
    }


def descendants(pid: int) -> list[int]:
    """``pid`` and its descendants (those alive as they are read)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return out


def tree_pss(root: int | None = None) -> int:
    """The proportional memory (Pss: a page shared by n processes counts 1/n in each, so the reading process's pages
    shared with the fork server it came from are not counted twice) of ``root`` (default: this process) and its
    descendants, in bytes."""
    total = 0
    for pid in descendants(os.getpid() if root is None else root):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("Pss:")) * 1024
        except (OSError, StopIteration, ValueError):
            continue
    return total


def measure(reader, raw: bytes, name: str) -> dict:
    from fairdash.app.server.limits import process_rss_bytes
    from fairdash.errors import FairDashError

    before_tree, before_self = tree_pss(), process_rss_bytes()
    peak, done = [before_tree], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_pss())
            time.sleep(0.01)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    t0 = time.perf_counter()
    try:
        reader(raw, name=name) if reader.__name__ != "load_model" else reader(raw)
        answer = "read"
    except FairDashError as e:
        answer = "refused: " + str(e)[:160]
    seconds = time.perf_counter() - t0
    done.set()
    watcher.join()
    return {"bytes": len(raw), "answer": answer, "seconds": round(seconds, 2),
            "tree_peak_mib": round((peak[0] - before_tree) / MIB, 1),
            "kept_mib": round((process_rss_bytes() - before_self) / MIB, 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", help="which files (default: all)")
    parser.add_argument("--table-mb", type=float, default=256, help="FAIRDASH_TABLE_MB for the reads (default 256)")
    args = parser.parse_args(argv)
    os.environ["FAIRDASH_TABLE_MB"] = f"{args.table_mb:g}"
    hf = _hostile()
    with Recording("bench_crafted_files", vars(args)) as rec:
        found = cases(hf)
        measure(*found["honest-session"])  # the reading processes' fork server started before any measurement
        for name in args.cases or list(found):
            reader, raw, file_name = found[name]
            rec.results[name] = measure(reader, raw, file_name)
            print(name, rec.results[name], flush=True)
        rows = [f"| {k} | {v['bytes'] / MIB:.2f} | {v['answer'][:90]} | {v['seconds']} | {v['tree_peak_mib']} | "
                f"{v['kept_mib']} |" for k, v in rec.results.items()]
        rec.markdown = "\n".join([f"Crafted files, FAIRDASH_TABLE_MB={args.table_mb:g}. {rec.machine_line()}", "",
                                  "| file | MB | answer | seconds | tree peak (Pss) MiB | kept MiB |",
                                  "|---|---|---|---|---|---|", *rows])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
