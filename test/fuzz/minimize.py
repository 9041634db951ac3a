"""Delta debugging (ddmin) of a failing case: lines first, then tokens,
keeping a smaller text only while it fails the same way (same signature)."""

from __future__ import annotations

import time
from collections.abc import Callable

from graphcompiler.test.fuzz.mutate import TOKEN


def ddmin(parts: list[str], fails: Callable[[list[str]], bool], deadline: float) -> list[str]:
    """A 1-minimal subsequence of `parts` that still `fails` (or the smallest
    found when the deadline passes)."""
    granularity = 2
    while len(parts) >= 2 and time.monotonic() < deadline:
        chunk = max(1, len(parts) // granularity)
        removed_any = False
        start = 0
        while start < len(parts) and time.monotonic() < deadline:
            candidate = parts[:start] + parts[start + chunk :]
            if candidate and fails(candidate):
                parts = candidate
                granularity = max(granularity - 1, 2)
                removed_any = True
            else:
                start += chunk
        if not removed_any:
            if chunk == 1:
                break
            granularity = min(granularity * 2, len(parts))
    return parts


def minimize(text: str, still_fails: Callable[[str], bool], seconds: float = 60.0) -> str:
    """The smallest text found within `seconds` for which `still_fails`."""
    deadline = time.monotonic() + seconds
    lines = text.splitlines(keepends=True)
    lines = ddmin(lines, lambda parts: still_fails("".join(parts)), deadline)
    text = "".join(lines)
    # tokens with the whitespace before each, so the layout survives
    tokens, last = [], 0
    for match in TOKEN.finditer(text):
        tokens.append(text[last : match.end()])
        last = match.end()
    tail = text[last:]
    tokens = ddmin(tokens, lambda parts: still_fails("".join(parts) + tail), deadline)
    return "".join(tokens) + tail
