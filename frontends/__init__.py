"""Importers of other model formats into Graph IR (onnx/)."""
