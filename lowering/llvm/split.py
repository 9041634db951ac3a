"""A program's LLVM IR, kept in pieces so that it can be built as several
modules at once.

LLVM optimizes and compiles one module on one core: a program of many
kernels would keep the other cores idle while its one module is built. The
translation (llvm_ir.py) keeps the text of every global and function apart;
`LlvmProgram.split` deals the entry's kernels, each with the functions only
it reaches (its parallel bodies), into parts of about equal size. Each part
defines its own functions and declares what it uses from the others; the
JIT builds the parts in separate helper processes and links their objects.
A kernel in another part than the entry is called, not inlined: one call
per kernel.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass

import llvmlite.ir as ir

from graphcompiler.runtime.microkernels import GeneratedKernel

MIN_PART_LINES = 300
"""Smaller parts than this (lines of their definitions, about one
instruction each) are not worth a helper of their own."""

_REFERENCE = re.compile(r'@"((?:[^"\\]|\\.)*)"|@([-a-zA-Z$._][-a-zA-Z$._0-9]*)')
_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2})")  # llvmlite writes " and \ in names as \22, \5c


def _name(quoted: str) -> str:
    return _ESCAPE.sub(lambda match: chr(int(match.group(1), 16)), quoted)


@dataclass(frozen=True)
class _Piece:
    """A global value's text: its definition (or declaration, when not
    `defined` here), how another part declares it (None when not defined),
    whether it is a function, and the names its text refers to."""

    definition: str
    declaration: str | None
    function: bool
    defined: bool
    references: tuple[str, ...]

    @property
    def lines(self) -> int:
        """About its instruction count: what LLVM's time grows with."""
        return self.definition.count("\n")


@dataclass(frozen=True)
class Part:
    """One module of a split program: its text, and the names it defines
    that other parts use (they keep external linkage)."""

    text: str
    exported: frozenset[str]
    builds_beside: bool = False
    """Whether the module built beside the program (the runtime) is linked
    into this part: its size was counted here."""


