"""The cost of any aten op from its recorded arguments, by running it on torch's meta device.

``costs.formulas`` holds hand formulas for the ops whose arithmetic or traffic a general rule
gets wrong. Every other aten op is costed here, in the same conventions (see ``costs.model``'s
docstring):

- **Output shapes**: the op's schema says which recorded argument is a tensor, a list, a scalar
  or an ``out=`` tensor; each tensor becomes an empty tensor on the meta device (a shape and a
  dtype, no data, no GPU), each scalar takes its recorded value (``Concrete Inputs``), and the
  op runs there. Its outputs are the shapes it would write. Nothing runs on a real device, and
  the caller's modes (a ``FlopCounterMode`` around it) are set aside while it runs.
- **Bytes**: the minimum traffic. Every tensor argument is read once, except an ``out=`` tensor;
  every fresh output is written once, and so is every argument the schema marks as written to
  (in-place ops: ``add_``, ``index_add_``). Outputs that are views of an input move nothing.
- **FLOPs**: what ``torch.utils.flop_counter.FlopCounterMode`` counts while the op runs there
  (its formulas, also for what a composite op dispatches to; counted by a mode of our own that
  does as it does without importing Dynamo); else one per output element
  for pointwise ops (``torch.Tag.pointwise``); one per input element for reductions
  (``torch.Tag.reduction``); otherwise the per-element counts of ``_FLOPS_PER_OUTPUT`` below,
  and none for ops that only move data (``cat``, ``index``, ``upsample_nearest2d``, ``topk``...).
- **Lists of tensors**: the profiler records their shapes (up to 30 tensors) but not their
  dtype; the dtype comes from the caller's hint (the dtype named in the op's kernel), else from
  the op's other tensor arguments, else float.

Each distinct call is costed once and cached (``meta_cost`` is memoised), so a trace that
repeats a shape a thousand times runs it once. What a run on the meta device tells (the tensors
read and written, the FLOPs counted, the op's tag) is shipped for the calls seen in real traces
(``meta_table.json``, made by ``bench/meta_table.py``): those are costed without importing
torch, which a call not in the table still imports, as the last resort.
"""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path
from typing import Any

from .arguments import OpCost, Tensor, parse_concrete, promote
from .dtypes import SCALAR_TYPE_CODES, TYPES

# Trace type name -> torch dtype attribute (torch.<name>).
_TORCH_DTYPES = {
    "double": "float64",
    "float": "float32",
    "c10::Half": "float16",
    "c10::BFloat16": "bfloat16",
    "c10::Float8_e4m3fn": "float8_e4m3fn",
    "c10::Float8_e5m2": "float8_e5m2",
    "c10::Float8_e4m3fnuz": "float8_e4m3fnuz",
    "c10::Float8_e5m2fnuz": "float8_e5m2fnuz",
    "c10::complex<c10::Half>": "complex32",
    "c10::complex<float>": "complex64",
    "c10::complex<double>": "complex128",
    "signed char": "int8",
    "unsigned char": "uint8",
    "bool": "bool",
    "short int": "int16",
    "int": "int32",
    "long int": "int64",
    "unsigned int": "uint32",
    "long unsigned int": "uint64",
    "short unsigned int": "uint16",
    "long": "int64",
    "unsigned long": "uint64",
    "short": "int16",
    "unsigned short": "uint16",
}

# Ops that compute something but carry no pointwise or reduction tag: FLOPs per output element
# (a bias add and a scale for the attention fast path's projection split; interpolation weights).
_FLOPS_PER_OUTPUT = {
    "_transform_bias_rescale_qkv": 2,
    "upsample_bilinear2d": 8,
    "upsample_linear1d": 4,
    "upsample_trilinear3d": 16,
    "upsample_bicubic2d": 32,
    "_upsample_bilinear2d_aa": 8,
    "grid_sampler_2d": 8,
    "lerp": 3,
}
# Ops that read every input element once to choose among them: 1 FLOP (a comparison) each.
_FLOPS_PER_INPUT = {"topk": 1, "sort": 1, "argsort": 1, "kthvalue": 1, "median": 1, "mode": 1}

