"""Seeds (the repository's own .mlir files) and the mutations applied to them.

A seed is one `// -----` chunk of a test or example file with its comment
lines dropped (RUN and CHECK lines are not what the compiler reads).
Mutations work on text, tokens or lines: byte flips, token deletion,
duplication and swaps, truncation, and the structured ones a type checker
must catch: dims (zero, huge, negative, odd), element types, op names and
integer/float attribute values.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from graphcompiler.test.fuzz.oracle import Case

REPO = Path(__file__).resolve().parents[2]
_SPLIT = re.compile(r"^// -----[ \t]*$", re.MULTILINE)
TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|[%@^#!]?[A-Za-z_][\w.$-]*|[%@^#]\d+|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|->|\S'
)
ELEMENT_TYPES = ["f32", "f16", "bf16", "f64", "f80", "i1", "i8", "i32", "i64", "index", "i0",
                 "ui8", "si32", "i7", "complex<f32>", "tensor<f32>", "none", "vector<0xf32>"]  # fmt: skip
INTERESTING_INTS = [0, 1, -1, 2, 3, 17, 127, 128, 255, 2**31 - 1, 2**31, -(2**31), 2**32,
                    2**63 - 1, 2**63, -(2**63), 10**30]  # fmt: skip
INTERESTING_DIMS = ["0", "1", "3", "17", "65", "127", "2147483648", "9223372036854775807",
                    "99999999999999999999", "?", "-1"]  # fmt: skip
INTERESTING_FLOATS = ["0.0", "-0.0", "1.0e+308", "1.0e-45", "0x7FC00000", "0x7F800000",
                      "0xFF800000", "nan", "inf", "3.4e+39"]  # fmt: skip
ODD_TEXT = ['"', "{", "}", "(", ")", "<", ">", "[", "]", ",", ":", "=", "%", "@", "^", "#",
            "!", "\x00", "\u00e9", "\U0001f600", "\t", "\n", "//", '"abc', "loc(", "dense<",
            "array<i64: ", "-> ", "0x", "..."]  # fmt: skip


@dataclass(frozen=True)
class Seed:
    name: str  # path:chunk
    text: str


def seed_files() -> list[Path]:
    """test/**/*.mlir and examples/*.mlir, without lit's Output/ folders and
    the fuzz corpus (replayed separately)."""
    files = [*(REPO / "test").rglob("*.mlir"), *(REPO / "examples").glob("*.mlir")]
    return sorted(
        path
        for path in files
        if "Output" not in path.parts and "fuzz" not in path.relative_to(REPO).parts
    )


def load_seeds() -> list[Seed]:
    seeds = []
    for path in seed_files():
        for index, chunk in enumerate(_SPLIT.split(path.read_text())):
            lines = [line for line in chunk.splitlines() if not line.lstrip().startswith("//")]
            text = "\n".join(lines).strip()
            if text:
                seeds.append(Seed(f"{path.relative_to(REPO)}:{index}", text + "\n"))
    return seeds


def op_names(seeds: list[Seed]) -> list[str]:
    """Every `dialect.op` name the seeds use (the vocabulary of op renames)."""
    names = set()
    for seed in seeds:
        names.update(re.findall(r"\b(?:graph|tir|func|arith|llvm)\.[a-z_0-9]+\b", seed.text))
    return sorted(names)


# --- mutations ------------------------------------------------------------------


def _tokens(text: str) -> list[re.Match]:
    return list(TOKEN.finditer(text))


def _replace(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def flip_bytes(rng: random.Random, text: str, _: list[str]) -> str:
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text))
        new = rng.choice(ODD_TEXT) if rng.random() < 0.5 else chr(rng.randrange(32, 127))
        text = _replace(text, at, at + rng.randint(0, 1), new)
    return text


def delete_token(rng: random.Random, text: str, _: list[str]) -> str:
    token = rng.choice(_tokens(text))
    return _replace(text, token.start(), token.end(), "")


def duplicate_token(rng: random.Random, text: str, _: list[str]) -> str:
    token = rng.choice(_tokens(text))
    return _replace(text, token.start(), token.end(), token.group() + " " + token.group())


def swap_tokens(rng: random.Random, text: str, _: list[str]) -> str:
    tokens = _tokens(text)
    first, second = (
        sorted(rng.sample(tokens, 2), key=lambda t: t.start())
        if len(tokens) > 1
        else (tokens[0], tokens[0])
    )
    return (text[: first.start()] + second.group() + text[first.end() : second.start()]
            + first.group() + text[second.end() :])  # fmt: skip


def truncate(rng: random.Random, text: str, _: list[str]) -> str:
    return text[: rng.randrange(len(text))]


def change_dim(rng: random.Random, text: str, _: list[str]) -> str:
    """One dim of a shaped type becomes zero, huge, odd, dynamic, or goes
    away; in one use of the type or in all (so the uses stay consistent)."""
    types = list(re.finditer(r"(?:tensor|vector)<[^<>]*>", text))
    if not types:
        return flip_bytes(rng, text, _)
    old = rng.choice(types)
    dims = list(re.finditer(r"\d+x", old.group()))
    new = rng.choice(INTERESTING_DIMS) if rng.random() < 0.7 else str(rng.randint(0, 300))
    if not dims or rng.random() < 0.2:  # rank + 1
        changed = old.group().replace("<", f"<{new}x", 1)
    elif rng.random() < 0.2:  # rank - 1
        dim = rng.choice(dims)
        changed = old.group()[: dim.start()] + old.group()[dim.end() :]
    else:
        dim = rng.choice(dims)
        changed = old.group()[: dim.start()] + new + "x" + old.group()[dim.end() :]
    if rng.random() < 0.5:
        return text.replace(old.group(), changed)
    return _replace(text, old.start(), old.end(), changed)


def resize(rng: random.Random, text: str, _: list[str]) -> str:
    """One dim size becomes another in every shaped type: the graph often
    stays valid and reaches the compiler with a zero, odd or huge size."""
    sizes = sorted(set(re.findall(r"(?<=[<x])(\d+)(?=x)", text)))
    if not sizes:
        return change_dim(rng, text, _)
    old = rng.choice(sizes)
    new = rng.choice(["0", "1", "3", "17", "65", "127", "257", "100000", "2147483648"])
    return re.sub(rf"(?<=[<x]){old}(?=x)", new, text)


def change_type(rng: random.Random, text: str, _: list[str]) -> str:
    found = list(re.finditer(r"(?<=[x<: ])(f16|bf16|f32|f64|i1|i8|i32|i64|index)\b", text))
    if not found:
        return flip_bytes(rng, text, _)
    old = rng.choice(found)
    new = rng.choice(ELEMENT_TYPES)
    if rng.random() < 0.5:
        return text.replace(old.group() + ">", new + ">")
    return _replace(text, old.start(), old.end(), new)


def rename_op(rng: random.Random, text: str, names: list[str]) -> str:
    found = list(re.finditer(r"\b(?:graph|tir|func|arith|llvm)\.[a-z_0-9]+\b", text))
    if not found or not names:
        return delete_token(rng, text, names)
    old = rng.choice(found)
    return _replace(text, old.start(), old.end(), rng.choice(names))


# Op names by operand signature: a rename inside a family keeps the graph valid.
OP_FAMILIES = [
    "relu abs neg square sigmoid tanh exp log sqrt rsqrt erf reciprocal gelu leaky_relu softmax log_softmax",
    "add sub mul div pow maximum minimum",
    "greater less equal",
    "reduce_sum reduce_mean reduce_max reduce_min reduce_prod",
    "max_pool2d avg_pool2d",
]


def rename_in_family(rng: random.Random, text: str, names: list[str]) -> str:
    found = [m for m in re.finditer(r"\bgraph\.([a-z_0-9]+)\b", text)
             if any(m.group(1) in family.split() for family in OP_FAMILIES)]  # fmt: skip
    if not found:
        return rename_op(rng, text, names)
    old = rng.choice(found)
    family = next(f.split() for f in OP_FAMILIES if old.group(1) in f.split())
    return _replace(text, old.start(1), old.end(1), rng.choice(family))


def change_number(rng: random.Random, text: str, _: list[str]) -> str:
    found = list(re.finditer(r"(?<![\w%@^#.x])-?\d+(\.\d+)?(e[+-]?\d+)?(?![\w.x])", text))
    if not found:
        return flip_bytes(rng, text, _)
    old = rng.choice(found)
    pool = INTERESTING_FLOATS if old.group(1) else [str(v) for v in INTERESTING_INTS]
    return _replace(text, old.start(), old.end(), rng.choice(pool))


def swap_value(rng: random.Random, text: str, _: list[str]) -> str:
    """A use names another value: used before its definition, by its own
    definition, or with another type (what dominance and type checks catch)."""
    names = sorted(set(re.findall(r"%[\w.$-]+", text)))
    uses = list(re.finditer(r"(?<=[ (,\[])%[\w.$-]+(?! =)(?!:)", text))
    if len(names) < 2 or not uses:
        return flip_bytes(rng, text, _)
    use = rng.choice(uses)
    return _replace(text, use.start(), use.end(), rng.choice(names))


def change_attribute(rng: random.Random, text: str, _: list[str]) -> str:
    """A property misspelled, dropped, or given a value of another kind."""
    entries = list(re.finditer(r"(?<=[{,] )([a-z_]+) = ([^,}]+)", text))
    entries += list(re.finditer(r"(?<=\{)([a-z_]+) = ([^,}]+)", text))
    if not entries:
        return change_number(rng, text, _)
    entry = rng.choice(entries)
    key, value = entry.group(1), entry.group(2)
    action = rng.choice(["misspell", "drop", "retype"])
    if action == "misspell" and len(key) > 1:
        at = rng.randrange(len(key) - 1)
        key = key[:at] + key[at + 1] + key[at] + key[at + 2 :]
    elif action == "drop":
        return _replace(text, entry.start(), entry.end(), "")
    else:
        numbers = re.findall(r"-?\d+", value) or ["1"]
        value = rng.choice([f"[{', '.join(numbers)}]", f"{numbers[0]}.5 : f32", f'"{value}"',
                            "true", f"array<i32: {', '.join(numbers)}>", "array<i64>", "unit"])  # fmt: skip
    return _replace(text, entry.start(), entry.end(), f"{key} = {value}")


def line_edit(rng: random.Random, text: str, _: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(lines))
    action = rng.choice(["delete", "duplicate", "swap"])
    if action == "delete":
        del lines[at]
    elif action == "duplicate":
        lines.insert(at, lines[at])
    else:
        other = rng.randrange(len(lines))
        lines[at], lines[other] = lines[other], lines[at]
    return "".join(lines)


MUTATIONS = {
    "flip": flip_bytes, "delete-token": delete_token, "duplicate-token": duplicate_token,
    "swap-tokens": swap_tokens, "truncate": truncate, "dim": change_dim, "dim2": change_dim,
    "dtype": change_type, "op-name": rename_op, "number": change_number, "line": line_edit,
    "resize": resize, "resize2": resize, "op-family": rename_in_family, "op-family2": rename_in_family,
    "value": swap_value, "attribute": change_attribute, "attribute2": change_attribute,
}  # fmt: skip


def mutant(rng: random.Random, seeds: list[Seed], names: list[str]) -> tuple[Case, str]:
    """A mutated seed and a description of how it was made."""
    # Valid seeds reach the later stages; the negative tests mostly stop at the verifier.
    weights = [1 if "invalid" in seed.name else 3 for seed in seeds]
    seed = rng.choices(seeds, weights)[0]
    text, applied = seed.text, []
    for _ in range(rng.choice([1, 1, 1, 1, 2, 3])):
        if not text.strip():
            break
        name = rng.choice(list(MUTATIONS))
        text = MUTATIONS[name](rng, text, names)
        applied.append(name)
    return Case(text), f"{seed.name} {'+'.join(applied)}"


def sample(count: int, seed: int = 0) -> list[tuple[Case, str]]:
    """`count` mutants, the same ones for the same `seed` and seed files."""
    seeds = load_seeds()
    names = op_names(seeds)
    return [mutant(random.Random(f"{seed}:{index}"), seeds, names) for index in range(count)]
