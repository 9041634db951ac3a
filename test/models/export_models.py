"""Small real models (BERT, GPT-2, Llama, ViT, ResNet, MobileNet-v2,
EfficientNet) exported to ONNX by both torch exporters, for
test/python/test_real_models.py and `python -m bench --models`; and
eight more architectures (`WIDER`) by the TorchScript exporter only:

    python test/models/export_models.py --only deberta_v2,bloom,phi,swin,convnext,mobilevit,regnet,segformer --exporter torchscript

    python test/models/export_models.py [--only NAMES] [--exporter E] [--static-only]
    python test/models/export_models.py --full --out DIR [--only NAMES] ...

Each model is built from its `transformers` config class with random
weights (torch.manual_seed; nothing is downloaded), in eval mode, wrapped so
that it returns a tuple of plain tensors, and exported with the TorchScript
exporter (`dynamo=False`, opset 17) and with `dynamo=True`, once with
static shapes and once with a dynamic batch (and sequence, for text)
dimension: `<arch>_<exporter>_<static|dynamic>.onnx`, weights inside. Next
to each, `<same>.npz` holds the inputs (named as the graph inputs) and the
outputs torch computed (`output_0`, ...); a dynamic model also gets
`<same>.2.npz` at other batch/sequence sizes. onnxruntime runs every file
on its inputs; manifest.json records per file the architecture, exporter,
dynamic dims and onnxruntime's max error relative to torch's outputs
(max |ort - torch| / max |torch|, the worst over outputs and input sets).

Norm layers' weights, biases and running statistics and the (zero) linear
biases are perturbed after the transformers initialization, so that none
of them is an identity the compiler could get away with ignoring.

`--full` builds the full-size configurations instead (bert-base, GPT-2
124M, a 4-layer Llama with grouped-query attention, ViT-B/16 at 224 px,
ResNet-50, MobileNet-v2 1.0 and EfficientNet-B0; and, named in `--only`,
Swin-T, ConvNeXt-T and RegNet-Y-4GF, `transformers`' defaults), static by default at
batch 1 (text: 128 tokens; images: 224 px), into `--out` (never committed;
the bench's models mode uses them).

A development script: torch, transformers, onnxscript and onnxruntime are
needed here (`pip install -e '.[models]'`), never by graphcompiler itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 0
TORCHSCRIPT_OPSET = 17
EXPORTERS = ("torchscript", "dynamo")


@dataclass(frozen=True)
class Arch:
    name: str
    kind: str  # "text" or "image"
    build: Callable[[bool], object]
    """(full) -> (transformers model, config)"""
    outputs: tuple[str, ...]
    """the model output fields returned, in order"""
    pad_row: bool = False
    """zeros at the end of one row of the attention mask (padding)"""


def _bert(full: bool):
    from transformers import BertConfig, BertModel

    config = (
        BertConfig()
        if full
        else BertConfig(
            vocab_size=128,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            max_position_embeddings=64,
        )
    )
    return BertModel(config), config


def _gpt2(full: bool):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = (
        GPT2Config()
        if full
        else GPT2Config(
            vocab_size=128,
            n_positions=64,
            n_embd=32,
            n_layer=2,
            n_head=4,
            bos_token_id=0,
            eos_token_id=0,
        )
    )
    config.use_cache = False
    return GPT2LMHeadModel(config), config


def _llama(full: bool):
    from transformers import LlamaConfig, LlamaForCausalLM

    if full:
        sizes = dict(
            vocab_size=32000,
            hidden_size=1024,
            intermediate_size=2816,
            num_hidden_layers=4,
            num_attention_heads=16,
            num_key_value_heads=4,
            max_position_embeddings=2048,
        )
    else:
        sizes = dict(
            vocab_size=128,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
        )
    config = LlamaConfig(**sizes, hidden_act="silu", tie_word_embeddings=False, use_cache=False)
    return LlamaForCausalLM(config), config


def _vit(full: bool):
    from transformers import ViTConfig, ViTModel

    config = (
        ViTConfig()
        if full
        else ViTConfig(
            image_size=32,
            patch_size=8,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
        )
    )
    return ViTModel(config), config


def _resnet(full: bool):
    from transformers import ResNetConfig, ResNetModel

    config = (
        ResNetConfig()  # ResNet-50
        if full
        else ResNetConfig(
            embedding_size=16, hidden_sizes=[32, 64], depths=[1, 1], layer_type="bottleneck"
        )
    )
    return ResNetModel(config), config


def _resnet18(full: bool):
    """Basic (two 3x3 convolutions) residual blocks, where ResNet-50 has bottlenecks."""
    from transformers import ResNetConfig, ResNetModel

    config = (
        ResNetConfig(hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2], layer_type="basic")
        if full
        else ResNetConfig(
            embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic"
        )
    )
    return ResNetModel(config), config


def _mobilenet_v2(full: bool):
    from transformers import MobileNetV2Config, MobileNetV2Model

    config = (
        MobileNetV2Config()  # 1.0, 224 px
        if full
        else MobileNetV2Config(
            image_size=32, depth_multiplier=0.1, min_depth=8, finegrained_output=False
        )
    )
    return MobileNetV2Model(config), config


def _efficientnet(full: bool):
    from transformers import EfficientNetConfig, EfficientNetModel

    if full:  # B0 (the config's defaults are B7's)
        config = EfficientNetConfig(
            image_size=224, width_coefficient=1.0, depth_coefficient=1.0, hidden_dim=1280
        )
    else:
        config = EfficientNetConfig(
            image_size=32, width_coefficient=0.1, depth_coefficient=0.25, hidden_dim=128
        )  # hidden_dim: the top convolution's channels, 1280 scaled by the width
    return EfficientNetModel(config), config


def _small(config_class: str, model_class: str, full: dict | None = None, **sizes):
    """A builder of a small `transformers` configuration (`sizes`), and of
    a full-size one where `full` is given (the config class's defaults
    updated by it; `main` skips the others with --full): architectures
    kept as import tests of what the seven above do not have, exported by
    the TorchScript exporter (`--exporter torchscript`)."""

    def build(is_full: bool):
        import transformers

        config = getattr(transformers, config_class)(**(full if is_full else sizes))
        if hasattr(config, "use_cache"):
            config.use_cache = False
        return getattr(transformers, model_class)(config), config

    build.has_full_size = full is not None
    return build


_TEXT = dict(vocab_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64)
WIDER = [  # relative-position attention; ALiBi; partial rotary with parallel attention and MLP
    Arch("deberta_v2", "text",
         _small("DebertaV2Config", "DebertaV2Model", hidden_size=32, intermediate_size=64, **_TEXT),
         ("last_hidden_state",), pad_row=True),
    Arch("bloom", "text",
         _small("BloomConfig", "BloomForCausalLM", vocab_size=128, hidden_size=32, n_layer=2, n_head=4),
         ("logits",), pad_row=True),
    Arch("phi", "text",
         _small("PhiConfig", "PhiForCausalLM", hidden_size=32, intermediate_size=64,
                partial_rotary_factor=0.5, **_TEXT),
         ("logits",)),
    # shifted windows; 7x7 depthwise with channels-last layer norm; unfold/fold around
    # attention; reduced-resolution attention after overlapping patch convolutions
    Arch("swin", "image",
         _small("SwinConfig", "SwinModel", full={}, image_size=32, patch_size=2, embed_dim=16,
                depths=[1, 2], num_heads=[2, 4], window_size=4),
         ("last_hidden_state", "pooler_output")),
    Arch("convnext", "image",
         _small("ConvNextConfig", "ConvNextModel", full={}, hidden_sizes=[8, 16, 24, 32],
                depths=[1, 1, 2, 1]),
         ("last_hidden_state", "pooler_output")),
    Arch("mobilevit", "image",
         _small("MobileViTConfig", "MobileViTModel", image_size=32, hidden_sizes=[16, 24, 32],
                neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32], num_attention_heads=2),
         ("last_hidden_state", "pooler_output")),
    # grouped 3x3 convolutions (groups of 16 channels) with squeeze-and-excitation
    Arch("regnet", "image",
         _small("RegNetConfig", "RegNetModel", full={}, embedding_size=16, hidden_sizes=[32, 64],
                depths=[1, 2], groups_width=16, layer_type="y"),
         ("last_hidden_state", "pooler_output")),
    Arch("segformer", "image",
         _small("SegformerConfig", "SegformerModel", num_encoder_blocks=2, depths=[1, 1],
                sr_ratios=[2, 1], hidden_sizes=[16, 32], num_attention_heads=[1, 2],
                patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2]),
         ("last_hidden_state",)),
]  # fmt: skip


ARCHS = [
    Arch("bert", "text", _bert, ("last_hidden_state", "pooler_output"), pad_row=True),
    Arch("gpt2", "text", _gpt2, ("logits",)),
    Arch("llama", "text", _llama, ("logits",)),
    Arch("vit", "image", _vit, ("last_hidden_state", "pooler_output")),
    Arch("resnet", "image", _resnet, ("last_hidden_state", "pooler_output")),
    Arch("resnet18", "image", _resnet18, ("last_hidden_state", "pooler_output")),
    Arch("mobilenet_v2", "image", _mobilenet_v2, ("last_hidden_state", "pooler_output")),
    Arch("efficientnet", "image", _efficientnet, ("last_hidden_state", "pooler_output")),
    *WIDER,
]


def _wrapped(arch: Arch, model):
    """`model` as a module returning a tuple of tensors (arg names = input names)."""
    import torch

    fields = arch.outputs

    class Text(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
            return tuple(out[f] for f in fields)

    class Image(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, pixel_values):
            out = self.model(pixel_values=pixel_values, return_dict=True)
            return tuple(out[f] for f in fields)

    return (Text if arch.kind == "text" else Image)().eval()


def _perturb(model) -> None:
    """Norm layers' affine parameters and running statistics, and the zero
    biases, made random (the initialization leaves them 1 and 0)."""
    import torch

    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
                module.running_mean.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
            norm = isinstance(module, torch.nn.modules.batchnorm._BatchNorm | torch.nn.LayerNorm)
            norm = norm or type(module).__name__.endswith("RMSNorm")
            for name, parameter in module.named_parameters(recurse=False):
                if parameter.dim() != 1:
                    continue
                if norm and name == "weight":
                    parameter.copy_(1.0 + 0.1 * torch.randn_like(parameter))
                elif name == "bias" and not parameter.any():
                    parameter.normal_(0.0, 0.02)


def _shapes(arch: Arch, full: bool) -> list[tuple[int, ...]]:
    """(batch, sequence) or (batch, image size): the first and the second input set."""
    if arch.kind == "text":
        return [(1, 128), (2, 64)] if full else [(2, 8), (3, 13)]
    return [(1, 224), (2, 224)] if full else [(2, 32), (3, 32)]


def make_inputs(arch: Arch, config, shape: tuple[int, int], seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    if arch.kind == "image":
        batch, size = shape
        pixels = rng.standard_normal((batch, config.num_channels, size, size), dtype=np.float32)
        return {"pixel_values": pixels}
    batch, sequence = shape
    ids = rng.integers(0, config.vocab_size, (batch, sequence), dtype=np.int64)
    mask = np.ones((batch, sequence), np.int64)
    if arch.pad_row:
        mask[-1, sequence - max(1, sequence // 4) :] = 0
    return {"input_ids": ids, "attention_mask": mask}


def input_names(arch: Arch) -> list[str]:
    return ["pixel_values"] if arch.kind == "image" else ["input_ids", "attention_mask"]


def _dims(arch: Arch):
    """{input name: {axis: name}} of the dynamic dims."""
    if arch.kind == "image":
        return {"pixel_values": {0: "batch"}}
    return {name: {0: "batch", 1: "sequence"} for name in input_names(arch)}


def _export(module, arch: Arch, config, exporter: str, dynamic: bool, example, path: Path):
    import onnx
    import torch

    names = list(example)
    args = tuple(torch.from_numpy(example[n]) for n in names)
    outputs = [f"output_{i}" for i in range(len(arch.outputs))]
    if exporter == "torchscript":
        torch.onnx.export(
            module,
            args,
            str(path),
            dynamo=False,
            opset_version=TORCHSCRIPT_OPSET,
            input_names=names,
            output_names=outputs,
            dynamic_axes=_dims(arch) if dynamic else None,
        )
        return
    dynamic_shapes = None
    if dynamic:
        from torch.export import Dim

        limit = getattr(config, "max_position_embeddings", None) or getattr(
            config, "n_positions", None
        )
        dims = {"batch": Dim("batch", min=1, max=1024)}
        if limit:
            dims["sequence"] = Dim("sequence", min=1, max=limit)
        dynamic_shapes = {
            name: {axis: dims[label] for axis, label in axes.items()}
            for name, axes in _dims(arch).items()
        }
    program = torch.onnx.export(
        module,
        args,
        dynamo=True,
        input_names=names,
        output_names=outputs,
        dynamic_shapes=dynamic_shapes,
        verbose=False,
    )
    model = program.model_proto
    for node in model.graph.node:  # fx nodes, stack traces with this host's paths: 2/3 of the file
        del node.metadata_props[:]
    onnx.save(model, str(path))  # weights inside (all under 2 GB)


def _torch_outputs(module, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    import torch

    with torch.no_grad():
        results = module(*(torch.from_numpy(a) for a in inputs.values()))
    return {f"output_{i}": r.numpy() for i, r in enumerate(results)}


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want| (a wrong shape: inf)."""
    if got.shape != want.shape:
        return float("inf")
    scale = float(np.max(np.abs(want))) or 1.0
    return float(np.max(np.abs(got.astype(np.float64) - want))) / scale


