"""ONNX's official node tests, run through graphcompiler.

    python -m graphcompiler.tools.onnx_conformance            # the pass-rate table
    python -m graphcompiler.tools.onnx_conformance --compiled --only test_gemm

The onnx wheel no longer ships the node test data: onnx's own generator
(`onnx.backend.test.case.node.collect_testcases`) makes it once, into
`cache_dir()` (onnx's layout: NAME/model.onnx, NAME/test_data_set_N/
{input,output}_K.pb, plus index.json), keyed by the onnx version.

A case is *supported* when it imports; otherwise it is skipped with the
importer's one-line reason. Supported cases run through the reference
interpreter or the compiled path and are compared as onnx's runner does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from graphcompiler.frontends.onnx.importer import OnnxImportError

LAYOUT = 3
"""Bumped when what generate() writes changes (the cache is then rebuilt)."""


def cache_dir() -> Path:
    """$GC_ONNX_NODE_TESTS, else ~/.cache/graphcompiler/onnx-node-tests/onnx-VERSION-LAYOUT."""
    if os.environ.get("GC_ONNX_NODE_TESTS"):
        return Path(os.environ["GC_ONNX_NODE_TESTS"])
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "graphcompiler" / "onnx-node-tests" / f"onnx-{onnx.__version__}-{LAYOUT}"


@dataclass(frozen=True)
class NodeCase:
    name: str
    directory: Path
    rtol: float
    atol: float
    skip: str | None = None  # why the case cannot be written or run at all

    def model(self) -> onnx.ModelProto:
        return onnx.load(str(self.directory / "model.onnx"))

    def data_sets(self) -> list[tuple[list, list]]:
        """(inputs, expected outputs) per data set: arrays, and lists of
        arrays or None for sequences and optionals."""
        graph = self.model().graph
        return [
            (_read_values(d, "input", graph.input), _read_values(d, "output", graph.output))
            for d in sorted(self.directory.glob("test_data_set_*"))
        ]


_PROTOS = {  # a value's type: the proto its file holds, and how it becomes numpy's
    "tensor_type": (onnx.TensorProto, numpy_helper.to_array),
    "sequence_type": (onnx.SequenceProto, numpy_helper.to_list),
    "optional_type": (onnx.OptionalProto, numpy_helper.to_optional),
}


def _read_values(directory: Path, kind: str, infos) -> list:
    count = len(list(directory.glob(f"{kind}_*.pb")))
    values = []
    for index, info in zip(range(count), infos, strict=False):
        proto_type, to_numpy = _PROTOS[info.type.WhichOneof("value")]
        proto = proto_type()
        proto.ParseFromString((directory / f"{kind}_{index}.pb").read_bytes())
        values.append(to_numpy(proto))
    return values


def _serialized(value, type_: onnx.TypeProto) -> bytes:
    if isinstance(value, onnx.TensorProto | onnx.SequenceProto | onnx.OptionalProto):
        return value.SerializeToString()
    kind = type_.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list([np.asarray(v) for v in value]).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value).SerializeToString()
    return numpy_helper.from_array(np.asarray(value)).SerializeToString()


def _write_case(case, directory: Path) -> str | None:
    """One case in onnx's layout; the reason if it holds values that are
    neither tensors, sequences nor optionals (then only its model is
    written: importing it must fail cleanly)."""
    graph = case.model.graph
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.onnx").write_bytes(case.model.SerializeToString())
    if any(v.type.WhichOneof("value") not in _PROTOS for v in [*graph.input, *graph.output]):
        return "inputs or outputs that are maps or sparse tensors"
    for number, (inputs, outputs) in enumerate(case.data_sets):
        data_dir = directory / f"test_data_set_{number}"
        data_dir.mkdir(exist_ok=True)
        for kind, values, infos in (
            ("input", inputs, graph.input),
            ("output", outputs, graph.output),
        ):
            for index, (value, info) in enumerate(zip(values, infos, strict=False)):
                (data_dir / f"{kind}_{index}.pb").write_bytes(_serialized(value, info.type))
    return None


def generate(directory: Path) -> None:
    """Run onnx's node test generator and store every case under `directory`."""
    import warnings

    from onnx.backend.test.case import node

    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=directory.name + ".", dir=directory.parent))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own overflow warnings
        cases = node.collect_testcases(None)
    index = []
    for case in cases:
        skip = _write_case(case, staging / case.name)
        index.append({"name": case.name, "rtol": case.rtol, "atol": case.atol, "skip": skip})
    (staging / "index.json").write_text(json.dumps(index, indent=0))
    try:
        staging.rename(directory)
    except OSError:  # another process got there first: use its copy
        import shutil

        shutil.rmtree(staging, ignore_errors=True)


def node_cases(directory: Path | None = None) -> list[NodeCase]:
    """The official node test cases, generated into the cache on first use."""
    directory = directory or cache_dir()
    if not (directory / "index.json").exists():
        generate(directory)
    entries = json.loads((directory / "index.json").read_text())
    return [
        NodeCase(e["name"], directory / e["name"], e["rtol"], e["atol"], e["skip"]) for e in entries
    ]


