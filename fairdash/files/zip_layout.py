"""A FairDash archive (a ``.fairdash`` model file) byte by byte: every byte of the file is either a member's
content (held by its CRC and the manifest's SHA-256) or a field of the zip's structure that must say exactly what
Python's ``zipfile`` writes for it, so a file with any byte altered is refused, not only one whose content changed.

``zipfile`` reads a member's sizes and times from the central directory and skips most of the local header's
fields; an edited field there (a time, a flag, a size) would load as if nothing had changed. Here the local headers,
the central directory and its end record are walked in order: members back to back from the start, each local
header equal to its central entry, the central directory right after the last member, the end record right after
it and nothing after that, no comments, no extra fields and no data descriptors, and the fields only the central
directory has (version made by, attributes, disk numbers) as ``ZipFile.writestr`` writes them on any system.
"""
from __future__ import annotations

import struct

_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # signature, version needed, flags, method, time, date, crc, sizes, name/extra
_CENTRAL = struct.Struct("<4sBBHHHHHIIIHHHHHII")
_END = struct.Struct("<4sHHHHIIH")
WRITTEN_BY = (0, 3)  # the system byte of "version made by": Windows' or Unix's zipfile
VERSIONS = (10, 20)  # what zipfile writes as "version needed" for a stored (10) or deflated (20) member (no zip64)
MADE_BY = 20  # and as "version made by"
FILE_ATTRIBUTES = 0o600 << 16  # writestr's external attributes for a member given by name


def layout_problem(raw: bytes, members: int) -> str | None:
    """What in ``raw`` is not what ``zipfile.writestr`` writes for an archive of ``members`` members (in words), or
    None when every byte of its structure is."""
    pos, locals_ = 0, []
    for _ in range(members):
        if pos + _LOCAL.size > len(raw):
            return "it ends inside a member's header"
        sig, need, flags, method, time, date, crc, csize, usize, nlen, xlen = _LOCAL.unpack_from(raw, pos)
        if sig != b"PK\x03\x04" or need not in VERSIONS or flags != 0 or xlen != 0:
            return "a member's header is not as written"
        name = raw[pos + _LOCAL.size: pos + _LOCAL.size + nlen]
        locals_.append((pos, (need, flags, method, time, date, crc, csize, usize, nlen), name))
        pos += _LOCAL.size + nlen + csize
    start = pos
    for offset, fields, name in locals_:
        if pos + _CENTRAL.size > len(raw):
            return "its central directory is cut short"
        (sig, made, system, need, flags, method, time, date, crc, csize, usize, nlen, xlen, clen, disk, inner, outer,
         at) = _CENTRAL.unpack_from(raw, pos)
        if (sig != b"PK\x01\x02" or made != MADE_BY or system not in WRITTEN_BY or xlen or clen or disk or inner
                or outer != FILE_ATTRIBUTES or at != offset):
            return "its central directory is not as written"
        if (need, flags, method, time, date, crc, csize, usize, nlen) != fields or \
                raw[pos + _CENTRAL.size: pos + _CENTRAL.size + nlen] != name:
            return "a member's header disagrees with the central directory"
        pos += _CENTRAL.size + nlen
    if len(raw) != pos + _END.size:
        return "bytes follow or are missing after its central directory"
    sig, disk, cd_disk, here, total, size, cd_at, clen = _END.unpack_from(raw, pos)
    if sig != b"PK\x05\x06" or disk or cd_disk or here != members or total != members or size != pos - start \
            or cd_at != start or clen:
        return "its end record is not as written"
    return None
