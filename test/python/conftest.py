"""Shared fixtures: the test plugin folder and a registry with it loaded.

The compile cache is off for the tests (a test may patch the lowering,
which the cache key cannot see); the cache's own tests pass `cache=`."""

import os
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
os.environ["GC_DISABLE_CACHE"] = "1"


@pytest.fixture
def toy_plugin_path() -> Path:
    return PLUGINS / "toy_plugin.py"


@pytest.fixture
def registry(toy_plugin_path):
    from graphcompiler.driver.registration import default_registry

    registry = default_registry()
    registry.load_plugin(str(toy_plugin_path))
    return registry
