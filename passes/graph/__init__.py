"""Graph IR passes, one per module."""
