"""Plugins: by module name, by path, through the `graphcompiler.plugins`
entry-point group, and the errors a broken plugin gives."""

import os
import subprocess
import sys
import textwrap

import pytest

from graphcompiler.driver.registration import default_registry
from graphcompiler.ir.registry import PLUGIN_ENTRY_POINT_GROUP, RegistryError
from graphcompiler.tools.gc_opt import main

TOY_INPUT = "func.func @f() -> i64 {\n  %0 = toy.constant 4\n  func.return %0 : i64\n}\n"


def _install_fake_distribution(site, toy_plugin_path):
    """A distribution on sys.path that declares the toy plugin entry point,
    as `pip install` of a third-party package would."""
    (site / "toy_plugin.py").write_text(toy_plugin_path.read_text())
    dist_info = site / "toy_plugin-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(
        f"[{PLUGIN_ENTRY_POINT_GROUP}]\ntoy = toy_plugin:register\n"
    )


def test_entry_point_plugin_is_loaded_by_gc_opt(tmp_path, toy_plugin_path):
    _install_fake_distribution(tmp_path, toy_plugin_path)
    environment = dict(os.environ, PYTHONPATH=str(tmp_path))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphcompiler.tools.gc_opt",
            "-p",
            "toy-scale-constants{factor=10}",
        ],
        input=TOY_INPUT,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "toy.constant 40" in result.stdout


def test_registry_refuses_duplicates(registry, toy_plugin_path):
    with pytest.raises(RegistryError, match="a dialect named 'toy' is already registered"):
        registry.load_plugin(str(toy_plugin_path))
    with pytest.raises(RegistryError, match="a pass named 'cse' is already registered"):
        registry.register_pipeline("cse", "dce", "clash")


def test_plugin_without_register_function(tmp_path):
    plugin = tmp_path / "empty_plugin.py"
    plugin.write_text("X = 1\n")
    with pytest.raises(RegistryError, match=r"has no 'register\(registry\)' function"):
        default_registry(load_plugins=False).load_plugin(str(plugin))


def test_failing_pass_is_a_diagnostic_not_a_traceback(tmp_path, capsys):
    plugin = tmp_path / "crashing_plugin.py"
    plugin.write_text(
        textwrap.dedent("""
        from dataclasses import dataclass
        from xdsl.passes import ModulePass

        @dataclass(frozen=True)
        class Crash(ModulePass):
            name = "crash"
            def apply(self, ctx, op):
                raise RuntimeError("boom")

        def register(registry):
            registry.register_pass(Crash)
    """)
    )
    source = tmp_path / "in.mlir"
    source.write_text("func.func @f() {\n  func.return\n}\n")
    pipeline = "--pass-pipeline=builtin.module(func.func(crash))"
    exit_code = main([str(source), f"--load-plugin={plugin}", pipeline])
    stderr = capsys.readouterr().err
    assert exit_code == 1
    assert f"{source}:1:1: error: internal error in pass 'crash': RuntimeError: boom" in stderr
    assert "Traceback" not in stderr


def test_a_pass_out_of_memory_is_a_located_error_not_an_internal_one():
    """A graph too big for the machine (a fuzzer's 37 GiB weight) says so."""
    import graphcompiler
    from graphcompiler.ir.diagnostics import DiagnosticError
    from graphcompiler.ir.pass_manager import _apply_reporting_failures

    class Hungry:
        name = "hungry"

        def apply(self, ctx, op):
            raise MemoryError("Unable to allocate 37.3 GiB for an array")

    module = graphcompiler.parse("func.func @f() {\n  func.return\n}\n")
    with pytest.raises(DiagnosticError) as caught:
        _apply_reporting_failures(Hungry(), module, module, None)
    assert "pass 'hungry' ran out of memory: Unable to allocate 37.3 GiB" in str(caught.value)
    assert "internal" not in str(caught.value)
