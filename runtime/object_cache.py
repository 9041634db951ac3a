"""Files this user's processes made and read back, verified: the cache
directory (`~/.cache/graphcompiler`, or `$GC_CACHE_DIR`; `GC_DISABLE_CACHE=1`
turns it off), machine code that depends on no graph (the thread pool's:
`cached_object`), and the blob a compiled graph's objects are packed into.

Every file is a header, then its payload: a magic naming the layout, the
payload's length and a SHA-256 digest of the file's name and payload
(content_digest.py: pieces hashed on every core).
`read_verified` checks it before JSON, NumPy or LLVM see a byte: LLVM's
object loader trusts its input (one zeroed block of the pool's object
crashed every later process), and a valid file copied over another name
would be another graph's code. A damaged file is deleted, so that what is
built again replaces it. Writes go through a temporary file and a rename,
so concurrent processes never see half a file.

Big files (a model's weights, hundreds of MB) are memory-mapped rather than
read (`write_mapped`, `map_verified`), and a file's hash, once checked or
computed, is remembered by the file's identity (device, inode, size, mtime,
ctime) in a small `memo-*.json` beside it, as Bazel's digest cache does: a
compile-cache hit in a new process stats the model and its weights instead
of reading and hashing them (0.3 s a file for BERT-base). Any write, rename
or copy changes the identity, so a damaged or replaced file is hashed again.
A file never seen before need not be hashed before its compile starts:
a `sampled-*` marker, named by the file's size and a few blocks of it, is
left for each file hashed, and without one no cache entry can be keyed by
that file's digest yet (`hashed_before`), so the digest is taken beside the
compile (`file_digest_soon`): 0.3-0.5 s of BERT-base's first compile on
2 cores, where the other core is busy too.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path

from graphcompiler.runtime.content_digest import (
    NAME_DIGEST_BYTES,
    content_digest,
    content_digests,
    file_content_digest,
)

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


_FILE_MAGIC = b"GCFILE2\0"
"""The layout of a cache file's header; a file of another layout is damaged."""

_HEADER = struct.Struct("<8sQ32s")
"""Magic, payload length, content_digest of the file's name and payload."""


def _digest(path: Path, *payload: bytes | memoryview) -> bytes:
    """The name is hashed too: a valid file under another name (another
    graph's entry, another kind of file) does not verify."""
    return content_digest(path.name.encode() + b"\0", *payload)


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
    _delete_damaged(path, identity)
    return None


MAPPED_ALIGNMENT = 64
"""Where `write_mapped` starts each blob in the mapping (a cache line, as
aligned as any global the lowering emits)."""


_MAPPED_MAGIC = b"GCMAP2\0\0"
"""The layout of a mapped file: the header, then an index (the blob count,
then per blob its offset, length and BLOB_DIGEST_BYTES of its
content_digest), then the blobs. The header's digest covers the index."""

BLOB_DIGEST_BYTES = NAME_DIGEST_BYTES
_INDEX_ENTRY = struct.Struct(f"<QQ{BLOB_DIGEST_BYTES}s")


def write_mapped(
    path: Path, blobs: Sequence[bytes | memoryview], digests: Sequence[bytes | None] = ()
) -> list[int]:
    """The blobs in one verified file that `map_verified` maps, each on a
    MAPPED_ALIGNMENT boundary of the mapping; their offsets in the payload.
    `digests`: the blobs' content_digests (their first BLOB_DIGEST_BYTES)
    where the caller has them, as the compiler has for the weights it names
    by content: those blobs are written without being hashed again (1.2 s
    of CPU for BERT-base's 440 MB). The file is remembered as verified at
    once: the next process trusts what it finds under this identity."""
    given = list(digests) + [None] * (len(blobs) - len(digests))
    missing = [i for i, digest in enumerate(given) if digest is None]
    for index, digest in zip(missing, content_digests([blobs[i] for i in missing]), strict=True):
        given[index] = digest
    position = _HEADER.size + _LENGTH.size + len(blobs) * _INDEX_ENTRY.size
    chunks, index, offsets = [], [_LENGTH.pack(len(blobs))], []
    for blob, digest in zip(blobs, given, strict=True):
        padding = -position % MAPPED_ALIGNMENT
        chunks += [bytes(padding), blob]
        offsets.append(position + padding - _HEADER.size)
        index.append(_INDEX_ENTRY.pack(offsets[-1], len(blob), digest[:BLOB_DIGEST_BYTES]))  # type: ignore[index]
        position += padding + len(blob)
    digest = _digest(path, *index)
    header = _HEADER.pack(_MAPPED_MAGIC, position - _HEADER.size, digest)
    _write_atomically(path, lambda f: f.writelines((header, *index, *chunks)))
    _remember_digest(path.parent, "verified", path, os.stat(path), digest.hex(), fresh=True)
    return offsets


