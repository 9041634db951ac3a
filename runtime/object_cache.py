"""Files this user's processes made and read back, verified: the cache
directory (`~/.cache/graphcompiler`, or `$GC_CACHE_DIR`; `GC_DISABLE_CACHE=1`
turns it off), machine code that depends on no graph (the thread pool's:
`cached_object`), and the blob a compiled graph's objects are packed into.

Every file is a header, then its payload: a magic naming the layout, the
payload's length and a SHA-256 of the file's name and payload.
`read_verified` checks it before JSON, NumPy or LLVM see a byte: LLVM's
object loader trusts its input (one zeroed block of the pool's object
crashed every later process), and a valid file copied over another name
would be another graph's code. A damaged file is deleted, so that what is
built again replaces it. Writes go through a temporary file and a rename,
so concurrent processes never see half a file.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

DEFAULT_DIRECTORY = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "graphcompiler"


def cache_directory(cache: bool | str | Path | None) -> Path | None:
    """Where `compile(cache=...)` keeps entries: a path; True for
    $GC_CACHE_DIR or the default; False for none; None (the default) as
    True unless GC_DISABLE_CACHE is set (to anything but 0)."""
    if cache is None:
        cache = os.environ.get("GC_DISABLE_CACHE", "0") in ("", "0")
    if cache is False:
        return None
    if cache is True:
        return Path(os.environ.get("GC_CACHE_DIR") or DEFAULT_DIRECTORY)
    return Path(cache)


_OBJECTS_MAGIC = b"GCOBJ3\0\0"
_LENGTH = struct.Struct("<Q")


def pack_objects(objects: list[bytes]) -> bytes:
    """A compiled graph's machine code as one blob: the objects of its
    program's parts and of its runtime (runtime/jit.py builds them apart,
    at once), each after its length, after their count."""
    lengths = b"".join(_LENGTH.pack(len(code)) for code in objects)
    return _OBJECTS_MAGIC + _LENGTH.pack(len(objects)) + lengths + b"".join(objects)


def unpack_objects(blob: bytes) -> list[bytes]:
    """The objects of `pack_objects`; ValueError for anything else."""
    if not blob.startswith(_OBJECTS_MAGIC) or len(blob) < len(_OBJECTS_MAGIC) + _LENGTH.size:
        raise ValueError("not graphcompiler's object code")
    (count,) = _LENGTH.unpack_from(blob, len(_OBJECTS_MAGIC))
    offset = len(_OBJECTS_MAGIC) + _LENGTH.size
    if len(blob) < offset + count * _LENGTH.size:
        raise ValueError("truncated object code")
    lengths = [_LENGTH.unpack_from(blob, offset + i * _LENGTH.size)[0] for i in range(count)]
    offset += count * _LENGTH.size
    if len(blob) != offset + sum(lengths):
        raise ValueError("truncated object code")
    objects = []
    for length in lengths:
        objects.append(blob[offset : offset + length])
        offset += length
    return objects


def cached_object(name: str, key: Sequence[str], build: Callable[[], bytes]) -> bytes:
    """Machine code that depends only on `key` (source text, CPU, LLVM...)
    rather than on a graph, such as the thread pool's: read back from the
    cache directory (GC_CACHE_DIR, on unless GC_DISABLE_CACHE), else built
    and kept there as `<name>-<hash of key>.o`."""
    directory = cache_directory(None)
    if directory is None:
        return build()
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:32]
    path = directory / f"{name}-{digest}.o"
    code = read_verified(path)
    if code is not None:
        return code
    code = build()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_verified(path, code)
    except OSError:
        pass
    return code


_FILE_MAGIC = b"GCFILE1\0"
"""The layout of a cache file's header; a file of another layout is damaged."""

_HEADER = struct.Struct("<8sQ32s")
"""Magic, payload length, SHA-256 of the file's name and payload."""


def _digest(path: Path, payload: bytes | memoryview) -> bytes:
    """The name is hashed too: a valid file under another name (another
    graph's entry, another kind of file) does not verify."""
    digest = hashlib.sha256(path.name.encode() + b"\0")
    digest.update(payload)
    return digest.digest()


def write_verified(path: Path, payload: bytes | memoryview) -> None:
    """`payload` under the header `read_verified` checks, atomically."""
    header = _HEADER.pack(_FILE_MAGIC, len(payload), _digest(path, payload))
    _write_atomically(path, lambda f: f.writelines((header, payload)))


def read_verified(path: Path) -> bytes | None:
    """The payload `write_verified` put in `path`, or None: missing, or
    damaged (any other layout, length or hash), then deleted."""
    try:
        with open(path, "rb") as file:
            header, payload = file.read(_HEADER.size), file.read()
            identity = os.fstat(file.fileno())
    except OSError:
        return None
    if len(header) == _HEADER.size:
        magic, length, digest = _HEADER.unpack(header)
        if magic == _FILE_MAGIC and length == len(payload) and digest == _digest(path, payload):
            return payload
    try:  # unless another process has renamed a good one over it meanwhile
        now = os.stat(path)
        if (now.st_dev, now.st_ino) == (identity.st_dev, identity.st_ino):
            path.unlink()
    except OSError:
        pass
    return None


def _write_atomically(path: Path, write) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as file:
            write(file)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
