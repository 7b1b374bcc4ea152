"""FairDash's archives as bytes arrive: a model file (:mod:`fairdash.files.export`) or a session file
(:mod:`fairdash.files.session_file`) read from a path, bytes or an upload (``read_source``), its zip checked before
anything is read (``open_archive``: member names, the layout byte by byte, sizes, compression, no encryption, no
path parts) and its JSON members parsed strictly (``json_member``). Every refusal is one line
(:class:`~fairdash.errors.FairDashError`) that says what the file seems to be instead.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Callable, NamedTuple

from ..errors import FairDashError
from .zip_layout import layout_problem

MANIFEST = "manifest.json"  # the member that identifies every FairDash archive, written first
MAX_RATIO = 200  # uncompressed / compressed size above this (for members over 1 MiB) looks like a zip bomb


def _what_is_it(raw: bytes) -> str:
    """A guess at what a non-model file is, for the error message."""
    head = raw[:16]
    if not raw:
        return "it is empty"
    if head[:1] == b"\x80" and len(head) > 1 and head[1] <= 5:
        return "it looks like a Python pickle, which FairDash never loads because it can run code"
    if head[:2] == b"\x1f\x8b":
        return "it is gzip-compressed data"
    if head[:4] == b"PAR1":
        return "it is a Parquet table"
    if head[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        return "it is an old Office document"
    if head[:5] == b"%PDF-":
        return "it is a PDF document"
    if head[:6] == b"\x93NUMPY":
        return "it is a numpy array file"
    if head[:4] == b"\x89PNG" or head[:3] == b"\xff\xd8\xff":
        return "it is an image"
    text = raw[:2048].lstrip().lower()
    if text.startswith((b"<!doctype html", b"<html")):
        return "it is a web page (HTML); a FairDash report is not a model file"
    if text[:1] in (b"{", b"["):
        return "it is a JSON text file"
    try:
        raw[:4096].decode("utf-8")
        return "it is a text file (a table?)"
    except UnicodeDecodeError:
        return "its contents are not a zip archive"


def read_source(source, *, what: str, max_bytes: int, too_big, caller: str) -> tuple[bytes, str]:
    """``(bytes, name)`` of a FairDash file (``what``: "model file", "session file") given as a path, bytes or a
    binary file object (an upload), refused in one line where it is missing, not a file, opened as text, or larger
    than ``max_bytes`` (``too_big(name)``: the sentence; nothing past the limit is read). ``caller`` names the
    function in the message for a source of another kind."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw, name = bytes(source), f"the {what}"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise FairDashError(f"No such {what}: {path}")
        if not path.is_file():
            raise FairDashError(f"{path} is not a file.")
        if path.stat().st_size > max_bytes:
            raise FairDashError(too_big(path.name))
        raw, name = path.read_bytes(), path.name
    elif hasattr(source, "read"):  # an upload
        raw = source.read(max_bytes + 1)
        if isinstance(raw, str):
            raise FairDashError(f"A {what} must be opened in binary mode.")
        name = getattr(source, "name", None) or f"the {what}"
    else:
        raise FairDashError(f"{caller} takes a path, bytes or a binary file object.")
    if len(raw) > max_bytes:
        raise FairDashError(too_big(name))
    return raw, name


_BAD_NAME = re.compile(r"(^/|^\\|\.\.|\\|:|\x00)")


class ArchiveKind(NamedTuple):
    """What an archive of FairDash's is, for :func:`open_archive`: its name in messages (``what``), what to do
    about a damaged one (``again``), which member names it may hold (``allowed``), each member's size limit
    (``limit``) and the most it may unpack to (``max_total``). The model file is
    :data:`fairdash.files.export.MODEL_ARCHIVE`; the session file (:mod:`fairdash.files.session_file`) is another."""
    what: str
    again: str
    allowed: Callable[[str], bool]
    limit: Callable[[str], int]
    max_total: int


def open_archive(raw: bytes, name: str, kind: ArchiveKind) -> dict[str, bytes]:
    """Check a FairDash archive's zip before reading it (member names, the layout byte by byte, sizes, compression,
    no encryption, no path parts) and return its members' bytes; every refusal a one-line :class:`FairDashError`."""
    z, infos = _checked_zip(raw, name, kind)
    return {i.filename: b"".join(_member_pieces(z, i, name, kind)) for i in infos}


def member_digests(raw: bytes, name: str, kind: ArchiveKind) -> tuple[dict[str, tuple[int, str]], bytes]:
    """``({member: (size, SHA-256 hex)}, the manifest's bytes)`` of a FairDash archive, its zip checked as
    :func:`open_archive` checks it but each member streamed through the hash a piece at a time: the memory taken is a
    piece's, whatever the members hold, and the time is linear in their size. What a caller checks before handing
    the file to the reading process (an altered byte is refused here, without starting one)."""
    z, infos = _checked_zip(raw, name, kind)
    digests, manifest = {}, b""
    for i in infos:
        h, size = hashlib.sha256(), 0
        for piece in _member_pieces(z, i, name, kind):
            h.update(piece)
            size += len(piece)
            if i.filename == MANIFEST:
                manifest += piece
        digests[i.filename] = (size, h.hexdigest())
    return digests, manifest