def map_verified(path: Path) -> memoryview | None:
    """The payload `write_mapped` put in `path`, memory-mapped (read-only),
    or None as for read_verified. Its index and blobs are checked against
    their digests unless this version of the file was checked before (see
    the module's docstring)."""
    try:
        with open(path, "rb") as file:
            identity = os.fstat(file.fileno())
            headed = identity.st_size >= _HEADER.size + _LENGTH.size
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) if headed else None
    except OSError:
        return None
    if mapped is not None:
        magic, length, digest = _HEADER.unpack_from(mapped)
        payload = memoryview(mapped)[_HEADER.size :]
        if magic == _MAPPED_MAGIC and length == len(payload):
            if _known_digest(path.parent, "verified", path, identity) == digest.hex():
                return payload
            if _blobs_verify(path, payload, digest):
                _remember_digest(path.parent, "verified", path, identity, digest.hex())
                return payload
        payload.release()
        mapped.close()
    _delete_damaged(path, identity)
    return None


def _blobs_verify(path: Path, payload: memoryview, digest: bytes) -> bool:
    """The index matches the header's digest, and each blob its digest."""
    (count,) = _LENGTH.unpack_from(payload)
    index_end = _LENGTH.size + count * _INDEX_ENTRY.size
    if index_end > len(payload):
        return False
    with payload[:index_end] as index:
        if _digest(path, index) != digest:
            return False
    entries = [
        _INDEX_ENTRY.unpack_from(payload, _LENGTH.size + i * _INDEX_ENTRY.size)
        for i in range(count)
    ]
    if any(offset < index_end or offset + size > len(payload) for offset, size, _ in entries):
        return False
    blobs = [payload[offset : offset + size] for offset, size, _ in entries]
    try:
        hashed = content_digests(blobs)
    finally:
        for blob in blobs:
            blob.release()  # the mapping closes if this fails
    return all(h[:BLOB_DIGEST_BYTES] == e[2] for h, e in zip(hashed, entries, strict=True))


def file_digest(path: Path, memo_directory: Path, parallel: bool = True) -> str:
    """The content_digest (hex) of a file's bytes (an ONNX model a compile was
    given), remembered in `memo_directory` by the file's identity: a later
    process stats the file instead of reading it. `parallel`: on every core
    (else on this thread's). OSError if unreadable."""
    with open(path, "rb") as file:
        before = os.fstat(file.fileno())
        known = _known_digest(memo_directory, "content", path, before)
        if known is not None:
            return known
        digest = file_content_digest(file.fileno(), before.st_size, parallel).hex()
        after = os.fstat(file.fileno())
        if _identity(after) == _identity(before):  # not written to while it was read
            _remember_digest(memo_directory, "content", path, before, digest)
            _mark_sampled(memo_directory, file, before.st_size)
    return digest


def file_identity(path: Path) -> list[int]:
    """What a write, rename or copy of the file changes (OSError if missing)."""
    return _identity(os.stat(path))


def remembered_file_digest(path: Path, memo_directory: Path) -> str | None:
    """`file_digest` if this version of the file was hashed before (a stat,
    no read), else None. OSError if the file cannot be stat'ed."""
    return _known_digest(memo_directory, "content", path, os.stat(path))


SAMPLES = 16
SAMPLE_BYTES = 4096


