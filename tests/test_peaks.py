"""Tests for jupyter_brrr.costs.peaks: the datasheet table, name lookup, the cache, and the CPU paths.

The GPU path of measure_peaks() needs CUDA and is exercised on a GPU machine; here we check
that it refuses clearly without one.
"""

from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from checked import known_peaks, load_report

from jupyter_brrr.costs import peaks as pk
from jupyter_brrr.costs.peaks import DTYPES, KNOWN_GPUS, Peaks

DATA = Path(__file__).parent / "data"
PEAKS_FILE = Path(pk.__file__)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder for the test (never the user's)."""
    monkeypatch.setenv("JUPYTER_BRRR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def no_cuda(monkeypatch):
    """Behave as on a machine without CUDA, also when the tests run on a GPU machine."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def measured_h200() -> Peaks:
    return Peaks(
        device="NVIDIA H200",
        flops={"bf16": 787e12, "fp16": 780e12, "tf32": 380e12, "fp32": 51e12, "fp8": 1979e12},
        bandwidth=4.24e12,
        memory_bytes=150109880320,
        source="measured on this GPU 2026-11-29 (matmuls: bf16 8192^3; 2 GiB device-to-device copy)",
        measured=True,
    )


# --- lookup ----------------------------------------------------------------------------------

REAL_NAMES = {
    "NVIDIA H200": "NVIDIA H200",
    "NVIDIA H200 NVL": "NVIDIA H200 NVL",
    "NVIDIA GH200 480GB": "NVIDIA GH200 480GB",
    "NVIDIA H100 80GB HBM3": "NVIDIA H100 SXM",
    "NVIDIA H100 PCIe": "NVIDIA H100 PCIe",
    "NVIDIA H100 NVL": "NVIDIA H100 NVL",
    "NVIDIA A100-SXM4-80GB": "NVIDIA A100 80GB (SXM)",
    "NVIDIA A100-SXM4-40GB": "NVIDIA A100 40GB (SXM)",
    "NVIDIA A100-PG509-200": "NVIDIA A100 40GB (SXM)",
    "NVIDIA A100-PCIE-40GB": "NVIDIA A100 40GB PCIe",
    "NVIDIA A100 80GB PCIe": "NVIDIA A100 80GB PCIe",
    "Tesla V100-SXM2-16GB": "Tesla V100-SXM2-16GB",
    "Tesla V100-SXM2-32GB": "Tesla V100-SXM2-32GB",
    "Tesla V100-PCIE-16GB": "Tesla V100-PCIE-16GB",
    "Tesla V100-PCIE-32GB": "Tesla V100-PCIE-32GB",
    "Tesla V100S-PCIE-32GB": "Tesla V100S-PCIE-32GB",
    "NVIDIA L4": "NVIDIA L4",
    "NVIDIA L40": "NVIDIA L40",
    "NVIDIA L40S": "NVIDIA L40S",
    "NVIDIA A10G": "NVIDIA A10G",
    "NVIDIA A10": "NVIDIA A10",
    "Tesla T4": "Tesla T4",
    "NVIDIA GeForce RTX 3090": "NVIDIA GeForce RTX 3090",
    "NVIDIA GeForce RTX 4090": "NVIDIA GeForce RTX 4090",
    "AMD Instinct MI250X / MI250": "AMD Instinct MI250X (one GCD)",
    "AMD Instinct MI250X": "AMD Instinct MI250X (one GCD)",
    "AMD Instinct MI250": "AMD Instinct MI250 (one GCD)",
    "AMD Instinct MI300X": "AMD Instinct MI300X",
    "AMD Instinct MI300X VF": "AMD Instinct MI300X",
    "AMD Instinct MI325X": "AMD Instinct MI325X",
}


@pytest.mark.parametrize(("name", "row"), sorted(REAL_NAMES.items()))
def test_lookup_real_names(name, row):
    found = pk.lookup(name)
    assert found is not None, name
    assert found.device == row
    assert not found.measured


@pytest.mark.parametrize("name", ["nvidia h200", "  NVIDIA   H200 ", "NVIDIA h100 pcie"])
def test_lookup_is_case_and_space_insensitive(name):
    assert pk.lookup(name) is not None


@pytest.mark.parametrize(
    "name",
    [
        "",
        "CPU",
        "NVIDIA B200",
        "NVIDIA GeForce RTX 3090 Ti",  # a different chip configuration from the 3090
        "NVIDIA GeForce RTX 4090 D",
        "NVIDIA GeForce RTX 4090 Laptop GPU",
        "NVIDIA A100-SXM4-40GB MIG 1g.5gb",  # a slice: a fraction of the GPU
        "AMD Radeon Graphics",  # generic ROCm name: needs the property hints
        "Intel(R) Data Center GPU Max 1550",
    ],
)
def test_lookup_unknown_is_none(name):
    assert pk.lookup(name) is None


def test_lookup_most_specific_first():
    # Each pair: a name that contains the other's tell-tale substring.
    assert known_peaks("NVIDIA L4").device == "NVIDIA L4"
    assert known_peaks("NVIDIA L40S").device == "NVIDIA L40S"
    assert known_peaks("NVIDIA GH200 480GB").device != "NVIDIA H200"
    assert known_peaks("NVIDIA A10").device == "NVIDIA A10"
    assert known_peaks("NVIDIA A100-SXM4-40GB").device.startswith("NVIDIA A100")


def test_lookup_memory_hint_when_the_name_does_not_tell():
    gib = 2**30
    assert known_peaks("NVIDIA A100-PG509-200", memory_bytes=39.4 * gib).device == (
        "NVIDIA A100 40GB (SXM)"
    )
    assert known_peaks("NVIDIA A100-PG506-230", memory_bytes=79.2 * gib).device == (
        "NVIDIA A100 80GB (SXM)"
    )
    assert known_peaks("Tesla V100-SXM3", memory_bytes=31.7 * gib).device == "Tesla V100-SXM2-32GB"


def test_lookup_mi250_compute_units():
    name = "AMD Instinct MI250X / MI250"
    assert known_peaks(name, multiprocessors=110).device == "AMD Instinct MI250X (one GCD)"
    assert known_peaks(name, multiprocessors=104).device == "AMD Instinct MI250 (one GCD)"
    unsure = known_peaks(name)
    assert unsure.device == "AMD Instinct MI250X (one GCD)"
    assert "MI250 is 5% slower" in unsure.source


def _trace_device(path: Path) -> dict:
    with gzip.open(path, "rt") as f:
        return json.load(f)["deviceProperties"][0]


@pytest.mark.parametrize(
    ("trace", "row"),
    [
        ("a100_alexnet.json.gz", "NVIDIA A100 40GB (SXM)"),
        ("triton_example.json.gz", "NVIDIA A100 40GB (SXM)"),
        ("coscos_eager.json.gz", "NVIDIA H200"),
        # ROCm 6.2 wrote the generic "AMD Radeon Graphics": 104 CUs and 64 GiB are an MI250 GCD.
        ("mi250_rocm_minitoy.json.gz", "AMD Instinct MI250 (one GCD)"),
    ],
)
def test_lookup_from_real_trace_properties(trace, row):
    props = _trace_device(DATA / trace)
    found = pk.lookup(
        props["name"], memory_bytes=props["totalGlobalMem"], multiprocessors=props["numSms"]
    )
    assert found is not None and found.device == row


def test_lookup_v100_trace_name():
    # From tests/data/v100_resnet_ns.json.gz (large, so not parsed here).
    found = known_peaks("Tesla V100-SXM2-32GB", memory_bytes=34079637504, multiprocessors=80)
    assert found.device == "Tesla V100-SXM2-32GB"


def test_every_row_is_found_by_its_own_name():
    for row in KNOWN_GPUS:
        assert pk.lookup(row.device) == row, row.device


# --- the table -------------------------------------------------------------------------------


def test_table_rows_are_sane():
    names = [row.device for row in KNOWN_GPUS]
    assert len(names) == len(set(names))
    for row in KNOWN_GPUS:
        assert row.source.strip(), row.device
        assert not row.measured
        assert set(row.flops) <= set(DTYPES)
        assert "fp32" in row.flops, row.device  # the fallback of last resort
        for key, value in row.flops.items():
            assert math.isfinite(value) and value > 0, (row.device, key)
            assert 1e11 <= value <= 3e15, (row.device, key, value)
        assert 1e11 <= row.bandwidth <= 1e13, row.device
        assert row.memory_bytes is not None and 8 * 2**30 <= row.memory_bytes <= 512 * 2**30
        # Tensor-core dtypes are never slower than plain FP32, and 8-bit is at most twice 16-bit.
        for key in ("tf32", "fp16", "bf16"):
            if key in row.flops:
                assert row.flops[key] >= row.flops["fp32"], (row.device, key)
        for key in ("fp8", "int8"):
            if key in row.flops:
                assert row.flops[key] <= 4 * row.flops["fp16"] + 1, (row.device, key)
        json.dumps(row.to_dict())


def test_table_is_dense_not_sparse():
    rel = 0.01
    h100 = known_peaks("NVIDIA H100 80GB HBM3")
    assert h100.flops["bf16"] == pytest.approx(989e12, rel=rel)  # not 1979e12 (sparse)
    assert h100.flops["fp8"] == pytest.approx(1979e12, rel=rel)  # not 3958e12
    assert h100.flops["tf32"] == pytest.approx(494.5e12, rel=rel)  # not 989e12
    assert h100.bandwidth == pytest.approx(3.35e12, rel=rel)
    h200 = known_peaks("NVIDIA H200")
    assert h200.flops["bf16"] == pytest.approx(989e12, rel=rel)
    assert h200.bandwidth == pytest.approx(4.8e12, rel=rel)
    assert h200.source == "NVIDIA H200 datasheet (SXM)"
    a100 = known_peaks("NVIDIA A100-SXM4-80GB")
    assert a100.flops["bf16"] == pytest.approx(312e12, rel=rel)  # not 624e12
    assert a100.flops["tf32"] == pytest.approx(156e12, rel=rel)
    assert a100.flops["fp32"] == pytest.approx(19.5e12, rel=rel)  # plain FP32, not TF32
    assert known_peaks("NVIDIA L4").flops["bf16"] == pytest.approx(121e12, rel=rel)  # not 242
    assert known_peaks("NVIDIA L40S").flops["bf16"] == pytest.approx(362e12, rel=rel)  # not 733
    # GeForce: bf16 with FP32 accumulate (what torch uses), not the FP16-accumulate rate.
    assert known_peaks("NVIDIA GeForce RTX 4090").flops["bf16"] == pytest.approx(165.2e12, rel=rel)
    # One MI250X die, as torch sees it: half the package.
    assert known_peaks("AMD Instinct MI250X").flops["bf16"] == pytest.approx(191.5e12, rel=rel)
    assert known_peaks("AMD Instinct MI300X").flops["bf16"] == pytest.approx(1307.4e12, rel=rel)


def test_h200_ridge_point_matches_design():
    h200 = known_peaks("NVIDIA H200")
    assert h200.ridge("bf16") == pytest.approx(989.5e12 / 4.8e12)
    # Measured on an H200 (docs/method.md, "Roofs"): bf16 ridge 790e12 / 4.24e12 = 186 FLOP/byte.
    assert measured_h200().ridge(pk.dtype_key("bfloat16")) == pytest.approx(185.6, abs=0.5)


# --- Peaks -----------------------------------------------------------------------------------


def test_ridge_math():
    p = Peaks(device="X", flops={"bf16": 400e12, "fp32": 50e12}, bandwidth=2e12)
    assert p.ridge("bf16") == pytest.approx(200.0)
    assert p.ridge(None) == pytest.approx(25.0)
    assert p.ridge("fp32") == p.flops_for("fp32") / p.bandwidth


def test_flops_for_fallbacks():
    v100 = known_peaks("Tesla V100-SXM2-16GB")
    assert v100.flops_for("tf32") == v100.flops["fp32"]  # no TF32 tensor cores
    assert v100.flops_for("bf16") == v100.flops["fp32"]  # no bf16 tensor cores: NOT fp16's rate
    assert v100.flops_for("fp16") == 125e12
    assert v100.flops_for("int8") == v100.flops["fp16"]
    a100 = known_peaks("NVIDIA A100-SXM4-40GB")
    assert a100.flops_for("fp8") == a100.flops["fp16"]  # no fp8 on Ampere
    assert a100.flops_for(None) == a100.flops["fp32"]
    assert a100.flops_for("complex64") == a100.flops["fp32"]
    assert a100.flops_for("no-such-dtype") == a100.flops["fp32"]
    only_bf16 = Peaks(device="X", flops={"bf16": 1e12, "fp32": 1e11}, bandwidth=1e11)
    assert only_bf16.flops_for("fp16") == 1e12
    assert only_bf16.flops_for("fp64") == 1e11


def test_flops_for_accepts_torch_dtypes_and_names():
    import torch

    h100 = known_peaks("NVIDIA H100 PCIe")
    assert h100.flops_for(torch.bfloat16) == h100.flops["bf16"]
    assert h100.flops_for("torch.float16") == h100.flops["fp16"]
    assert h100.flops_for("half") == h100.flops["fp16"]
    assert h100.flops_for(torch.float64) == h100.flops["fp64"]
    assert h100.flops_for(torch.float8_e4m3fn) == h100.flops["fp8"]
    assert h100.flops_for(torch.int8) == h100.flops["int8"]
    assert h100.flops_for(torch.float32) == h100.flops["fp32"]


def test_dtype_key():
    assert pk.dtype_key(None) == "fp32"
    assert pk.dtype_key("bf16") == "bf16"
    assert pk.dtype_key("BFloat16") == "bf16"
    assert pk.dtype_key("float8_e5m2fnuz") == "fp8"
    assert pk.dtype_key("double") == "fp64"
    assert pk.dtype_key("int64") == "fp32"
    assert pk.dtype_key("uint8") == "int8"


def test_peaks_validation():
    with pytest.raises(ValueError, match="unknown dtype key"):
        Peaks(device="X", flops={"bfloat16": 1e12}, bandwidth=1e12)
    with pytest.raises(ValueError, match="positive"):
        Peaks(device="X", flops={"fp32": 0.0}, bandwidth=1e12)
    with pytest.raises(ValueError, match="positive"):
        Peaks(device="X", flops={"fp32": 1e12}, bandwidth=float("nan"))
    with pytest.raises(ValueError, match="empty"):
        Peaks(device="X", flops={}, bandwidth=1e12)


def test_peaks_does_not_alias_the_callers_dict():
    flops = {"fp32": 1e12}
    p = Peaks(device="X", flops=flops, bandwidth=1e12)
    flops["fp32"] = 5.0
    assert p.flops["fp32"] == 1e12


def test_to_dict_round_trip_is_json_safe():
    for p in (*KNOWN_GPUS, measured_h200()):
        d = json.loads(json.dumps(p.to_dict()))
        assert Peaks.from_dict(d) == p
    d = measured_h200().to_dict()
    assert set(d) == {"device", "source", "measured", "flops", "bandwidth", "memory_bytes"}
    # Readers ignore keys that newer writers add, and memory_bytes may be missing.
    d.pop("memory_bytes")
    d["new_key"] = 1
    assert Peaks.from_dict(d).memory_bytes is None


# --- the cache -------------------------------------------------------------------------------


def test_cache_dir_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTER_BRRR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert pk.cache_dir() == tmp_path / "xdg" / "jupyter_brrr"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert pk.cache_dir() == tmp_path / "home" / ".cache" / "jupyter_brrr"
    monkeypatch.setenv("JUPYTER_BRRR_CACHE_DIR", str(tmp_path / "mine"))
    assert pk.cache_dir() == tmp_path / "mine"


def test_cache_round_trip(cache):
    assert pk.cached_peaks("NVIDIA H200") is None
    p = measured_h200()
    path = pk.cache_peaks(p, torch_version="2.11.0+cu130")
    assert path.is_file() and cache in path.parents
    assert json.loads(path.read_text())["torch"] == "2.11.0+cu130"
    assert pk.cached_peaks("NVIDIA H200") == p
    assert pk.cached_peaks("nvidia  h200") == p
    assert pk.cached_peaks("NVIDIA H200", memory_bytes=150109880320) == p
    assert pk.cached_peaks("NVIDIA H200", memory_bytes=1) is None
    assert pk.cached_peaks("NVIDIA H200", torch_version="2.13.0") is None
    assert pk.cached_peaks("NVIDIA H100 PCIe") is None


def test_peaks_for_prefers_a_measured_cache_entry(cache):
    table, note = pk.peaks_for("NVIDIA H200")
    assert table == pk.lookup("NVIDIA H200")
    assert note.startswith("Peaks: NVIDIA H200 datasheet (SXM).")
    assert "jupyter_brrr.measure_peaks()" in note

    pk.cache_peaks(measured_h200())
    got, note = pk.peaks_for("NVIDIA H200")
    assert got is not None and got == measured_h200() and got.measured
    assert "measured on this GPU" in note
    assert "measure_peaks(force=True)" in note


def test_cache_prefers_installed_torch_then_newest(cache):
    old = measured_h200()
    new = Peaks.from_dict({**old.to_dict(), "bandwidth": 4.3e12})
    pk.cache_peaks(new, torch_version=pk._torch_version())
    pk.cache_peaks(old, torch_version="0.0.1-old")
    assert pk.cached_peaks("NVIDIA H200") == new


def test_cache_skips_damaged_files(cache):
    folder = cache / "peaks"
    folder.mkdir(parents=True)
    (folder / "broken.json").write_text("{not json")
    (folder / "foreign.json").write_text(json.dumps({"format": "other"}))
    (folder / "bad.json").write_text(
        json.dumps({"format": "jupyter_brrr.peaks", "version": 1, "peaks": {"device": "X"}})
    )
    assert pk.cached_peaks("NVIDIA H200") is None
    pk.cache_peaks(measured_h200())
    assert pk.cached_peaks("NVIDIA H200") == measured_h200()


def test_cache_stores_measured_peaks_only(cache):
    with pytest.raises(ValueError, match="measured"):
        pk.cache_peaks(known_peaks("NVIDIA H200"))


# --- without CUDA ----------------------------------------------------------------------------


def test_measure_peaks_without_cuda_raises_clearly(cache, no_cuda):
    with pytest.raises(RuntimeError, match=r"measure_peaks needs a CUDA GPU; none was found"):
        pk.measure_peaks()
    assert not cache.exists()


def test_peaks_for_unknown_gpu_without_cuda(cache, no_cuda):
    got, note = pk.peaks_for("NVIDIA B200")
    assert got is None
    assert "Unknown GPU 'NVIDIA B200'" in note
    assert "no CUDA GPU here" in note
    assert "jupyter_brrr.measure_peaks()" in note  # what to do


def test_peaks_for_unknown_gpu_uses_its_cache_entry(cache, no_cuda):
    p = Peaks.from_dict({**measured_h200().to_dict(), "device": "NVIDIA B200"})
    pk.cache_peaks(p)
    got, note = pk.peaks_for("NVIDIA B200")
    assert got == p
    assert "measured" in note


def test_peaks_for_cpu():
    got, note = pk.peaks_for("CPU")
    assert got is None and "No GPU" in note


def test_tf32_switch_restores_every_setting():
    import torch

    matmul = torch.backends.cuda.matmul
    before = torch.get_float32_matmul_precision()
    new_before = getattr(matmul, "fp32_precision", None)
    with pk._tf32_matmuls(torch, True):
        assert matmul.allow_tf32 is True
    with pk._tf32_matmuls(torch, False):
        assert matmul.allow_tf32 is False
    assert torch.get_float32_matmul_precision() == before
    assert getattr(matmul, "fp32_precision", None) == new_before


def test_importing_the_module_does_not_import_torch():
    # Load peaks.py on its own (the package __init__ may import other modules).
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('peaks_alone', {str(PEAKS_FILE)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules['peaks_alone'] = module\n"
        "spec.loader.exec_module(module)\n"
        "assert module.lookup('NVIDIA H200') is not None\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"


# --- nothing user-local in a report ------------------------------------------------------------


@pytest.fixture
def home_cache(tmp_path, monkeypatch):
    """A home folder with a name that must never reach a report, holding the peaks cache."""
    home = tmp_path / "home-of-alice"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("JUPYTER_BRRR_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert home in pk.cache_dir().parents
    return home


def test_peaks_notes_name_no_local_folder(home_cache, no_cuda):
    _, unknown = pk.peaks_for("NVIDIA B200")
    assert "jupyter_brrr.costs.peaks.cache_dir()" in unknown  # where to look, without the path
    pk.cache_peaks(measured_h200())
    _, cached = pk.peaks_for("NVIDIA H200")
    assert "from jupyter_brrr's cache of measured peaks" in cached
    for note in (unknown, cached):
        assert "home-of-alice" not in note and "/.cache" not in note


def test_a_measurement_that_cannot_be_cached_still_serves_and_names_no_folder(
    home_cache, monkeypatch
):
    """An unknown GPU present here is measured; a read-only cache folder loses only the cache."""
    measured = Peaks.from_dict({**measured_h200().to_dict(), "device": "NVIDIA X9"})
    monkeypatch.setattr(pk, "_local_gpu_named", lambda name: (0, None))
    monkeypatch.setattr(pk, "measure_peaks", lambda index, cache=True: measured)

    def read_only(peaks, torch_version=None):
        raise PermissionError(13, "Permission denied", str(pk.cache_dir() / "peaks" / "x.json"))

    monkeypatch.setattr(pk, "cache_peaks", read_only)
    got, note = pk.peaks_for("NVIDIA X9")
    assert got == measured
    assert "could not be cached (Permission denied)" in note and "home-of-alice" not in note


def test_report_json_html_text_and_files_hold_no_home_folder(home_cache, no_cuda, tmp_path):
    pk.cache_peaks(measured_h200())
    reports = [
        load_report(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz"),  # peaks from the cache
        load_report(DATA / "gpt2_fwd_bf16_b8_s1024.json.gz", device="Some GPU"),  # unknown
    ]
    assert any("cache of measured peaks" in n for n in reports[0].notes)
    assert any("Unknown GPU 'Some GPU'" in n for n in reports[1].notes)
    for i, report in enumerate(reports):
        bundle = report._repr_mimebundle_()
        texts = [report.to_json(), repr(report), *(str(v) for v in bundle.values())]
        written = report.save(tmp_path / f"r{i}.json")
        texts += [p.read_bytes().decode("latin-1") for p in written if p.suffix == ".json"]
        for text in texts:
            assert "home-of-alice" not in text and str(home_cache) not in text
