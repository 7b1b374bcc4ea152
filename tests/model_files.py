"""Model files altered on purpose for the tests of their checks."""
import hashlib
import io
import json
import zipfile
from pathlib import Path


def rewritten(path: Path, change) -> bytes:
    """The model file with its metadata changed by ``change`` and its manifest's checksums made to match."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(members["meta.json"])
    change(meta)
    members["meta.json"] = json.dumps(meta).encode()
    manifest = json.loads(members["manifest.json"])
    for n in ("meta.json", "arrays.safetensors"):
        manifest["members"][n] = {"size": len(members[n]), "sha256": hashlib.sha256(members[n]).hexdigest()}
    members["manifest.json"] = json.dumps(manifest).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n in ("manifest.json", "meta.json", "arrays.safetensors"):
            z.writestr(n, members[n])
    return buf.getvalue()
