"""runtime/content_digest.py: the digest depends on the bytes only (not on
how they are cut into buffers), is the host's hash (SHA-256, or BLAKE2b
without SHA instructions) up to one piece, and differs for any changed byte."""

import hashlib
import os

import numpy as np
import pytest

from graphcompiler.runtime import content_digest as digest_module
from graphcompiler.runtime.content_digest import (
    PIECE_BYTES,
    content_digest,
    content_digests,
    file_content_digest,
    hash_name,
)


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(0).bytes(2 * PIECE_BYTES + 12345)


@pytest.fixture(params=["sha256", "blake2b"], autouse=True)
def algorithm(request, monkeypatch):
    """Every test with either hash, whichever this host picks."""
    monkeypatch.setattr(digest_module, "HASH_NAME", request.param)
    return request.param


def plain(data: bytes, algorithm: str) -> bytes:
    if algorithm == "sha256":
        return hashlib.sha256(data).digest()
    return hashlib.blake2b(data, digest_size=32).digest()


def test_sha256_where_the_cpu_has_sha_instructions(tmp_path):
    assert hash_name(frozenset({"avx2", "sha_ni"})) == "sha256"
    assert hash_name(frozenset({"fp", "asimd", "sha2"})) == "sha256"  # Arm
    assert hash_name(frozenset({"avx2", "avx512f"})) == "blake2b"
    assert hash_name(frozenset()) == "sha256"  # the OS does not say
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 sha_ni avx2\n\nflags\t: other\n")
    assert digest_module._cpu_flags(cpuinfo) == {"fpu", "sse2", "sha_ni", "avx2"}
    assert digest_module._cpu_flags(tmp_path / "missing") == frozenset()


def test_one_piece_is_the_plain_hash(algorithm):
    small = b"x" * 1000
    assert content_digest(small) == plain(small, algorithm)
    assert content_digest(b"ab", b"c") == plain(b"abc", algorithm)
    assert content_digest(b"") == plain(b"", algorithm)


def test_the_digest_of_the_concatenation_however_cut(data):
    whole = content_digest(data)
    assert whole == content_digest(memoryview(data)[:7], memoryview(data)[7:])
    cut = PIECE_BYTES - 3
    assert whole == content_digest(data[:cut], b"", data[cut : cut + 10], data[cut + 10 :])
    array = np.frombuffer(data[: len(data) // 16 * 16], np.float32).reshape(-1, 4)
    assert content_digest(array) == content_digest(array.tobytes())


def test_pieces_are_hashed_and_then_their_digests(data, algorithm):
    pieces = [data[i : i + PIECE_BYTES] for i in range(0, len(data), PIECE_BYTES)]
    expected = plain(b"".join(plain(p, algorithm) for p in pieces), algorithm)
    assert content_digest(data) == expected


def test_a_changed_byte_changes_the_digest(data):
    changed = bytearray(data)
    changed[PIECE_BYTES + 5] ^= 1
    assert content_digest(changed) != content_digest(data)
    assert content_digest(data[:-1]) != content_digest(data)


def test_many_buffers_at_once_as_one_by_one(data, monkeypatch):
    buffers = [data[:100], data, b"", data[5:PIECE_BYTES], data[:100]]
    assert content_digests(buffers) == [content_digest(b) for b in buffers]
    monkeypatch.setattr(digest_module, "PIECE_BYTES", 64)  # every buffer spread over pieces
    assert content_digests([b"a" * 100, b"b" * 10]) == [
        content_digest(b"a" * 100),
        content_digest(b"b" * 10),
    ]


@pytest.mark.parametrize("parallel", [True, False])
def test_a_file_read_piece_by_piece_as_its_bytes(data, tmp_path, parallel, monkeypatch, algorithm):
    """The tree of content_digest, with the file's own piece size."""
    path = tmp_path / "file"
    for content in (data, data[:1000], b""):
        path.write_bytes(content)
        with open(path, "rb") as file:
            digest = file_content_digest(file.fileno(), len(content), parallel)
            assert digest == plain(content, algorithm)  # one piece
            with monkeypatch.context() as patch:
                patch.setattr(digest_module, "FILE_PIECE_BYTES", PIECE_BYTES)
                digest = file_content_digest(file.fileno(), len(content), parallel)
                assert digest == content_digest(content)


def test_a_file_truncated_while_hashed_reads_short(data, tmp_path):
    """Never SIGBUS, as reading a memory map of it would: another digest."""
    path = tmp_path / "file"
    path.write_bytes(data)
    with open(path, "rb") as file:
        os.truncate(path, PIECE_BYTES // 2)
        assert file_content_digest(file.fileno(), len(data)) != content_digest(data)
