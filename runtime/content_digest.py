"""SHA-256 digests of big buffers (a model's weights) on every core.

A cold compile of BERT-base hashed its 440 MB of weights four times on one
core (the model file, the cache key's constants, the external globals'
names, the cache's .data file): 4.4 s of a 15 s compile on a host without
SHA instructions (0.38 GB/s). hashlib releases the GIL while it hashes,
so pieces of a buffer are hashed by a pool of threads, and the pieces'
digests are hashed together (a two-level tree, like BLAKE3's or the
Merkle trees of content-addressed stores). Up to one piece, the digest is
plain SHA-256 of the bytes.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor

PIECE_BYTES = 4 << 20
"""Bytes hashed by one task: big enough that a task's overhead is nothing
beside its hashing, small enough to spread a 100 MB buffer over 16 cores."""

Buffer = bytes | bytearray | memoryview


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
    digest = hashlib.sha256()
    for view in piece:
        digest.update(view)
    return digest.digest()


def content_digest(*buffers: Buffer) -> bytes:
    """The digest of the buffers' concatenation (32 bytes): SHA-256 of it up
    to PIECE_BYTES; beyond, SHA-256 of its pieces' SHA-256s, hashed in parallel."""
    pieces = _pieces(buffers)
    if len(pieces) == 1:
        return _hash_piece(pieces[0])
    return hashlib.sha256(b"".join(_pool().map(_hash_piece, pieces))).digest()


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
        return hashlib.sha256(
            os.pread(descriptor, min(FILE_PIECE_BYTES, size - offset), offset)
        ).digest()

    offsets = range(0, size, FILE_PIECE_BYTES)
    if len(offsets) <= 1:
        return hashlib.sha256(os.pread(descriptor, size, 0)).digest()
    hashed = _pool().map(read_and_hash, offsets) if parallel else map(read_and_hash, offsets)
    return hashlib.sha256(b"".join(hashed)).digest()


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