class LlvmProgram:
    """The LLVM IR text of an llvmlite module, piece by piece, and the
    generated microkernels it declares (the JIT defines them)."""

    def __init__(self, module: ir.Module, microkernels: tuple[GeneratedKernel, ...] = ()):
        self.microkernels = microkernels
        # the module without its globals: header and types, then metadata
        frame = ir.Module(module.name, module.context)
        frame.triple, frame.data_layout = module.triple, module.data_layout
        frame.metadata, frame.namedmetadata = module.metadata, module.namedmetadata
        lines = str(frame).split("\n")
        prologue_size = 4 + len(module.get_identified_types())  # ModuleID, triple, layout, ""
        self._prologue, self._epilogue = lines[:prologue_size], lines[prologue_size:]
        self._pieces: dict[str, _Piece] = {
            value.name: _piece(value) for value in module.globals.values()
        }

    @classmethod
    def merged(cls, programs: Sequence[LlvmProgram]) -> LlvmProgram:
        """One program of the parts of one module translated apart (each
        defining some functions and declaring the rest: driver/
        parallel_lowering.py): each global's definition wherever one is,
        else its declaration; the header lines and microkernels of all, once each."""
        merged = copy.copy(programs[0])
        merged._prologue = list(dict.fromkeys(line for p in programs for line in p._prologue))
        merged._pieces = {}
        for program in programs:
            for name, piece in program._pieces.items():
                known = merged._pieces.get(name)
                if known is None or (piece.defined and not known.defined):
                    merged._pieces[name] = piece
        kernels: dict[str, GeneratedKernel] = {}
        for program in programs:
            for kernel in program.microkernels:
                kernels.setdefault(kernel.name, kernel)
        merged.microkernels = tuple(kernels.values())
        return merged

    @property
    def text(self) -> str:
        """The whole module, as `str(module)` prints it."""
        return self._module_text(piece.definition for piece in self._pieces.values())

    def _module_text(self, body) -> str:
        return "\n".join([*self._prologue, *body, *self._epilogue])

    def split(self, entry: str, count: int, beside: int = 0) -> list[Part]:
        """At most `count` parts, the first holding `entry`: each of the
        entry's callees goes, with the functions only it reaches, to the
        part with the fewest lines so far (biggest first). `beside`: the
        lines of a module to build with the last part (the runtime and its
        microkernels), counted in that part, so that `count` parts keep
        `count` cores equally busy; that part is marked `builds_beside`.
        One part (the whole module) when `entry` is not defined here or the
        parts would be smaller than MIN_PART_LINES."""
        functions = {
            name: piece for name, piece in self._pieces.items() if piece.function and piece.defined
        }  # fmt: skip
        total = sum(piece.lines for piece in functions.values())
        count = min(count, (total + beside) // MIN_PART_LINES)
        if entry not in functions or count < 2:
            return [Part(self.text, frozenset())]
        units: list[list[str]] = []
        claimed = {entry}
        for root in self._pieces[entry].references:
            if root in functions and root not in claimed:
                units.append(self._reachable(root, functions, claimed))
                claimed.update(units[-1])
        owner = {entry: 0}
        sizes = [functions[entry].lines] + [0] * (count - 2) + [beside]
        for unit in sorted(units, key=lambda u: -sum(functions[n].lines for n in u)):
            lightest = min(range(count), key=sizes.__getitem__)
            for name in unit:
                owner[name] = lightest
                sizes[lightest] += functions[name].lines
        for name, piece in self._pieces.items():  # globals, unreached functions
            if piece.defined and name not in owner:
                users = [owner[user] for user in owner if name in self._pieces[user].references]
                owner[name] = min(users, default=0)
        parts_using: dict[str, set[int]] = {}
        for user, part in owner.items():
            for name in self._pieces[user].references:
                parts_using.setdefault(name, set()).add(part)
        return [
            self._part(index, owner, parts_using, builds_beside=index == count - 1)
            for index in range(count)
            if index in owner.values()
        ]

    def _reachable(self, root: str, functions: dict[str, _Piece], claimed: set[str]) -> list[str]:
        """`root` and the functions it reaches that no unit holds yet."""
        unit, stack = [], [root]
        while stack:
            name = stack.pop()
            if name in functions and name not in claimed and name not in unit:
                unit.append(name)
                stack.extend(functions[name].references)
        return unit

    def _part(
        self, index: int, owner: dict[str, int], parts_using: dict[str, set[int]], builds_beside: bool
    ) -> Part:
        """Part `index`: its definitions, the declarations of what it uses
        from other parts, and every declaration of the module."""
        body, exported = [], set()
        for name, piece in self._pieces.items():
            users = parts_using.get(name, set())
            if owner.get(name) == index:
                body.append(piece.definition)
                if users - {index}:
                    exported.add(name)
            elif not piece.defined:
                body.append(piece.definition)
            elif index in users:
                body.append(piece.declaration)
        return Part(self._module_text(body), frozenset(exported), builds_beside)


def _piece(value: ir.GlobalValue) -> _Piece:
    definition = str(value)
    references = tuple(
        dict.fromkeys(_name(quoted) or plain for quoted, plain in _REFERENCE.findall(definition))
    )[1:]  # the first is the value's own name
    if isinstance(value, ir.Function):
        if value.is_declaration:
            return _Piece(definition, None, True, False, ())
        prototype = definition.split("\n", 1)[0]
        state = f"define {value.linkage} " if value.linkage else "define "
        return _Piece(definition, "declare " + prototype[len(state) :], True, True, references)
    if value.initializer is None:  # an external global
        return _Piece(definition, None, False, False, ())
    declaration = ir.GlobalVariable(ir.Module(), value.value_type, value.name)
    declaration.global_constant = value.global_constant
    declaration.align = value.align
    return _Piece(definition, str(declaration), False, True, references)