def _sampled_fingerprint(file, size: int) -> str:
    """SHA-256 of the size and SAMPLES blocks spread from the file's start to
    its end: equal files have equal fingerprints, a few KB read."""
    digest = hashlib.sha256(str(size).encode())
    for index in range(SAMPLES):
        offset = (size - SAMPLE_BYTES) * index // (SAMPLES - 1) if size > SAMPLE_BYTES else 0
        digest.update(os.pread(file.fileno(), SAMPLE_BYTES, offset))
    return digest.hexdigest()[:32]


def _mark_sampled(directory: Path, file, size: int) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"sampled-{_sampled_fingerprint(file, size)}").touch()
    except OSError:
        pass  # a read-only cache: later compiles hash the file first, as before


def hashed_before(path: Path, memo_directory: Path) -> bool:
    """Whether a file of these sampled bytes (_sampled_fingerprint) was ever
    hashed into `memo_directory`. False means that no cache entry can be
    keyed by this file's digest yet, so a compile need not wait for the
    digest before it starts (`file_digest_soon`); True, that one may be."""
    try:
        with open(path, "rb") as file:
            fingerprint = _sampled_fingerprint(file, os.fstat(file.fileno()).st_size)
    except OSError:
        return True  # the caller's file_digest reports it
    return (memo_directory / f"sampled-{fingerprint}").exists()


_hashing: dict[tuple[str, tuple[int, ...]], Future[str]] = {}
_hashing_lock = threading.Lock()


def file_digest_soon(path: Path, memo_directory: Path) -> Future[str]:
    """`file_digest` computed in a thread of its own, on one core (hashlib
    releases the GIL: another one than the compile's). One hash per version of
    a file at a time in the process: a second call gets the same future."""
    key = (os.path.abspath(path), tuple(_identity(os.stat(path))))
    with _hashing_lock:
        future = _hashing.get(key)
        if future is not None:
            return future
        future = _hashing[key] = Future()

    def hash_file() -> None:
        try:
            future.set_result(file_digest(path, memo_directory, parallel=False))
        except BaseException as error:  # noqa: BLE001 (handed to whoever waits)
            future.set_exception(error)
        finally:
            with _hashing_lock:
                _hashing.pop(key, None)

    threading.Thread(target=hash_file, name="gc-file-digest", daemon=True).start()
    return future


RECENT_NS = 2_000_000_000
"""A file whose times are this recent is hashed again next time: a write in
the same clock tick as the one hashed would not change them (git's "racy"
index entries). Files this module writes itself are remembered at once."""


def _identity(stat: os.stat_result) -> list[int]:
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def _memo_path(directory: Path, kind: str, path: Path) -> Path:
    name = hashlib.sha256(f"{kind}\0{os.path.abspath(path)}".encode()).hexdigest()[:32]
    return directory / f"memo-{name}.json"


def _known_digest(directory: Path, kind: str, path: Path, stat: os.stat_result) -> str | None:
    """The digest remembered for this version of the file (same identity), or None."""
    data = read_verified(_memo_path(directory, kind, path))
    try:
        memo = json.loads(data) if data is not None else {}
    except ValueError:
        return None
    return memo.get("digest") if memo.get("identity") == _identity(stat) else None


def _remember_digest(
    directory: Path, kind: str, path: Path, stat: os.stat_result, digest: str, fresh: bool = False
) -> None:
    """Best effort (a read-only cache only hashes again); `fresh`: the file
    was written by this process, so its recent times are no risk."""
    recent = time.time_ns() - max(stat.st_mtime_ns, stat.st_ctime_ns) < RECENT_NS
    if recent and not fresh:
        return
    memo = {"path": os.path.abspath(path), "identity": _identity(stat), "digest": digest}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_verified(_memo_path(directory, kind, path), json.dumps(memo).encode())
    except OSError:
        pass


def _delete_damaged(path: Path, identity: os.stat_result) -> None:
    """Unless another process has renamed a good file over it meanwhile."""
    try:
        now = os.stat(path)
        if (now.st_dev, now.st_ino) == (identity.st_dev, identity.st_ino):
            path.unlink()
    except OSError:
        pass


def _write_atomically(path: Path, write) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as file:
            write(file)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
