"""What an op's kernels tell about its work, for the ops whose shapes the trace leaves out:
lists of more than 30 tensors (an optimizer step) and advanced indexing's index lists. The
element type comes from the kernel's name, the elements from its launch's blocks."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np

__all__ = ["CHUNK_ELEMENTS", "LAUNCH_COUNTED_KERNELS", "Launch", "launch_hint", "parameter_chunks"]

# ATen's multi_tensor_apply gives each block one chunk of 65536 elements of one tensor
# (kChunkSize in MultiTensorApply.cuh), so a launch's blocks bound the elements it touched.
CHUNK_ELEMENTS = 65536


class Launch(NamedTuple):
    """What an op's kernels say about its work, for the ops whose shapes the trace leaves out
    (lists of more than 30 tensors, advanced-indexing index lists): see :func:`launch_hint`."""

    dtype: str | None  # trace type name of the kernel's element type
    blocks: float | None  # blocks launched by its multi-tensor or indexing kernels
    per_block: int | None  # elements per block of an index_elementwise_kernel<nt, vt>
    # The trace's parameters (what torch::autograd::AccumulateGrad received): their
    # multi-tensor chunks, elements and count, to size an optimizer's lists exactly.
    params: tuple[int, int, int] | None = None


# Element types as kernel names spell them (the first one in the template arguments); an
# OpaqueType<n> is any type of n bytes (a copy does not care which).
_KERNEL_TYPES = {
    "c10::BFloat16": "c10::BFloat16",
    "c10::Half": "c10::Half",
    "__half": "c10::Half",
    "__nv_bfloat16": "c10::BFloat16",
    "c10::Float8_e4m3fn": "c10::Float8_e4m3fn",
    "c10::Float8_e5m2": "c10::Float8_e5m2",
    "double": "double",
    "float": "float",
    "signed char": "signed char",
    "unsigned char": "unsigned char",
    "bool": "bool",
}
_OPAQUE_TYPES = {1: "unsigned char", 2: "c10::Half", 4: "float", 8: "double", 16: "double"}
_KERNEL_TYPE_PATTERN = re.compile(
    r"\b(" + "|".join(re.escape(t) for t in _KERNEL_TYPES) + r")\b|OpaqueType<(\d+)u?>"
)
_INDEX_KERNEL_PATTERN = re.compile(r"index_elementwise_kernel<(\d+), (\d+)")
# Kernels whose blocks each cover a known number of elements.
LAUNCH_COUNTED_KERNELS = re.compile(r"multi_tensor_apply_kernel|index_elementwise_kernel")


@lru_cache(maxsize=4096)
def _kernel_type(kernel: str) -> str | None:
    """The element type a kernel's name gives (its first type template argument), if any."""
    args = kernel[kernel.find("<") + 1 :] if "<" in kernel else ""
    match = _KERNEL_TYPE_PATTERN.search(args)
    if match is None:
        return None
    if match.group(2):
        return _OPAQUE_TYPES.get(int(match.group(2)))
    return _KERNEL_TYPES[match.group(1)]


def launch_hint(
    kernel: str | None, blocks: float | None, params: tuple[int, int, int] | None = None
) -> Launch | None:
    """What an op's first kernel (its name) and its multi-tensor or indexing kernels (their
    blocks, summed) tell about its work; None when they tell nothing. ``params``: see
    :func:`parameter_chunks`."""
    if not isinstance(kernel, str):
        return None
    match = _INDEX_KERNEL_PATTERN.search(kernel)
    per_block = int(match.group(1)) * int(match.group(2)) if match else None
    dtype = _kernel_type(kernel)
    counted = float(blocks) if blocks is not None and np.isfinite(blocks) and blocks > 0 else None
    if dtype is None and counted is None:
        return None
    return Launch(dtype, counted, per_block, params if counted else None)


def parameter_chunks(shapes: Sequence[Sequence[int]]) -> tuple[int, int, int] | None:
    """(multi-tensor chunks, elements, count) of a model's parameters, from their shapes."""
    sizes = [math.prod(shape) for shape in shapes]
    if not sizes:
        return None
    chunks = sum(-(-n // CHUNK_ELEMENTS) for n in sizes)
    return chunks, sum(sizes), len(sizes)