# --- running ----------------------------------------------------------------------


@dataclass
class Outcome:
    status: str  # "pass", "fail", "skip"
    detail: str = ""


def run_case(case: NodeCase, compiled: bool) -> Outcome:
    """Import and run one case; a Python exception other than an import
    error is a failure (the importer must never raise one)."""
    from graphcompiler.driver.onnx_backend import CompiledBackend, ReferenceBackend

    if case.skip:  # maps, sparse tensors: whatever else the case needs comes after
        return Outcome("skip", case.skip)
    backend = CompiledBackend if compiled else ReferenceBackend
    try:
        rep = backend.prepare(case.model())
        for inputs, expected in case.data_sets():
            outputs = rep.run(inputs)
            _assert_similar(expected, list(outputs), case.rtol, case.atol)
    except OnnxImportError as error:  # at prepare, or at the first run (NeedsConstantInput)
        return Outcome("skip", str(error))
    except AssertionError as error:
        return Outcome("fail", _first_line(str(error)))
    except Exception as error:  # noqa: BLE001 - reported, never raised
        return Outcome("fail", f"{type(error).__name__}: {_first_line(str(error))}")
    return Outcome("pass")


def _assert_similar(expected: list, outputs: list, rtol: float, atol: float) -> None:
    """onnx's runner's comparison, value by value: into sequences (its own
    recursion takes a sequence's rank-0 tensors for lists) and optionals."""
    from onnx.backend.test.runner import Runner

    assert len(outputs) == len(expected), f"{len(outputs)} outputs, expected {len(expected)}"
    for want, got in zip(expected, outputs, strict=True):
        if want is None or got is None:
            assert want is None and got is None, f"got {got!r} where {want!r} was expected"
        elif isinstance(want, list):
            assert isinstance(got, list), f"got {type(got).__name__} where a sequence was expected"
            _assert_similar(want, got, rtol, atol)
        else:
            Runner.assert_similar_outputs([want], [got], rtol=rtol, atol=atol)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines[:3])[:300]


def skip_category(reason: str) -> str:
    """A skip reason without its node names (the table groups by it)."""
    reason = re.sub(r"node '[^']*' \(([^)]*)\): ", r"\1: ", reason)
    reason = re.sub(r"^(input|output|initializer|value) '[^']*'", r"\1", reason)
    reason = re.sub(r"attribute '(\w+)' = .*? is not", r"attribute '\1' is not", reason)
    return reason


SKIP_KINDS = (
    ("operator is not supported", "operator not supported (no graph op or composition)"),
    ("operator domain", "operator not supported (no graph op or composition)"),
    ("element type", "element type not supported (string, float8 E8M0)"),
    ("opset", "opset older than 13, or no default-domain opset"),
    ("imports no version", "opset older than 13, or no default-domain opset"),
    ("must be a constant", "a value the static import needs is computed at run time"),
    ("not a tensor", "sequence or optional values where a tensor is wanted"),
    ("maps or sparse", "map or sparse tensor values"),
    ("attribute", "an attribute value not supported (training mode, saturating casts, ...)"),
)


def skip_kind(reason: str) -> str:
    """The README table's row for a skip reason."""
    kind = next((k for text, k in SKIP_KINDS if text in reason), None)
    return kind or "other (training mode's random drops, ...)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphcompiler.tools.onnx_conformance")
    parser.add_argument("--compiled", action="store_true", help="only the compiled path")
    parser.add_argument("--reference", action="store_true", help="only the reference interpreter")
    parser.add_argument("--only", default="", help="a regex the case names must match")
    parser.add_argument("--verbose", "-v", action="store_true", help="list failures and skips")
    parser.add_argument("--kinds", action="store_true", help="count the skips by kind")
    args = parser.parse_args(argv)
    cases = [c for c in node_cases() if re.search(args.only, c.name)]
    modes = [
        m
        for m in ("reference", "compiled")
        if getattr(args, m) or not (args.compiled or args.reference)
    ]
    for mode in modes:
        outcomes = {case.name: run_case(case, mode == "compiled") for case in cases}
        counts = Counter(o.status for o in outcomes.values())
        supported = counts["pass"] + counts["fail"]
        rate = 100.0 * counts["pass"] / supported if supported else 0.0
        print(
            f"{mode}: {len(cases)} cases, {supported} supported, {counts['pass']} passed ({rate:.1f}%), "
            f"{counts['fail']} failed, {counts['skip']} skipped"
        )
        if args.verbose:
            for name, outcome in sorted(outcomes.items()):
                if outcome.status == "fail":
                    print(f"  FAIL {name}: {outcome.detail}")
            skips = Counter(
                skip_category(o.detail) for o in outcomes.values() if o.status == "skip"
            )
            for reason, count in skips.most_common():
                print(f"  skip {count:4d}  {reason}")
        if args.kinds:
            kinds = Counter(skip_kind(o.detail) for o in outcomes.values() if o.status == "skip")
            for kind, count in kinds.most_common():
                print(f"  {count:4d}  {kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
