"""The IR infrastructure every stage shares: diagnostics, parsing and
verification, pass pipelines and the pass manager, the registry class."""