def _ort_error(path: Path, sets: list[dict[str, np.ndarray]]) -> float:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    worst = 0.0
    for data in sets:
        names = [i.name for i in session.get_inputs()]
        results = session.run(None, {n: data[n] for n in names})
        for index, result in enumerate(results):
            worst = max(worst, relative_error(result, data[f"output_{index}"]))
    return worst


def _graph_info(path: Path) -> tuple[list[str], dict[str, dict[str, str]], int]:
    """The graph's inputs (initializers left out), {input: {axis: symbol}}
    of its symbolic dims, and its default-domain opset, as the file says."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    names, dims = [], {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        names.append(value.name)
        shape = value.type.tensor_type.shape.dim
        symbolic = {str(i): d.dim_param or "?" for i, d in enumerate(shape) if not d.dim_value}
        if symbolic:
            dims[value.name] = symbolic
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    return names, dims, opset


def export_arch(arch: Arch, out: Path, full: bool, exporters, dynamic_variants, log) -> list[dict]:
    import torch

    torch.manual_seed(SEED)
    model, config = arch.build(full)
    model.eval()
    _perturb(model)
    module = _wrapped(arch, model)
    shapes = _shapes(arch, full)
    entries = []
    for exporter in exporters:
        for dynamic in dynamic_variants:
            stem = f"{arch.name}_{exporter}_{'dynamic' if dynamic else 'static'}"
            path = out / f"{stem}.onnx"
            start = time.perf_counter()
            sets = []
            for index, shape in enumerate(shapes[: 2 if dynamic else 1]):
                inputs = make_inputs(arch, config, shape, seed=SEED + index)
                sets.append({**inputs, **_torch_outputs(module, inputs)})
            example = {n: sets[0][n] for n in input_names(arch)}
            _export(module, arch, config, exporter, dynamic, example, path)
            names, dims, opset = _graph_info(path)
            if names != input_names(arch):
                raise RuntimeError(f"{path.name}: graph inputs {names}, not {input_names(arch)}")
            data_files = []
            for index, data in enumerate(sets):
                name = f"{stem}.npz" if index == 0 else f"{stem}.{index + 1}.npz"
                np.savez_compressed(out / name, **data)
                data_files.append(name)
            error = _ort_error(path, sets)
            seconds = time.perf_counter() - start
            log(
                f"{path.name}: {path.stat().st_size / 1e3:.0f} kB, ort error {error:.1e}, {seconds:.1f} s"
            )
            entries.append(
                {
                    "file": path.name,
                    "architecture": arch.name,
                    "model_class": type(model).__name__,
                    "exporter": exporter,
                    "opset": opset,
                    "dynamic": dynamic,
                    "dynamic_dims": dims,
                    "inputs": {n: list(sets[0][n].shape) for n in names},
                    "data": data_files,
                    "shapes": [{n: list(s[n].shape) for n in names} for s in sets],
                    "parameters": sum(p.numel() for p in model.parameters()),
                    "ort_max_rel_error": error,
                    "export_seconds": round(seconds, 2),
                }
            )
    return entries


def select(only: str | None) -> list[Arch]:
    if not only:
        return ARCHS
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    names = {a.name for a in ARCHS}  # an exact name selects that model alone
    chosen = [
        a for a in ARCHS if any(w == a.name or (w not in names and w in a.name) for w in wanted)
    ]
    if not chosen:
        raise SystemExit(
            f"error: --only {only!r} matches no model ({', '.join(a.name for a in ARCHS)})"
        )
    return chosen


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="export small (or --full size) transformers models to ONNX with both "
        "torch exporters, with torch's inputs and outputs",
        epilog="models: " + ", ".join(a.name for a in ARCHS),
    )
    parser.add_argument("--only", metavar="NAMES", help="comma-separated substrings of model names")
    parser.add_argument(
        "--full", action="store_true", help="full-size configurations (needs --out)"
    )
    parser.add_argument("--out", type=Path, help=f"output folder (default {HERE})")
    parser.add_argument(
        "--exporter",
        choices=EXPORTERS,
        action="append",
        help="only this exporter (may be repeated; default both)",
    )
    parser.add_argument(
        "--static-only", action="store_true", help="no dynamic-shape exports (--full: the default)"
    )
    parser.add_argument(
        "--dynamic", action="store_true", help="with --full: the dynamic-shape exports too"
    )
    args = parser.parse_args(argv)
    if args.full and args.out is None:
        parser.error("--full needs --out DIR (full-size models are never committed)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out or HERE
    out.mkdir(parents=True, exist_ok=True)
    exporters = args.exporter or list(EXPORTERS)
    static_only = args.static_only or (args.full and not args.dynamic)
    dynamic_variants = [False] if static_only else [False, True]
    began = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - began:6.1f}s] {message}", file=sys.stderr, flush=True)

    archs = select(args.only)
    if args.full:  # most WIDER architectures have small configurations only
        small = [a.name for a in archs if a in WIDER and not a.build.has_full_size]
        if small and args.only:
            raise SystemExit(f"error: no full-size configuration of {', '.join(small)}")
        archs = [a for a in archs if a.name not in small]
    manifest_path = out / "manifest.json"
    for arch in archs:
        entries = export_arch(arch, out, args.full, exporters, dynamic_variants, log)
        write_manifest(manifest_path, entries, args.full)
    log(f"wrote {manifest_path}")
    return 0


def write_manifest(path: Path, entries: list[dict], full: bool) -> None:
    """`entries` replace those of the same files in manifest.json (or start it)."""
    import onnxruntime
    import torch
    import transformers

    manifest = json.loads(path.read_text()) if path.exists() else {}
    models = {m["file"]: m for m in manifest.get("models", [])}
    models.update((entry["file"], entry) for entry in entries)
    manifest = {
        "generated_by": "test/models/export_models.py" + (" --full" if full else ""),
        "seed": SEED,
        "versions": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "onnxruntime": onnxruntime.__version__,
        },
        "error": "ort_max_rel_error: max |onnxruntime - torch| / max |torch| over outputs and input sets",
        "models": [models[k] for k in sorted(models, key=_order)],
    }
    path.write_text(json.dumps(manifest, indent=1) + "\n")


def _order(file: str) -> tuple:
    names = [a.name for a in ARCHS]
    arch = next((n for n in sorted(names, key=len, reverse=True) if file.startswith(n + "_")), "")
    return (names.index(arch) if arch in names else len(names), file)


if __name__ == "__main__":
    sys.exit(main())
