"""How long the Data page takes to open, against a bare Streamlit app (issue 13). Run by hand, not in CI:

    .venv/bin/python -m benchmarks.bench_first_render                 # 3 rounds, 3 warm sessions each
    .venv/bin/python -m benchmarks.bench_first_render --rounds 5 --imports

Each round starts two fresh servers the way the README does (``<venv>/bin/streamlit run <script>`` from
the repository root, no flags; the port comes from ``STREAMLIT_SERVER_PORT``): FairDash (``app.py``) and
the floor, ``benchmarks/minimal_slider_app.py`` (one slider and one metric). Then, in headless Chromium
(``/usr/bin/chromium``), alternating between the two apps so that both see the same machine load:

- cold: the first session on each fresh server (FairDash's process imports its modules and reads the
  Adult sample then);
- warm: ``--warm`` new sessions afterwards.

Each figure is the time from ``page.goto`` to the first useful render (FairDash: the Data page's
"Groups and base rates" table visible; the floor: its metric visible) and, in brackets, to the app idle.
``--imports`` also prints what importing the app costs (``python -X importtime``) and which heavy
packages a first run of the Data page loads (via Streamlit's AppTest, in a fresh process).
Target: the Data page within 1.5x the floor's time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import CHROMIUM, Recording
from benchmarks.readme_server import ROOT, Server, first_render

HEAVY = ("torch", "gpytorch", "linear_operator", "sklearn", "scipy", "fairlearn", "plotly", "pyarrow", "joblib",
         "openpyxl", "safetensors")


def imports_report() -> str:
    """What importing the app costs, and which heavy packages the Data page's first run loads."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = []
    for what in ("streamlit", "fairdash.app.ui.workspace", "torch"):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c",
                               f"import streamlit\nimport {what}" if what != "streamlit" else "import streamlit"],
                              cwd=ROOT, env=env, capture_output=True, text=True)
        cum = {}
        for ln in proc.stderr.splitlines():
            if ln.startswith("import time:") and "self [us]" not in ln:
                _, c, name = ln.split("|")
                if name[1:2] != " ":  # a top-level import
                    cum[name.strip()] = int(c)
        out.append(f"- `import {what}` (after `import streamlit`): {cum.get(what, 0) / 1e6:.2f} s")
    probe = (
        "import sys\nfrom streamlit.testing.v1 import AppTest\nbefore = set(sys.modules)\n"
        f"AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=300).run()\n"
        f"print(sorted(h for h in {HEAVY!r} if h in sys.modules and h not in before))\n"
        f"print(sorted(h for h in {HEAVY!r} if h in before))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    if len(lines) >= 2:
        out.append(f"- heavy packages a first run of the Data page imports: {lines[-2]} "
                   f"(already loaded by Streamlit's test harness: {lines[-1]})")
    else:
        out.append(f"- the AppTest probe failed: {proc.stderr[-500:]}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--imports", action="store_true")
    args = ap.parse_args(argv)
    with Recording("bench_first_render", vars(args), browser=True, extra_software=("streamlit", "playwright")) as rec:
        print(rec.machine_line(), flush=True)
        return measure(args, rec)


def measure(args, rec) -> int:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="fairdash-first-render-"))
    res = {("fd", "cold"): [], ("fd", "warm"): [], ("floor", "cold"): [], ("floor", "warm"): []}
    load = [os.getloadavg()]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            for r in range(args.rounds):
                servers = {"fd": Server("app.py", work), "floor": Server("benchmarks/minimal_slider_app.py", work)}
                try:
                    for s in servers.values():
                        s.wait()
                    order = ["fd", "floor"] if r % 2 == 0 else ["floor", "fd"]
                    for key in order:
                        res[(key, "cold")].append(first_render(browser, servers[key].url, key == "fd"))
                    for _ in range(args.warm):
                        for key in order:
                            res[(key, "warm")].append(first_render(browser, servers[key].url, key == "fd"))
                finally:
                    for s in servers.values():
                        s.stop()
        finally:
            browser.close()
    load.append(os.getloadavg())

    def cell(rows):
        vis = statistics.median(v for v, _ in rows)
        idle = statistics.median(i for _, i in rows)
        return f"{vis:.2f} s ({idle:.2f} s)"

    lines = [f"rounds {args.rounds}, warm sessions per round {args.warm}; load average at start "
             f"{' / '.join(f'{x:.1f}' for x in load[0])}, at end {' / '.join(f'{x:.1f}' for x in load[1])}\n",
             "| session | FairDash Data page | floor app | ratio (visible) | n per app |", "|---|---:|---:|---:|---:|"]
    for kind in ("cold", "warm"):
        fd, fl = res[("fd", kind)], res[("floor", kind)]
        ratio = statistics.median(v for v, _ in fd) / statistics.median(v for v, _ in fl)
        lines.append(f"| {kind} | {cell(fd)} | {cell(fl)} | **{ratio:.2f}x** | {len(fd)} |")
    lines.append("\nevery FairDash session (visible / idle, s): "
                 + str({k: [f"{v:.2f}/{i:.2f}" for v, i in res[("fd", k)]] for k in ("cold", "warm")}))
    lines.append("every floor session (visible / idle, s): "
                 + str({k: [f"{v:.2f}/{i:.2f}" for v, i in res[("floor", k)]] for k in ("cold", "warm")}))
    if args.imports:
        lines.append("\n" + imports_report())
    rec.markdown = "\n".join(lines)
    rec.results = {f"{app} {kind}": [{"visible_s": v, "idle_s": i} for v, i in rows]
                   for (app, kind), rows in res.items()}
    print(rec.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
