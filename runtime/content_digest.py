"""Digests of big buffers (a model's weights) on every core.

A cold compile of BERT-base hashed its 440 MB of weights four times on one
core (the model file, the cache key's constants, the external globals'
names, the cache's .data file): 4.4 s of a 15 s compile on a host without
SHA instructions (0.38 GB/s). hashlib releases the GIL while it hashes,
so pieces of a buffer are hashed by a pool of threads, and the pieces'
digests are hashed together (a two-level tree, like BLAKE3's or the
Merkle trees of content-addressed stores). Up to one piece, the digest is
plain SHA-256 of the bytes, or BLAKE2b where the CPU has no SHA
instructions (`HASH_NAME`).
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

PIECE_BYTES = 4 << 20
"""Bytes hashed by one task: big enough that a task's overhead is nothing
beside its hashing, small enough to spread a 100 MB buffer over 16 cores."""

Buffer = bytes | bytearray | memoryview

SHA_FLAGS = frozenset({"sha_ni", "sha2"})
"""/proc/cpuinfo's names for SHA-256 instructions (x86, Arm)."""


def _cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first CPU's feature flags; empty where the OS does not say."""
    try:
        with open(cpuinfo) as file:
            for line in file:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def hash_name(flags: frozenset[str]) -> str:
    """SHA-256 where the CPU computes it (1.5-2 GB/s a core with SHA-NI),
    BLAKE2b-256 elsewhere: without SHA instructions SHA-256 ran at 0.39 GB/s
    and BLAKE2b at 0.63 GB/s on a Skylake-SP core, where BERT-base's and
    ResNet-50's cold compiles (the model file and the packed weights hashed)
    took 0.2-0.3 s less. Decided by the CPU's flags, not by timing, so every
    process on a host names the same bytes alike (the cache's keys)."""
    return "sha256" if flags & SHA_FLAGS or not flags else "blake2b"


HASH_NAME = hash_name(_cpu_flags())


def _hash(data: Buffer = b"") -> hashlib._Hash:
    """A new hash of HASH_NAME (32-byte digests either way)."""
    if HASH_NAME == "sha256":
        return hashlib.sha256(data)
    return hashlib.blake2b(data, digest_size=32)


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(len(os.sched_getaffinity(0)), thread_name_prefix="gc-digest")


def _bytes_view(buffer: Buffer) -> memoryview:
    view = memoryview(buffer)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _pieces(buffers: Iterable[Buffer]) -> list[list[memoryview]]:
    """The concatenation of `buffers`, cut every PIECE_BYTES (a piece may
    span buffers: the digest depends on the bytes, not on how they are cut)."""
    pieces: list[list[memoryview]] = [[]]
    room = PIECE_BYTES
    for buffer in buffers:
        view = _bytes_view(buffer)
        while len(view):
            if room == 0:
                pieces.append([])
                room = PIECE_BYTES
            taken, view = view[:room], view[room:]
            pieces[-1].append(taken)
            room -= len(taken)
    return pieces


def _hash_piece(piece: Sequence[memoryview]) -> bytes:
    digest = _hash()
    for view in piece:
        digest.update(view)
    return digest.digest()


def content_digest(*buffers: Buffer) -> bytes:
    """The digest of the buffers' concatenation (32 bytes): the hash of it up
    to PIECE_BYTES; beyond, the hash of its pieces' hashes, hashed in parallel."""
    pieces = _pieces(buffers)
    if len(pieces) == 1:
        return _hash_piece(pieces[0])
    return _hash(b"".join(_pool().map(_hash_piece, pieces))).digest()


def content_digests(buffers: Sequence[Buffer]) -> list[bytes]:
    """`content_digest` of each buffer, the buffers hashed in parallel (a
    model's many weights of a few MB each)."""
    if sum(len(_bytes_view(b)) for b in buffers) <= PIECE_BYTES:
        return [content_digest(buffer) for buffer in buffers]
    small = [i for i, b in enumerate(buffers) if len(_bytes_view(b)) <= PIECE_BYTES]
    digests: list[bytes | None] = [None] * len(buffers)
    for index, digest in zip(
        small, _pool().map(content_digest, [buffers[i] for i in small]), strict=True
    ):
        digests[index] = digest
    for index, buffer in enumerate(buffers):  # big ones spread their own pieces
        if digests[index] is None:
            digests[index] = content_digest(buffer)
    return digests  # type: ignore[return-value]


FILE_PIECE_BYTES = 64 << 20
"""A file's pieces are bigger: a thread hashing one beside a compile takes
the GIL back after each read and each hash, waiting up to the switch
interval (5 ms) each time; with 4 MB pieces that was half its time."""


def file_content_digest(descriptor: int, size: int, parallel: bool = True) -> bytes:
    """The digest of an open file's first `size` bytes: `content_digest`'s
    tree with FILE_PIECE_BYTES pieces, each read with pread (a file another
    process truncates meanwhile reads short, where a memory map of it would
    kill this process with SIGBUS). `parallel`: pieces on every core."""

    def read_and_hash(offset: int) -> bytes:
        return _hash(os.pread(descriptor, min(FILE_PIECE_BYTES, size - offset), offset)).digest()

    offsets = range(0, size, FILE_PIECE_BYTES)
    if len(offsets) <= 1:
        return _hash(os.pread(descriptor, size, 0)).digest()
    hashed = _pool().map(read_and_hash, offsets) if parallel else map(read_and_hash, offsets)
    return _hash(b"".join(hashed)).digest()


CONTENT_NAME_PREFIX = "gc.data."
NAME_DIGEST_BYTES = 16


def content_name(digest: bytes) -> str:
    """The symbol of a constant named by its content_digest (the compiler's
    external data: lowering/llvm/translate.py)."""
    return CONTENT_NAME_PREFIX + digest[:NAME_DIGEST_BYTES].hex()


def content_name_digest(name: str) -> bytes | None:
    """The digest prefix a `content_name` holds; None for any other name."""
    digits = name.removeprefix(CONTENT_NAME_PREFIX)
    if digits == name or len(digits) != 2 * NAME_DIGEST_BYTES:
        return None
    try:
        return bytes.fromhex(digits)
    except ValueError:
        return None
