"""An onnxruntime session for the tests' hand-built models, whatever the
installed onnx: `helper.make_model` stamps the onnx package's newest IR
version, which an older onnxruntime refuses ("Unsupported model IR version:
14, max supported IR version: 11"). The models use nothing of the newer IR,
so they are given the newest version onnxruntime names."""

from __future__ import annotations

import re

import onnxruntime

_NEWEST = re.compile(r"max supported IR version: (\d+)")


def session(model) -> onnxruntime.InferenceSession:
    providers = ["CPUExecutionProvider"]
    try:
        return onnxruntime.InferenceSession(model.SerializeToString(), providers=providers)
    except Exception as error:  # onnxruntime's Fail has no public class
        newest = _NEWEST.search(str(error))
        if newest is None or model.ir_version <= int(newest.group(1)):
            raise
    older = type(model)()
    older.CopyFrom(model)
    older.ir_version = int(newest.group(1))
    return onnxruntime.InferenceSession(older.SerializeToString(), providers=providers)
