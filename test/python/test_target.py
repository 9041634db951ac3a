"""Target descriptions: a named target is the same on every host; only `host` reads the machine."""

import pytest

from graphcompiler.target import description as targets


@pytest.fixture
def odd_host(monkeypatch):
    """A host whose caches are unlike any named target's (as on a shared CI machine)."""
    monkeypatch.setattr(targets, "_cache_sizes", lambda: {1: 24 * 1024, 2: 640 * 1024, 3: 3 * 1024 * 1024})
    targets.host_target.cache_clear()
    yield
    targets.host_target.cache_clear()


@pytest.mark.parametrize("name", ["avx512", "avx2", "generic"])
def test_named_targets_ignore_the_host(odd_host, name):
    fixed = targets.get_target(name)
    assert (fixed.l1_bytes, fixed.l2_bytes) != (24 * 1024, 640 * 1024)
    assert fixed == targets._FIXED[name]
    assert fixed.llvm_features  # the ISA is fixed too, not the host's


def test_host_target_reads_the_machine(odd_host):
    host = targets.get_target("host")
    assert (host.l1_bytes, host.l2_bytes, host.l3_bytes) == (24 * 1024, 640 * 1024, 3 * 1024 * 1024)
    assert host.llvm_features == ""
