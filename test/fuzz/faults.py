"""Faults the harness must survive and classify, injected through the worker
pool by test_fuzz.py (a real compiler crash cannot be relied on to stay)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np


def abort(payload, on_stage: Callable[[str], None]) -> None:
    on_stage("abort")
    print(payload, flush=True)
    os.abort()


def sleep(seconds: float, on_stage: Callable[[str], None]) -> None:
    on_stage("sleep")
    time.sleep(seconds)


def allocate(elements: int, on_stage: Callable[[str], None]):
    """np.ones of `elements` floats, classified like any case."""
    from graphcompiler.test.fuzz.oracle import SUCCESS, Outcome, classify

    on_stage("allocate")
    try:
        np.ones(elements, np.float32)
    except Exception as error:
        return classify(error, "allocate")
    return Outcome(SUCCESS, "allocate")
