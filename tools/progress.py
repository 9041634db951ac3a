"""What a long compile is doing, on the terminal (gc-run).

`graphcompiler.compile(..., progress=callback)` calls `callback(stage)` as
each stage starts. `CompileProgress` is such a callback: once a compile has
run longer than `after` seconds, and only when its stream is a terminal,
it redraws one status line (a spinner, the time so far and the stage) a
few times a second until `done()` erases it.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

SPINNER = "|/-\\"


class CompileProgress:
    def __init__(self, stream: TextIO | None = None, after: float = 1.0, period: float = 0.2):
        self.stream = stream if stream is not None else sys.stderr
        self.after, self.period = after, period
        self.start = time.perf_counter()
        self.stage = "parsing"
        self.shown = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if _is_terminal(self.stream):
            self._thread = threading.Thread(target=self._redraw, daemon=True)
            self._thread.start()

    def __call__(self, stage: str) -> None:
        self.stage = stage

    def _redraw(self) -> None:
        turn = 0
        while not self._stop.wait(self.period):
            elapsed = time.perf_counter() - self.start
            if elapsed >= self.after:
                spin = SPINNER[turn % len(SPINNER)]
                self.stream.write(f"\r\x1b[K{spin} compiling ({elapsed:.1f} s): {self.stage}")
                self.stream.flush()
                self.shown, turn = True, turn + 1

    def done(self) -> None:
        """Stop redrawing and erase the status line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
