"""Reading an .onnx file without copying its weights three times.

`onnx.load` reads the file (one copy of the weights), protobuf parses it
into its arena (two), and each initializer's `raw_data` is a new bytes
object when the importer reads it (three): 1.3 s of BERT-base's 440 MB on a
2-core host. `load_weights_in_file` walks the file's protobuf fields
instead (the wire format's keys and lengths: no value is decoded but the
few it needs), and leaves each big initializer's bytes in the file: the
model it parses refers to them as ONNX external data at their offset in
the same file, with the folder as `basepath`, so that `initializer_array`
reads each weight once, into the bytes object the graph constant keeps.
Anything unusual (a protobuf group, a repeated raw_data, a truncated
field) returns None: the caller reads the file with onnx.load as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from graphcompiler.frontends.onnx.errors import OnnxImportError

IN_FILE_MIN_BYTES = 1 << 20
"""Initializers from this size on stay in the file; smaller ones (biases,
shapes) are parsed as usual. Shape inference reads the values of those up
to model.SHAPE_CHECK_MAX_ELEMENTS (8 KiB of int64): they must stay parsed."""

_MODEL_GRAPH, _GRAPH_INITIALIZER, _TENSOR_RAW_DATA = 7, 5, 9
"""Field numbers in onnx.proto: ModelProto.graph, GraphProto.initializer,
TensorProto.raw_data."""

_LENGTH_DELIMITED = 2


class _NotPlain(Exception):
    """The file uses something this reader leaves to onnx.load."""


def load_weights_in_file(path: Path) -> onnx.ModelProto | None:
    """The model in `path` with its big initializers left in the file (see
    the module's docstring); None where onnx.load should read it."""
    try:
        real = Path(path).resolve()  # onnx reads external data from regular files only
        with open(real, "rb") as file:
            reader = _Reader(file.fileno(), os.fstat(file.fileno()).st_size)
            model = _model_bytes(reader, real.name, str(real.parent))
    except (OSError, RuntimeError, _NotPlain):  # RuntimeError: a symbolic link loop
        return None
    folder = str(Path(path).absolute().parent)  # other files are named from the path given
    try:
        proto = onnx.ModelProto.FromString(model)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError and kin: onnx.load says why
        return None
    for tensor in proto.graph.initializer:  # external already: found from the same folder
        if tensor.data_location == onnx.TensorProto.EXTERNAL and not _basepath(tensor):
            tensor.external_data.add(key="basepath", value=folder)
    return proto


def read_weights_in(model: onnx.ModelProto) -> None:
    """Move the weights `load_weights_in_file` left in the file into
    `model`, for a model kept to be imported later (a SpecializingGraph's):
    by then the file may have been rewritten."""
    for tensor in model.graph.initializer:
        base = _basepath(tensor)
        if tensor.data_location == onnx.TensorProto.EXTERNAL and base:
            onnx.external_data_helper.load_external_data_for_tensor(tensor, base)


def initializer_array(tensor: onnx.TensorProto) -> np.ndarray:
    """numpy_helper.to_array, external data read from the tensor's
    `basepath`; external data that is missing or short is an import error
    naming the initializer (onnx's own message)."""
    try:
        return numpy_helper.to_array(tensor, _basepath(tensor))
    except (OSError, ValueError, onnx.checker.ValidationError) as error:
        raise OnnxImportError(f"initializer '{tensor.name}': {error}") from None


class Constants(MutableMapping[str, np.ndarray]):
    """The importer's arrays known at import time, by name. Initializers
    stored in a file are read by a background thread in file order
    (`read_ahead`) while the nodes are converted: a read releases the GIL,
    so BERT-base's 0.33 s of reading its 440 MB overlaps the conversion. An
    array not read yet is waited for where it is first used; `close` waits
    for the rest (a read's error is raised there or at that use, as onnx's
    message) and ends the thread, before anything forks."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}
        self._pending: dict[str, Callable[[], np.ndarray]] = {}
        self._reader: ThreadPoolExecutor | None = None

    def read_ahead(
        self, tensor: onnx.TensorProto, convert: Callable[[np.ndarray], np.ndarray]
    ) -> None:
        """`tensor`'s array (external data) as `convert` makes it, read meanwhile."""
        if self._reader is None:
            self._reader = ThreadPoolExecutor(1, thread_name_prefix="gc-read-weights")
        read = self._reader.submit(initializer_array, tensor)
        self._arrays.pop(tensor.name, None)
        self._pending[tensor.name] = lambda: convert(read.result())

    def close(self, wait_for_reads: bool = True) -> None:
        """Wait for every read (or, after a failed import, drop those not
        begun) and end the reading thread."""
        try:
            for name in list(self._pending) if wait_for_reads else ():
                self[name]
        finally:
            if self._reader is not None:
                self._reader.shutdown(wait=True, cancel_futures=not wait_for_reads)
                self._reader = None

    def __getitem__(self, name: str) -> np.ndarray:
        pending = self._pending.pop(name, None)
        if pending is not None:
            self._arrays[name] = pending()
        return self._arrays[name]

    def __setitem__(self, name: str, array: np.ndarray) -> None:
        self._pending.pop(name, None)
        self._arrays[name] = array

    def __delitem__(self, name: str) -> None:
        if self._pending.pop(name, None) is None:
            del self._arrays[name]

    def __contains__(self, name: object) -> bool:
        return name in self._arrays or name in self._pending

    def __iter__(self) -> Iterator[str]:
        return iter([*self._arrays, *self._pending])

    def __len__(self) -> int:
        return len(self._arrays) + len(self._pending)


def _basepath(tensor: onnx.TensorProto) -> str:
    return next((entry.value for entry in tensor.external_data if entry.key == "basepath"), "")


class _Reader:
    """Fields of the file's protobuf messages, read with pread: a file
    truncated meanwhile reads short (_NotPlain), never SIGBUS."""

    def __init__(self, descriptor: int, size: int):
        self.descriptor, self.size = descriptor, size

    def read(self, start: int, end: int) -> bytes:
        data = os.pread(self.descriptor, end - start, start)
        if len(data) != end - start:
            raise _NotPlain
        return data

    def fields(self, start: int, end: int):
        """(number, key start, value start, field end) of each field in [start, end)."""
        position = start
        while position < end:
            head = os.pread(self.descriptor, 20, position)
            key, used = _varint(head, 0)
            number, wire = key >> 3, key & 7
            if wire == 0:
                _, value_end = _varint(head, used)
                value, field_end = position + used, position + value_end
            elif wire == 1:
                value, field_end = position + used, position + used + 8
            elif wire == _LENGTH_DELIMITED:
                length, length_end = _varint(head, used)
                value, field_end = position + length_end, position + length_end + length
            elif wire == 5:
                value, field_end = position + used, position + used + 4
            else:
                raise _NotPlain  # groups (wire types 3 and 4): deprecated, never in ONNX
            if field_end > end or number == 0:
                raise _NotPlain
            yield number, wire, position, value, field_end
            position = field_end


def _model_bytes(reader: _Reader, location: str, folder: str) -> bytes:
    parts = []
    for number, wire, key, value, end in reader.fields(0, reader.size):
        if number == _MODEL_GRAPH and wire == _LENGTH_DELIMITED:
            parts.append(_delimited(number, _graph_bytes(reader, value, end, location, folder)))
        else:
            parts.append(reader.read(key, end))
    return b"".join(parts)


def _graph_bytes(reader: _Reader, start: int, end: int, location: str, folder: str) -> bytes:
    parts = []
    for number, wire, key, value, field_end in reader.fields(start, end):
        big = field_end - value >= IN_FILE_MIN_BYTES
        if number == _GRAPH_INITIALIZER and wire == _LENGTH_DELIMITED and big:
            tensor = _tensor_in_file(reader, value, field_end, location, folder)
            parts.append(_delimited(number, tensor))
        else:
            parts.append(reader.read(key, field_end))
    return b"".join(parts)


def _tensor_in_file(reader: _Reader, start: int, end: int, location: str, folder: str) -> bytes:
    """The TensorProto in [start, end) without its raw_data, which it names
    as external data at its place in the file instead."""
    kept, raw = [], []
    for number, wire, key, value, field_end in reader.fields(start, end):
        if number == _TENSOR_RAW_DATA and wire == _LENGTH_DELIMITED:
            raw.append((value, field_end))
        else:
            kept.append(reader.read(key, field_end))
    tensor = onnx.TensorProto.FromString(b"".join(kept))
    if len(raw) != 1 or tensor.data_location == onnx.TensorProto.EXTERNAL:
        raise _NotPlain  # no raw bytes, or stored twice (the last would win), or external already
    offset, raw_end = raw[0]
    for key, entry in (("location", location), ("offset", offset), ("length", raw_end - offset)):
        tensor.external_data.add(key=key, value=str(entry))
    tensor.external_data.add(key="basepath", value=folder)
    tensor.data_location = onnx.TensorProto.EXTERNAL
    return tensor.SerializeToString()


def _delimited(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LENGTH_DELIMITED) + _encode_varint(len(payload)) + payload


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if position >= len(data) or shift > 63:
            raise _NotPlain
        byte = data[position]
        value |= (byte & 0x7F) << shift
        position += 1
        if not byte & 0x80:
            return value, position
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)
