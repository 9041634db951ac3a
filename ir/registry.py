"""What the tools know about: dialects, passes, named pipelines, and plugins.

One `Registry` is built per tool invocation (driver/registration.py fills
it): xDSL's upstream dialects and passes (through xDSL's own `Multiverse`, so
xDSL plugins come along), then graphcompiler's, then third-party plugins. A plugin is a Python module (or an
entry point in the `graphcompiler.plugins` group) exposing
`register(registry: Registry) -> None`; it adds dialects, passes and pipelines
without editing this repository.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass

PLUGIN_ENTRY_POINT_GROUP = "graphcompiler.plugins"
PLUGIN_REGISTER_FUNCTION = "register"

DialectFactory = Callable[[], Dialect]
PassFactory = Callable[[], type[ModulePass]]


class RegistryError(Exception):
    """A registration or plugin-loading problem, reported to the user as is."""


@dataclass(frozen=True)
class PipelineDefinition:
    """A named pipeline: its elements are spliced in where the name is used,
    like MLIR's `PassPipelineRegistration`."""

    name: str
    pipeline: str
    description: str


class Registry:
    def __init__(self) -> None:
        self.dialects: dict[str, DialectFactory] = {}
        self.passes: dict[str, PassFactory] = {}
        self.pipelines: dict[str, PipelineDefinition] = {}

    def register_dialect(self, dialect: Dialect | DialectFactory, name: str | None = None) -> None:
        """Register a dialect object, or a factory (loaded lazily) with its name."""
        if isinstance(dialect, Dialect):
            name, factory = dialect.name, (lambda: dialect)
        elif name is None:
            raise RegistryError("a dialect factory needs an explicit name")
        else:
            factory = dialect
        self._check_new_name(name, self.dialects, "dialect")
        self.dialects[name] = factory

    def register_pass(
        self, pass_class: type[ModulePass] | PassFactory, name: str | None = None
    ) -> None:
        """Register a pass class, or a factory (imported lazily) with its name."""
        if isinstance(pass_class, type):
            name, factory = pass_class.name, (lambda: pass_class)
        elif name is None:
            raise RegistryError("a pass factory needs an explicit name")
        else:
            factory = pass_class
        self._check_new_name(name, self.passes, "pass")
        self._check_new_name(name, self.pipelines, "pipeline")
        self.passes[name] = factory

    def register_pipeline(self, name: str, pipeline: str, description: str) -> None:
        """Register `name` as shorthand for the textual `pipeline` elements."""
        self._check_new_name(name, self.passes, "pass")
        self._check_new_name(name, self.pipelines, "pipeline")
        self.pipelines[name] = PipelineDefinition(name, pipeline, description)

    @staticmethod
    def _check_new_name(name: str, table: dict[str, object], kind: str) -> None:
        if name in table:
            raise RegistryError(f"a {kind} named '{name}' is already registered")

    def pass_class(self, name: str) -> type[ModulePass]:
        return self.passes[name]()

    def create_context(self, allow_unregistered: bool = False) -> Context:
        ctx = Context(allow_unregistered=allow_unregistered)
        for name, factory in self.dialects.items():
            ctx.register_dialect(name, factory)
        return ctx

    # --- plugins -----------------------------------------------------------

    def load_plugin(self, spec: str) -> None:
        """Load a plugin given as a module name (`pkg.mod`) or a `.py` path."""
        module_name = spec
        try:
            if spec.endswith(".py") or Path(spec).is_file():
                path = Path(spec).resolve()
                module_name = f"graphcompiler_plugin_{path.stem}"
                module_spec = importlib.util.spec_from_file_location(module_name, path)
                if module_spec is None or module_spec.loader is None:
                    raise ImportError(f"cannot load a module from '{spec}'")
                module = importlib.util.module_from_spec(module_spec)
                sys.modules[module_name] = module
                module_spec.loader.exec_module(module)
            else:
                module = importlib.import_module(spec)
        except Exception as error:  # any failure in third-party code is theirs
            raise RegistryError(f"cannot load plugin '{spec}': {error}") from error
        register = getattr(module, PLUGIN_REGISTER_FUNCTION, None)
        if not callable(register):
            raise RegistryError(
                f"plugin '{spec}' has no '{PLUGIN_REGISTER_FUNCTION}(registry)' function"
            )
        self._call_plugin(spec, register)

    def load_entry_point_plugins(self) -> None:
        """Load every plugin installed under the `graphcompiler.plugins` group."""
        for entry_point in entry_points(group=PLUGIN_ENTRY_POINT_GROUP):
            try:
                register = entry_point.load()
            except Exception as error:
                raise RegistryError(
                    f"cannot load plugin entry point '{entry_point.name}': {error}"
                ) from error
            if not callable(register):
                register = getattr(register, PLUGIN_REGISTER_FUNCTION, None)
            if not callable(register):
                raise RegistryError(
                    f"plugin entry point '{entry_point.name}' is neither a function "
                    f"nor a module with '{PLUGIN_REGISTER_FUNCTION}(registry)'"
                )
            self._call_plugin(entry_point.name, register)

    def _call_plugin(self, name: str, register: Callable[[Registry], None]) -> None:
        try:
            register(self)
        except RegistryError:
            raise
        except Exception as error:
            raise RegistryError(f"plugin '{name}' failed to register: {error}") from error
