"""Tensor IR passes, one per module."""
