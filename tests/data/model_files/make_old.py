"""Train LR and FairLR on a 2,000-row part of COMPAS with the FairDash of the working folder and save them,
with the probabilities they give the next 300 rows (what a later FairDash must reproduce)."""
import json, subprocess, sys
from pathlib import Path
import numpy as np
import pandas as pd
from fairdash import data
from fairdash.experiments import fit_model
from fairdash.export import save_model

out = Path(sys.argv[1]); tag = sys.argv[2]
out.mkdir(parents=True, exist_ok=True)
table = data.load_sample("compas")
train, score = table.iloc[:2000].reset_index(drop=True), table.iloc[2000:2300].reset_index(drop=True)
task = data.build_task(train, data.paper_setup("compas-race").spec)
commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
expected = {}
from fairdash.target_spec import make_target_spec

jobs = [("lr", {}), ("fair-lr", dict(target=make_target_spec("dp", 0.4)))]
if len(sys.argv) > 3:
    jobs.append(("fair-lr", dict(target=make_target_spec("dp", 0.4, decision="group-rates"))))
for name, kw in jobs:
    m = fit_model(task, name, seed=0, device="cpu", **kw)
    fname = f"{tag}-{name}{'-group-rates' if 'target' in kw and kw['target'].decision != 'threshold' else ''}.fairdash"
    save_model(m, out / fname)
    expected[fname] = {"commit": commit, "probability": m.predict_proba(score)[:, 1].tolist(),
                       "prediction": np.asarray(m.predict(score)).astype(int).tolist()}
(out / f"{tag}-expected.json").write_text(json.dumps(expected))
print(commit, sorted(expected))
