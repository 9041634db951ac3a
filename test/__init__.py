"""graphcompiler's tests; a package so that `python -m test.fuzz` finds ours, not the stdlib's `test`."""
