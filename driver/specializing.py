"""A model with symbolic input dims, compiled once per set of input shapes.

    compiled = graphcompiler.compile("bert.onnx")   # input_ids: [batch, seq]
    compiled(ids_1x16, mask_1x16)                   # compiles for 1x16, runs
    compiled(ids_4x128, mask_4x128)                 # compiles for 4x128, runs
    compiled.specializations                        # [{'input_ids': (1, 16), ...}, ...]

Exported models name their batch and sequence dims instead of fixing them
(`dynamic_axes`, `dynamic_shapes`). The graph dialect is statically
shaped, so each new set of shapes is imported and compiled once (about
what the first compile cost, less what the compile cache already holds)
and kept; later calls with those shapes go straight to it. What does not
depend on the shapes is done once: the model is read and its functions
inlined once, and each specialization's big constants (weights, packed
weights) live once in the process, shared by content (runtime/jit/shared_data.py).

A graph input whose value the import needs (an If's condition, as
optimum's merged decoders' `use_cache_branch`; a shape computed from an
input) is bound the same way: the import says so (NeedsConstantInput),
and from then on each value it is called with is a specialization of its
own, which no longer takes that input.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

Shapes = dict[str, tuple[int, ...]]


class SpecializingGraph:
    """Calls like a CompiledGraph; `compile_for(shapes, constants)` builds
    one (`constants`: the bound inputs' values, by name)."""

    def __init__(
        self,
        dims: Mapping[str, Sequence[int | str] | None],
        compile_for: Callable[[Shapes, dict[str, np.ndarray]], Any],
        num_threads: int | None = None,
    ):
        """`dims`: each graph input's dims in order, an int where fixed,
        the symbol's name where not (None: any shape)."""
        self.input_names = list(dims)
        self.bound: list[str] = []
        """The inputs whose values the import needs: one specialization per value."""
        self._dims = {name: None if d is None else list(d) for name, d in dims.items()}
        self._compile_for = compile_for
        self._built: dict[tuple, tuple[Any, list[str]]] = {}  # -> (compiled, inputs it takes)
        self._order: list[Shapes] = []
        self._lock = threading.Lock()
        self._threads = num_threads

    @property
    def specializations(self) -> list[Shapes]:
        """The sets of input shapes compiled so far, oldest first."""
        return [dict(shapes) for shapes in self._order]

    def specialization(
        self, shapes: Mapping[str, Sequence[int]], values: Mapping[str, Any] | None = None
    ) -> Any:
        """The compiled graph for these input shapes (built if new): its
        `graph`, `tir`, `llvm_ir`, `signature` show what was compiled.
        `values`: the inputs' values, for those the import needs (`bound`)."""
        return self._entry(self._checked(shapes), values)[0]

    def _entry(self, checked: Shapes, values: Mapping[str, Any] | None) -> tuple[Any, list[str]]:
        with self._lock:
            entry = self._built.get(self._key(checked, values))
            while entry is None:
                constants = {name: np.asarray(values[name]) for name in self.bound}
                try:
                    compiled = self._compile_for(checked, constants)
                except Exception as error:
                    name = needed_input(error)
                    if values is None or name not in values or name in self.bound:
                        raise
                    self.bound.append(name)  # and try again, with its value
                    entry = self._built.get(self._key(checked, values))
                    continue
                if self._threads is not None:
                    compiled.set_num_threads(self._threads)
                entry = (compiled, [n for n in self.input_names if n not in constants])
                self._built[self._key(checked, values)] = entry
                self._order.append(checked)
        return entry

    def _key(self, checked: Shapes, values: Mapping[str, Any] | None) -> tuple:
        """The shapes, and the bound inputs' values (dtype, shape and bytes)."""
        if not self.bound:
            return tuple(checked.values())
        bound = [np.asarray(values[name]) for name in self.bound] if values else []
        if len(bound) != len(self.bound):
            return (*checked.values(), None)
        return (*checked.values(), *((a.dtype.str, a.shape, a.tobytes()) for a in bound))

    def __call__(self, *inputs: Any, out: Any = None, **named: Any) -> Any:
        later = self.input_names[len(inputs) :]
        if not self.bound and len(named) == len(later) and all(name in named for name in later):
            # shapes compiled before were checked then: a dict lookup, not the
            # dims' checks (45 us a call of a small model)
            values = [*inputs, *(named[name] for name in later)]
            built = self._built.get(tuple(np.shape(value) for value in values))
            if built is not None:
                return built[0](*values, out=out)
        if len(inputs) > len(self.input_names):
            raise ValueError(f"the model takes {len(self.input_names)} inputs, got {len(inputs)}")
        given = dict(zip(self.input_names, inputs, strict=False))
        twice = sorted(set(given) & set(named))
        if twice:
            raise ValueError(f"input {twice[0]!r} is given both by position and by name")
        unknown = sorted(set(named) - set(self.input_names))
        if unknown:
            raise ValueError(
                f"the model has no input {unknown[0]!r} (inputs: {', '.join(self.input_names)})"
            )
        given.update(named)
        missing = [n for n in self.input_names if n not in given]
        if missing:
            raise ValueError(f"the model is missing inputs: {', '.join(missing)}")
        shapes = self._checked({n: np.shape(given[n]) for n in self.input_names})
        compiled, taking = self._entry(shapes, given)
        return compiled(*[given[n] for n in taking], out=out)

    def set_num_threads(self, count: int) -> None:
        """Threads for parallel loops, in every specialization (also later ones)."""
        with self._lock:
            for compiled, _ in self._built.values():
                compiled.set_num_threads(count)
            self._threads = count

    def _checked(self, shapes: Mapping[str, Sequence[int]]) -> Shapes:
        """The shapes in input order, after checking them against the dims:
        a fixed dim must match, a symbol must have one size everywhere."""
        sizes: dict[str, tuple[int, str]] = {}
        checked: Shapes = {}
        for name, dims in self._dims.items():
            if name not in shapes:
                raise ValueError(f"no shape given for input '{name}'")
            shape = tuple(int(s) for s in shapes[name])
            if dims is None:
                checked[name] = shape
                continue
            if len(shape) != len(dims):
                raise ValueError(
                    f"input '{name}' has rank {len(dims)} ({_show(dims)}), got shape {list(shape)}"
                )
            for index, (dim, size) in enumerate(zip(dims, shape, strict=True)):
                if isinstance(dim, int) and dim != size:
                    raise ValueError(
                        f"input '{name}' dim {index} is {dim} ({_show(dims)}), got {size}"
                    )
                if isinstance(dim, str) and dim:
                    first = sizes.setdefault(dim, (size, name))
                    if first[0] != size:
                        raise ValueError(
                            f"dim '{dim}' is {first[0]} in input '{first[1]}' but {size} "
                            f"in input '{name}'"
                        )
            checked[name] = shape
        return checked


def onnx_specializing(
    model: Any,
    input_shapes: Mapping[str, Sequence[int]] | None,
    num_threads: int | None,
    compile_module: Callable[[Any, Any], Any],
    alias: Any = None,
    always: bool = False,
) -> SpecializingGraph | None:
    """A SpecializingGraph for an ONNX model (read once, by loading.onnx_source;
    each import copies it) whose inputs keep symbolic dims after
    `input_shapes` (or `always`: one whose import needs an input's value),
    else None (one static compile). With the `alias` of the compile, its
    dims and each specialization by shapes are remembered, so that a new
    process finds them without reading the model (warm_start.py); one
    specialized on input values is found by its graph in the cache."""
    from graphcompiler.frontends.onnx import graph_input_dims, import_onnx
    from graphcompiler.frontends.onnx.weights_in_file import read_weights_in

    fixed = dict(input_shapes or {})
    dims = {
        name: list(fixed[name]) if name in fixed else shape
        for name, shape in graph_input_dims(model).items()
    }
    static = all(
        d is not None and all(isinstance(s, int) and s > 0 for s in d) for d in dims.values()
    )
    if static and not always:
        return None

    def compile_for(shapes: Mapping[str, Sequence[int]], constants: dict) -> Any:
        shaped = alias.with_shapes(shapes) if alias is not None and not constants else None
        given = {
            name: shape for name, shape in {**shapes, **fixed}.items() if name not in constants
        }
        module = import_onnx(model, input_shapes=given, constants=constants)
        compiled = compile_module(module, shaped)
        if shaped is not None:
            shaped.remember(compiled)
        return compiled

    if alias is not None:
        alias.remember_dims(dims)
    # imported again for each new set of shapes, maybe after its file changed
    read_weights_in(model)
    return SpecializingGraph(dims, compile_for, num_threads)


def needed_input(error: Exception) -> str | None:
    """The graph input whose value the ONNX import stopped for, if it did
    (imported here, not at the top: a warm graph runs without the importer)."""
    from graphcompiler.frontends.onnx.importer import NeedsConstantInput

    return error.input_name if isinstance(error, NeedsConstantInput) else None


def _show(dims: Sequence[int | str]) -> str:
    return "x".join(str(d) if d != "" else "?" for d in dims)