# Allocation and bookkeeping ops: they write nothing a kernel would, whatever their outputs.
_NO_TRAFFIC = frozenset(
    {
        *("empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "resize_"),
        *("set_", "detach", "alias", "lift_fresh", "record_stream", "_local_scalar_dense", "item"),
    }
)

_MISSING = object()  # an argument that cannot be rebuilt


def _freeze(value: Any) -> Any:
    """A recorded argument list as nested tuples (hashable, for the cache)."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if hasattr(value, "tolist"):  # a numpy array from the trace reader
        return _freeze(value.tolist())
    return value


def meta_cost(
    name: str, dims: Any, types: Any, concrete: Any, list_type: str | None = None
) -> OpCost | None:
    """The cost of one aten op call by its shapes on the meta device; None when the op is not
    an aten op, has no meta implementation, or its recorded arguments fit none of its overloads
    (a list of more than 30 tensors, whose shapes the profiler leaves out)."""
    if not name.startswith("aten::"):
        return None
    return _meta_cost(
        name[len("aten::") :],
        _freeze(dims),
        _freeze(types),
        _freeze(concrete) if concrete is not None else None,
        list_type,
    )


@functools.lru_cache(maxsize=16384)
def _meta_cost(
    op: str, dims: tuple, types: tuple, concrete: tuple | None, list_type: str | None
) -> OpCost | None:
    if op in _NO_TRAFFIC:
        return None
    key = table_key(op, dims, types, concrete, list_type)
    shipped = _shipped()
    footprint = shipped[key] if key in shipped else footprint_on_meta(*key)
    return None if footprint is None else _priced(op, footprint)


# What running one call on the meta device tells: the tensors it reads and writes, the FLOPs
# FlopCounterMode counted (0 when it has no formula), and the op's tag ("pointwise",
# "reduction" or ""); None where no overload fits or none has a meta kernel.
Footprint = tuple[list[Tensor], list[Tensor], float, str]

# The footprints of the calls seen in real traces, made by bench/meta_table.py from torch's
# meta kernels: a trace whose calls are all in it is costed without importing torch.
_TABLE = Path(__file__).with_name("meta_table.json")


def table_key(
    op: str, dims: tuple, types: tuple, concrete: tuple | None, list_type: str | None
) -> tuple:
    """One call's key in the shipped table: its frozen arguments as JSON would give them back
    (lists as tuples), so a key read from the file equals the key of the same call."""
    return _freeze([op, dims, types, concrete, list_type])


@functools.cache
def _shipped() -> dict[tuple, Footprint | None]:
    try:
        rows = json.loads(_TABLE.read_text())
    except (OSError, ValueError):  # a broken install costs the calls with torch instead
        return {}
    return {_freeze(key): _from_json(value) for key, value in rows}


def _from_json(value: Any) -> Footprint | None:
    if value is None:
        return None
    reads, writes, counted, tag = value
    return (
        [Tensor(tuple(shape), name) for shape, name in reads],
        [Tensor(tuple(shape), name) for shape, name in writes],
        float(counted),
        tag,
    )


def footprint_to_json(footprint: Footprint | None) -> Any:
    """A footprint as the shipped table stores it."""
    if footprint is None:
        return None
    reads, writes, counted, tag = footprint
    return [
        [[list(t.shape), t.type] for t in reads],
        [[list(t.shape), t.type] for t in writes],
        counted,
        tag,
    ]


def footprint_on_meta(
    op: str, dims: tuple, types: tuple, concrete: tuple | None, list_type: str | None
) -> Footprint | None:
    """One call's footprint, by running it on the meta device (imports torch)."""
    torch = _torch()
    packet = getattr(torch.ops.aten, op, None)
    if packet is None:
        return None
    element_type = _list_element_type(dims, types, list_type)
    for overload_name in _overload_order(packet.overloads()):
        overload = getattr(packet, overload_name)
        schema = overload._schema
        if len(schema.arguments) != len(types):
            continue
        built = _arguments(torch, schema, dims, types, concrete, element_type)
        if built is None:
            continue
        args, kwargs, values = built
        try:
            with warnings.catch_warnings(), _no_modes(), torch.no_grad():
                warnings.simplefilter("ignore")
                inputs = [_shapes(v) for v in values]  # before the op resizes an out= tensor
                with _flop_counter() as counter:
                    result = overload(*args, **kwargs)
        except Exception:  # no meta kernel, a data-dependent shape, or another overload's args
            continue
        counted = float(counter.get_total_flops())
        return _footprint(torch, overload, schema, values, inputs, result, counted)
    return None


@functools.cache
def _torch() -> Any:
    import torch

    return torch


def _flop_counter() -> Any:
    """A mode that counts what ``FlopCounterMode`` counts (``get_total_flops``)."""
    return _flop_count_mode()()


@functools.cache
def _flop_count_mode() -> type:
    """``FlopCounterMode``'s count as a dispatch mode of our own: the same formulas
    (``flop_registry``) and the same decomposition of ops without one, without its module
    tracker and without Dynamo, which its mode imports on first use (0.7 s, 800 modules)."""
    torch = _torch()
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    aten, prim = torch.ops.aten, torch.ops.prim
    # The metadata queries FlopCounterMode leaves to the tensors (as its __torch_dispatch__).
    metadata = {
        *(aten.sym_is_contiguous.default, aten.is_contiguous.default),
        *(aten.is_contiguous.memory_format, aten.is_strides_like_format.default),
        *(aten.is_non_overlapping_and_dense.default, aten.size.default, aten.sym_size.default),
        *(aten.stride.default, aten.sym_stride.default, aten.storage_offset.default),
        *(aten.sym_storage_offset.default, aten.numel.default, aten.sym_numel.default),
        *(aten.dim.default, prim.layout.default),
    }

    class FlopCount(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False  # nothing runs compiled here: no need to import Dynamo to disable it

        def __init__(self) -> None:
            super().__init__()
            self.flops = 0

        def get_total_flops(self) -> int:
            return self.flops

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            kwargs = kwargs or {}
            if func in metadata:
                return NotImplemented
            # As FlopCounterMode: an op (overload) is looked up among the formulas' op packets,
            # so every op tries to decompose first, and what it decomposes into is counted.
            if func not in flop_registry and func is not prim.device.default:
                with self:
                    decomposed = func.decompose(*args, **kwargs)
                    if decomposed is not NotImplemented:
                        return decomposed
            out = func(*args, **kwargs)
            formula = flop_registry.get(func._overloadpacket)
            if formula is not None:
                self.flops += formula(*args, **kwargs, out_val=out)
            return out

    return FlopCount


def _no_modes() -> Any:
    from torch.utils._python_dispatch import _disable_current_modes

    return _disable_current_modes()


def _overload_order(names: list[str]) -> list[str]:
    """The default overload first: the common call, tried before its variants."""
    return sorted(names, key=lambda n: (n != "default", "out" in n, n))


def _list_element_type(dims: tuple, types: tuple, hint: str | None) -> str:
    """The dtype to give the tensors of a list argument: the hint, else the op's first other
    tensor argument with dimensions, else float."""
    if hint in _TORCH_DTYPES:
        return hint
    for shape, type_name in zip(dims, types, strict=False):
        if type_name in _TORCH_DTYPES and shape:
            return type_name
    return "float"


def _inner(type_text: str) -> tuple[str, bool]:
    """'Optional[Tensor]' -> ('Tensor', True)."""
    if type_text.startswith("Optional[") and type_text.endswith("]"):
        return type_text[len("Optional[") : -1], True
    return type_text, False


def _arguments(
    torch: Any, schema: Any, dims: tuple, types: tuple, concrete: tuple | None, element: str
) -> tuple[list, dict, list] | None:
    """Positional and keyword arguments for one overload, and each argument's value in schema
    order; None when the recorded arguments do not fit it."""
    args: list = []
    kwargs: dict = {}
    values: list = []
    for i, argument in enumerate(schema.arguments):
        text = concrete[i] if concrete is not None and i < len(concrete) else ""
        value = _argument(torch, argument, dims[i], types[i], text, element)
        if value is _MISSING:
            return None
        values.append(value)
        if argument.kwarg_only:
            kwargs[argument.name] = value
        else:
            args.append(value)
    return args, kwargs, values


def _meta_tensor(torch: Any, shape: Any, type_name: str) -> Any:
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        return _MISSING
    return torch.empty(shape, dtype=getattr(torch, _TORCH_DTYPES[type_name]), device="meta")


def _argument(
    torch: Any, argument: Any, shape: Any, type_name: str, text: str, element: str
) -> Any:
    """One argument rebuilt from the trace, or _MISSING."""
    kind, optional = _inner(str(argument.type))
    if kind == "Tensor":
        if type_name in _TORCH_DTYPES:
            return _meta_tensor(torch, shape, type_name)
        return None if optional and type_name == "" else _MISSING
    if kind in ("List[Tensor]", "List[Optional[Tensor]]"):
        # An empty list is what the profiler writes for more than 30 tensors: not rebuildable.
        if type_name != "TensorList" or not isinstance(shape, tuple) or not shape:
            return None if optional and type_name == "" else _MISSING
        tensors = [_meta_tensor(torch, s, element) for s in shape]
        return _MISSING if any(t is _MISSING for t in tensors) else tensors
    if kind == "Device" or argument.name == "device":
        return torch.device("meta")
    if kind in ("Layout", "MemoryFormat", "Generator") or argument.name in ("layout", "pin_memory"):
        return None if optional else _default(argument)
    if type_name not in ("Scalar", "ScalarList", "") and type_name not in _TORCH_DTYPES:
        return _MISSING
    if type_name in _TORCH_DTYPES and shape:
        return _MISSING  # a tensor where the schema wants a scalar
    value = parse_concrete(text) if text else None
    if value is None:
        # Unrecorded (no Concrete Inputs, or a string the profiler leaves out): a default would
        # be a guess, and a wrong dim or size gives a wrong shape.
        return None if optional and type_name == "" else _MISSING
    if argument.name == "dtype" or kind == "ScalarType":
        code_name = SCALAR_TYPE_CODES.get(value) if isinstance(value, int) else None
        if code_name not in _TORCH_DTYPES:
            return _MISSING
        return getattr(torch, _TORCH_DTYPES[code_name])
    if kind == "str":
        return text
    if kind.startswith("List[") and not isinstance(value, list):
        value = [value]
    return value


def _default(argument: Any) -> Any:
    return argument.default_value if argument.has_default_value() else _MISSING


def _shapes(value: Any) -> list[tuple[tuple[int, ...], Any]]:
    """(shape, dtype) of each tensor in an argument value (a tensor or a list of them)."""
    items = value if isinstance(value, list) else [value]
    return [(tuple(t.shape), t.dtype) for t in items if _is_tensor(t)]


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "device")


def _flatten(result: Any) -> list:
    if isinstance(result, (list, tuple)):
        return [t for item in result for t in _flatten(item)]
    return [result] if _is_tensor(result) else []


@functools.cache
def _type_names() -> dict[Any, str]:
    torch = _torch()
    return {getattr(torch, attr): name for name, attr in _TORCH_DTYPES.items()}


def _traced(shape: tuple[int, ...], dtype: Any) -> Tensor | None:
    name = _type_names().get(dtype)
    return Tensor(shape, name) if name in TYPES else None


def _writes_argument(argument: Any) -> bool:
    return argument.alias_info is not None and argument.alias_info.is_write


def _footprint(
    torch: Any,
    overload: Any,
    schema: Any,
    values: list,
    inputs: list,
    result: Any,
    counted: float,
) -> Footprint | None:
    reads: list[Tensor] = []
    writes: list[Tensor] = []
    for argument, value, before in zip(schema.arguments, values, inputs, strict=True):
        written = _writes_argument(argument)
        if not (written and argument.kwarg_only):  # an out= tensor is not read
            reads += [t for t in (_traced(*s) for s in before) if t is not None]
        if written:
            writes += [t for t in (_traced(*s) for s in _shapes(value)) if t is not None]
    returned = _flatten(result)
    fresh = []
    if len(schema.returns) == 1 and str(schema.returns[0].type).startswith("List["):
        aliases = [schema.returns[0].alias_info is not None] * len(returned)
    else:
        aliases = [r.alias_info is not None for r in schema.returns][: len(returned)]
        aliases += [False] * (len(returned) - len(aliases))
    for tensor, alias in zip(returned, aliases, strict=True):
        if not alias:  # a fresh output; an aliasing one is an input written to, or a view
            fresh.append(tensor)
    writes += [t for t in (_traced(tuple(x.shape), x.dtype) for x in fresh) if t is not None]
    if not reads and not writes:
        return None
    tags = set(overload.tags)
    tag = (
        "pointwise"
        if torch.Tag.pointwise in tags
        else "reduction"
        if torch.Tag.reduction in tags
        else ""
    )
    return reads, writes, counted, tag


def _priced(op: str, footprint: Footprint) -> OpCost:
    """The cost of a call from its footprint (no torch needed)."""
    reads, writes, counted, tag = footprint
    flops, category = _flops(op, tag, counted, reads, writes)
    compute = promote(reads) if reads else writes[0].type
    traffic = sum(t.nbytes for t in reads) + sum(t.nbytes for t in writes)
    return OpCost(float(flops), float(traffic), category, TYPES[compute][0], source="shapes")


def _flops(
    op: str, tag: str, counted: float, reads: list[Tensor], writes: list[Tensor]
) -> tuple[float, str]:
    """FLOPs and category: what FlopCounterMode counted while the op ran (its formulas, also for
    what a composite op dispatches to), else the per-element rules."""
    if counted > 0:
        return counted, _category(op)
    largest_out = max((t.numel for t in writes), default=0)
    largest_in = max((t.numel for t in reads), default=0)
    if tag == "pointwise":
        return float(largest_out), "elementwise"
    if tag == "reduction":
        return float(largest_in), "reduction"
    if op in _FLOPS_PER_OUTPUT:
        return float(_FLOPS_PER_OUTPUT[op] * largest_out), "elementwise"
    if op.rstrip("_") in _FLOPS_PER_INPUT:
        return float(_FLOPS_PER_INPUT[op.rstrip("_")] * largest_in), "reduction"
    return 0.0, "copy"


def _category(op: str) -> str:
    if "attention" in op:
        return "attention"
    if "conv" in op:
        return "conv"
    return "matmul"
