"""Target descriptions: a named target is the same on every host; only `host` reads the machine."""

import os

import pytest

from graphcompiler.target import description as targets
from graphcompiler.target.schedules import MatmulSchedule


@pytest.fixture
def odd_host(monkeypatch):
    """A host whose caches are unlike any named target's (as on a shared CI machine)."""
    monkeypatch.setattr(targets, "_cache_sizes", lambda: {1: 24 * 1024, 2: 640 * 1024, 3: 3 * 1024 * 1024})
    monkeypatch.setattr(targets, "_available_cores", lambda: 3)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    targets.host_target.cache_clear()
    yield
    targets.host_target.cache_clear()


@pytest.mark.parametrize("name", ["avx512", "avx2", "generic"])
def test_named_targets_ignore_the_host(odd_host, name):
    fixed = targets.get_target(name)
    assert (fixed.l1_bytes, fixed.l2_bytes) != (24 * 1024, 640 * 1024)
    assert fixed == targets._FIXED[name]
    assert fixed.llvm_features  # the ISA is fixed too, not the host's
    assert fixed.cores == 16  # and the cores parallel work is cut for


@pytest.mark.parametrize("name", ["avx512", "avx2"])
def test_schedules_follow_the_target_not_the_compiling_host(name, monkeypatch):
    """A big GEMM is cut into 4 blocks per core of the target, whatever
    machine compiles it."""
    target = targets.get_target(name)
    schedules = set()
    for cpus in (1, 2, 64):
        monkeypatch.setattr(os, "cpu_count", lambda cpus=cpus: cpus)
        schedules.add(MatmulSchedule.for_shape(target, 1, 2048, 2048, 2048))
    assert len(schedules) == 1
    (schedule,) = schedules
    blocks = (2048 // schedule.mc + (2048 % schedule.mc > 0)) * (2048 // schedule.nc + (2048 % schedule.nc > 0))
    assert blocks >= 4 * target.cores


def test_host_target_reads_the_machine(odd_host):
    host = targets.get_target("host")
    assert (host.l1_bytes, host.l2_bytes, host.l3_bytes) == (24 * 1024, 640 * 1024, 3 * 1024 * 1024)
    assert host.llvm_features == ""
    assert host.cores == 3
