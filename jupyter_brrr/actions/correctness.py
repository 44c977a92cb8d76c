"""Does a variant compute what eager computes? Compare outputs with dtype-aware tolerances.

Compiled code fuses and reorders floating-point operations, so its results differ from eager in
the last bits; a CUDA graph that replays stale inputs, or a compiled graph that baked in a Python
value, differs by a lot. The tolerances separate the two:

- elementwise, ``|a - b| <= atol + rtol * |eager|`` (as ``torch.allclose``), with tolerances per
  dtype a little wider than ``torch.testing``'s defaults (which are meant for one kernel, not a
  reordered network);
- where some elements fall outside that (a deep network in bf16 drifts by a few units in the
  last place here and there), the output still matches when the relative RMS error
  ``||a - b|| / ||eager||`` is within the dtype's ``RMS_TOLERANCES``: rounding differences
  stay a few percent at most in bf16, a wrong result (a stale input, a baked-in value) is of
  order 1.

Outputs may be tensors (any device), numbers, strings, None, numpy arrays, and lists, tuples and
dicts of these. Other objects (modules, functions) are not compared.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# (rtol, atol) per floating dtype name; "tf32" is float32 while matmuls may use TF32 tensor
# cores (torch.set_float32_matmul_precision other than "highest": 10 bits kept), "float8" any
# float8 dtype.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "complex128": (1e-7, 1e-7),
    "float32": (1e-4, 1e-5),
    "complex64": (1e-4, 1e-5),
    "tf32": (5e-3, 1e-3),
    "float16": (1e-2, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float8": (1.25e-1, 1e-1),
}
# Relative RMS error per dtype under which differences are rounding, not a wrong result.
RMS_TOLERANCES: dict[str, float] = {
    "float64": 1e-6,
    "complex128": 1e-6,
    "float32": 1e-3,
    "complex64": 1e-3,
    "tf32": 1e-2,
    "float16": 2e-2,
    "bfloat16": 5e-2,
    "float8": 0.25,
}
PYTHON_FLOAT_TOLERANCE = (1e-5, 1e-8)


@dataclass
class Check:
    """The outcome of comparing a variant's output with the baseline's."""

    correct: bool | None  # None: nothing comparable (no output, or only objects we do not compare)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    detail: str = ""  # what differed, and where (``[0]['logits']: 3 of 1024 elements ...``)
    compared: int = 0  # leaves compared
    notes: list[str] = field(default_factory=list)


def _tolerance_key(dtype: Any) -> str:
    """The key of ``dtype`` in the tolerance tables."""
    import torch

    name = str(dtype).removeprefix("torch.")
    if name == "float32" and torch.get_float32_matmul_precision() != "highest":
        return "tf32"
    return "float8" if name.startswith("float8") else name


def rms_tolerance(dtype: Any) -> float:
    """The relative RMS error under which an output of this dtype still matches."""
    return RMS_TOLERANCES.get(_tolerance_key(dtype), 0.0)


def tolerance(dtype: Any) -> tuple[float, float]:
    """(rtol, atol) for comparing results of this torch dtype."""
    return TOLERANCES.get(_tolerance_key(dtype), (0.0, 0.0))


def snapshot(value: Any) -> Any:
    """A copy of ``value`` whose tensors later runs cannot overwrite (a CUDA graph's outputs
    are rewritten by every replay)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple
        return type(value)(*(snapshot(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(snapshot(v) for v in value)
    if isinstance(value, Mapping):
        return {k: snapshot(v) for k, v in value.items()}
    return value


def compare_outputs(
    reference: Any,
    value: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    lowered: bool = False,
) -> Check:
    """Compare ``value`` with ``reference`` (the eager output). ``rtol``/``atol`` override the
    per-dtype tolerances. ``lowered``: the value was computed at a lower precision on purpose
    (autocast): a floating tensor of another floating dtype is compared in the reference's."""
    state = _State(rtol, atol)
    state.lowered = lowered
    state.compare(reference, value, "")
    if state.mismatch:
        correct: bool | None = False
    elif state.compared:
        correct = True
    else:
        correct = None
    detail = "; ".join(state.problems[:5])
    if len(state.problems) > 5:
        detail += f"; and {len(state.problems) - 5} more"
    if correct is None and not detail:
        detail = "nothing to compare: the output holds no tensors or numbers"
    return Check(
        correct=correct,
        max_abs_err=state.max_abs,
        max_rel_err=state.max_rel,
        detail=detail,
        compared=state.compared,
        notes=state.notes,
    )


class _State:
    def __init__(self, rtol: float | None, atol: float | None) -> None:
        self.rtol, self.atol = rtol, atol
        self.lowered = False
        self.compared = 0
        self.mismatch = False
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.max_abs: float | None = None
        self.max_rel: float | None = None

    def _fail(self, where: str, what: str) -> None:
        self.mismatch = True
        self.problems.append(f"{where or 'output'}: {what}")

    def _errors(self, abs_err: float | None, rel_err: float | None) -> None:
        # An infinite error (NaN on one side) has no JSON number: the detail says so.
        if abs_err is not None and math.isfinite(abs_err):
            self.max_abs = abs_err if self.max_abs is None else max(self.max_abs, abs_err)
        if rel_err is not None and math.isfinite(rel_err):
            self.max_rel = rel_err if self.max_rel is None else max(self.max_rel, rel_err)

    def compare(self, ref: Any, val: Any, where: str) -> None:
        import numpy as np
        import torch

        if isinstance(ref, np.ndarray) and ref.dtype != object:
            ref = torch.from_numpy(np.ascontiguousarray(ref))
            val = (
                torch.from_numpy(np.ascontiguousarray(val)) if isinstance(val, np.ndarray) else val
            )
        if isinstance(ref, torch.Tensor):
            if not isinstance(val, torch.Tensor):
                self._fail(where, f"eager gave a tensor, the variant {type(val).__name__}")
                return
            self._tensors(ref, val, where)
        elif ref is None:
            if val is not None:  # nothing to compare, unless the variant gave something
                self._fail(where, f"None vs {_kind(val)}")
        elif isinstance(ref, (bool, np.bool_, str)):
            self.compared += 1
            if type(ref) is not type(val) or ref != val:
                self._fail(where, f"{ref!r} vs {val!r}")
        elif isinstance(ref, (int, float, complex, np.number)):
            self._number(ref, val, where)
        elif isinstance(ref, (list, tuple)):
            if not isinstance(val, (list, tuple)) or len(ref) != len(val):
                self._fail(where, f"{_kind(ref)} vs {_kind(val)}")
                return
            for i, (r, v) in enumerate(zip(ref, val, strict=True)):
                self.compare(r, v, f"{where}[{i}]")
        elif isinstance(ref, Mapping):
            if not isinstance(val, Mapping) or set(ref) != set(val):
                self._fail(
                    where,
                    f"keys {sorted(map(str, ref))} vs {sorted(map(str, val)) if isinstance(val, Mapping) else _kind(val)}",
                )
                return
            for key in ref:
                self.compare(ref[key], val[key], f"{where}[{key!r}]")
        # Anything else (modules, functions, user objects) is not compared: a function made
        # afresh by each run is never equal to the last one, and that is no mismatch.

    def _number(self, ref: Any, val: Any, where: str) -> None:
        import numpy as np
        import torch

        if isinstance(val, torch.Tensor) and val.numel() == 1:
            val = val.item()
        if not isinstance(val, (int, float, complex, np.number)) or isinstance(val, bool):
            self._fail(where, f"{ref!r} vs {val!r}")
            return
        self.compared += 1
        if isinstance(ref, (int, np.integer)) and isinstance(val, (int, np.integer)):
            diff = abs(int(ref) - int(val))
            self._errors(float(diff), float(diff) / abs(int(ref)) if ref else None)
            if diff:
                self._fail(where, f"{ref} vs {val}")
            return
        rtol, atol = PYTHON_FLOAT_TOLERANCE
        rtol = self.rtol if self.rtol is not None else rtol
        atol = self.atol if self.atol is not None else atol
        a, b = complex(ref), complex(val)
        if _both_nan(a, b) or a == b:
            self._errors(0.0, 0.0)
            return
        diff = abs(a - b)
        rel = diff / abs(a) if abs(a) > atol else None
        self._errors(diff, rel)
        if not diff <= atol + rtol * abs(a):
            self._fail(where, f"{ref!r} vs {val!r}")

    def _tensors(self, ref: Any, val: Any, where: str) -> None:
        import torch

        self.compared += 1
        if ref.shape != val.shape:
            self._fail(where, f"shape {tuple(ref.shape)} vs {tuple(val.shape)}")
            return
        lowered = self.lowered and ref.is_floating_point() and val.is_floating_point()
        if ref.dtype != val.dtype and lowered:
            val = val.to(ref.dtype)
        if ref.dtype != val.dtype:
            self._fail(where, f"dtype {ref.dtype} vs {val.dtype}")
            return
        if ref.layout != torch.strided or val.layout != torch.strided:
            ref, val = ref.to_dense(), val.to_dense()
        val = val.to(ref.device)
        if ref.numel() == 0:
            self._errors(0.0, 0.0)
            return
        if not (ref.is_floating_point() or ref.is_complex()):
            equal = torch.equal(ref, val)
            diff = (
                (ref.to(torch.float64) - val.to(torch.float64)).abs().max().item()
                if not equal
                else 0.0
            )
            self._errors(diff, None)
            if not equal:
                count = int((ref != val).sum().item())
                self._fail(where, f"{count} of {ref.numel()} elements differ (max abs {diff:.3g})")
            return
        rtol, atol = tolerance(ref.dtype)
        rtol = self.rtol if self.rtol is not None else rtol
        atol = self.atol if self.atol is not None else atol
        if ref.is_complex():
            ref, val = torch.view_as_real(ref), torch.view_as_real(val)
        work = torch.float64 if ref.dtype == torch.float64 else torch.float32
        a, b = ref.to(work), val.to(work)
        same = (a == b) | (a.isnan() & b.isnan())  # equal infinities and NaNs in both: no error
        diff = torch.where(same, torch.zeros((), dtype=work, device=a.device), (a - b).abs())
        diff = torch.nan_to_num(diff, nan=math.inf)  # a NaN on one side only: infinitely wrong
        magnitude = a.abs()
        bad = ~same & ~(diff <= atol + rtol * magnitude)
        max_abs = diff.max().item()
        significant = magnitude > atol  # relative error means nothing for values near zero
        rel = (
            (diff[significant] / magnitude[significant]).max().item()
            if bool(significant.any())
            else None
        )
        self._errors(max_abs, rel)
        outside = int(bad.sum().item())
        if not outside:
            return
        finite = torch.isfinite(a) & torch.isfinite(b)
        rms = None
        if bool(finite.all()):
            norm = torch.linalg.vector_norm(a)
            rms = (torch.linalg.vector_norm(a - b) / norm).item() if norm > 0 else math.inf
        what = f"{outside} of {ref.numel()} elements outside rtol={rtol:g}, atol={atol:g} (max abs error {max_abs:.3g})"
        # Tolerances given by the caller are meant elementwise: then the RMS rule uses rtol.
        explicit = self.rtol is not None or self.atol is not None
        rms_tol = rtol if explicit else max(rms_tolerance(ref.dtype), rtol)
        if rms is not None and rms <= rms_tol:
            self.notes.append(
                f"{where or 'output'}: {what}, but the relative RMS error {rms:.2g} is within {rms_tol:g}: "
                "rounding differences, counted as a match."
            )
            return
        self._fail(where, what + (f", relative RMS error {rms:.3g}" if rms is not None else ""))


def _both_nan(a: complex, b: complex) -> bool:
    return (math.isnan(a.real) or math.isnan(a.imag)) and (math.isnan(b.real) or math.isnan(b.imag))


def _kind(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__
