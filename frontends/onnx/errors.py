"""The importer's errors: what the graph dialect cannot express, or needs
to know at import time. One line each, naming the node or initializer."""


class OnnxImportError(ValueError):
    """An ONNX construct the graph dialect cannot express (one line)."""


class NeedsConstantInput(OnnxImportError):
    """A graph input that a node needs at import time (reduction axes, a
    shape): binding it with `constants={name: array}` makes it importable."""

    def __init__(self, message: str, input_name: str):
        super().__init__(message)
        self.input_name = input_name