def digests_of(members: dict[str, bytes]) -> dict[str, tuple[int, str]]:
    """:func:`member_digests`' answer for members already read."""
    return {k: (len(v), hashlib.sha256(v).hexdigest()) for k, v in members.items()}


def matches(entry, digest: tuple[int, str]) -> bool:
    """Whether a manifest's entry (``{"size", "sha256"}``) records this member's size and hash."""
    return isinstance(entry, dict) and entry.get("size") == digest[0] and entry.get("sha256") == digest[1]


_PIECE = 1 << 20


def _checked_zip(raw: bytes, name: str, kind: ArchiveKind):
    """The zip and its members' entries, every check made before a member is read."""
    if raw[:4] != b"PK\x03\x04":
        raise FairDashError(f"{name} is not a {kind.what}: {_what_is_it(raw)}.")
    try:
        z = zipfile.ZipFile(io.BytesIO(raw))
        infos = z.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, RuntimeError, struct.error):
        # (NotImplementedError, a RuntimeError: a damaged header claiming a zip version or method Python lacks)
        raise FairDashError(f"{name} is damaged or incomplete (the archive cannot be read); {kind.again}.") from None
    names = [i.filename for i in infos]
    if len(names) != len(set(names)):
        raise FairDashError(f"{name} is not a valid {kind.what}: it repeats a member name.")
    for i in infos:
        if _BAD_NAME.search(i.filename) or i.is_dir():
            raise FairDashError(f"{name} is not a valid {kind.what}: it holds a path ({i.filename!r}).")
    if MANIFEST not in names:
        raise FairDashError(f"{name} is not a {kind.what}: it is a zip archive without a FairDash manifest "
                            f"(it holds {', '.join(repr(n) for n in names[:5]) or 'nothing'}).")
    extra = sorted(n for n in names if not kind.allowed(n))
    if extra:
        raise FairDashError(f"{name} is not a valid {kind.what}: unexpected member(s) "
                            f"{', '.join(map(repr, extra[:5]))}.")
    if (problem := layout_problem(raw, len(infos))) is not None:  # any byte of the structure altered
        raise FairDashError(f"{name} is damaged or altered: {problem}; {kind.again}.")
    _check_sizes(infos, name, kind)
    return z, infos


def _member_pieces(z, info, name: str, kind: ArchiveKind):
    """A member's bytes, a piece at a time, no more than its header promises (a lying header cannot inflate us)."""
    got = 0
    try:
        with z.open(info) as f:
            while piece := f.read(min(_PIECE, info.file_size + 1 - got)):
                got += len(piece)
                yield piece
                if got > info.file_size:
                    break
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, RuntimeError, struct.error) as e:
        raise FairDashError(f"{name} is damaged or incomplete ({info.filename}: {e}); {kind.again}.") from None
    if got != info.file_size:
        raise FairDashError(f"{name} is damaged: {info.filename} does not have the size its header says.")


def _check_sizes(infos, name: str, kind: ArchiveKind) -> None:
    """No encryption, a known compression, each member within its limit, no zip bomb, the whole within its limit."""
    total = 0
    for i in infos:
        if i.flag_bits & 0x1:
            raise FairDashError(f"{name} is encrypted; {kind.what}s never are.")
        if i.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise FairDashError(f"{name} uses an unsupported compression method.")
        if i.file_size > kind.limit(i.filename):
            raise FairDashError(f"{name} is not a valid {kind.what}: {i.filename} is too large.")
        if i.file_size > (1 << 20) and i.file_size > MAX_RATIO * max(i.compress_size, 1):
            raise FairDashError(f"{name} is refused: {i.filename} expands {i.file_size // max(i.compress_size, 1)}x "
                                "when unpacked (a zip bomb?).")
        total += i.file_size
    if total > kind.max_total:
        raise FairDashError(f"{name} is refused: it would unpack to more than {kind.max_total >> 20} MB.")


MAX_JSON_CONTAINERS = 1_000_000  # objects and lists in one JSON member (the largest honest session: about 10^5)


def json_member(data: bytes, what: str, name: str):
    """A JSON member parsed strictly (no NaN or Infinity), refused in one line where it is not JSON or holds more
    than :data:`MAX_JSON_CONTAINERS` objects and lists (counted on its bytes before parsing: each costs the parser
    far more memory than its two characters, ``[{},{},...]``)."""
    def _no_constants(c):
        raise ValueError(f"non-standard number {c}")

    if data.count(b"{") + data.count(b"[") > MAX_JSON_CONTAINERS:
        raise FairDashError(f"{name} is refused: its {what} holds more than {MAX_JSON_CONTAINERS:,} objects and lists "
                            "(a FairDash file holds far fewer).", reason="malformed")
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise FairDashError(f"{name} is damaged: its {what} is not valid JSON.") from None
