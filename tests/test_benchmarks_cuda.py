"""Smoke test of benchmarks/cuda.py on device "cuda-emu" (the CUDA kernels on the CPU): its
--quick run finishes, writes every section into the JSON, and the values are sane (positive
rates, outputs agreeing with numpy, onnxruntime and PyTorch). With PyTorch installed the run
compares against PyTorch on the CPU (--torch-on-cpu), so the comparison code a GPU run takes
is run too. The timings themselves are not checked (a shared machine). ResNet-50 is left out
(slow on the emulator); so is the GPU-only arithmetic, which is checked below on
synthetic numbers: the float32 peak from the attributes and the tables' goal lines."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.stage3, pytest.mark.device("cuda-emu")]

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "cuda.py"
SECTIONS = ("gemm", "roofline", "bandwidth", "conv", "onnx", "gpt", "mnist")
HAS_TORCH = importlib.util.find_spec("torch") is not None
# float32 results against float64 references: a product or sum of at most a few hundred terms,
# each rounding once (unit roundoff 6e-8), relative to the largest |value|; well above what
# the kernels' summation orders give, well below what a wrong index would
FLOAT32_REL = 1e-5


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("cuda_bench") / "cuda.json"
    command = [sys.executable, str(SCRIPT), "--device", "cuda-emu", "--quick", "--onnx-models", "unet",
               "--out", str(out)] + (["--torch-on-cpu"] if HAS_TORCH else [])
    result = subprocess.run(command, cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert out.with_suffix(".md").exists()
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def bench():
    """benchmarks/cuda.py as a module (its functions, no run)."""
    spec = importlib.util.spec_from_file_location("bench_cuda", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_section_is_recorded_without_error(report):
    assert report["sections"] == list(SECTIONS)
    for section in SECTIONS:
        assert section in report and "failed" not in report[section], (section, report.get(section))
        assert report["section_seconds"][section] >= 0
    assert report["torch_device"] == ("cpu" if HAS_TORCH else None)
    assert report["complete"] is True


def test_gemm_points_and_their_intensity(report):
    gemm = report["gemm"]
    assert {"naive", "tiled"} <= set(gemm["gflops"])
    for variant, by_size in gemm["gflops"].items():
        assert set(by_size) == {str(n) for n in gemm["sizes"]}
        assert all(g > 0 for g in by_size.values())
        assert max(gemm["error"][variant].values()) < FLOAT32_REL, variant
    for n, intensity in gemm["intensity"].items():
        assert intensity == pytest.approx(2 * int(n) ** 3 / (3 * int(n) ** 2 * 4))


def test_roofline_has_the_copy_bandwidth_and_every_gemm_point(report):
    roof = report["roofline"]
    assert roof["copy_bandwidth_gbs"] > 0
    assert roof["properties"]["source"] is None and roof["peak_gflops"] is None     # the emulator is no GPU
    points = {(p["variant"], p["n"]) for p in roof["gemm_points"]}
    assert points == {(v, int(n)) for v, by_size in report["gemm"]["gflops"].items() for n in by_size}
    for p in roof["gemm_points"]:
        assert p["intensity"] == pytest.approx(p["n"] / 6) and p["gflops"] > 0


def test_bandwidth_rows_are_positive_and_checked(report):
    result = report["bandwidth"]
    engines = ["tracegrad"] + (["torch"] if HAS_TORCH else [])
    assert result["engines"] == engines and result["copy_gbs"] > 0
    ops = {row["op"] for row in result["rows"]}
    assert ops == {"copy", "add", "mul", "exp", "sum", "sum(dim=-1)", "sum(dim=0)", "softmax(dim=-1)"}
    checked = set()
    for row in result["rows"]:
        assert "failed" not in row, row
        for engine in engines:
            assert row["gbs"][engine] > 0
            assert row["of_copy"][engine] == pytest.approx(row["gbs"][engine] / result["copy_gbs"])
        if row["error"] is not None:
            assert row["error"] < FLOAT32_REL, row
            checked.add(row["op"])
    assert checked == ops                  # every op checked against numpy at its first size


def test_conv_outputs_agree_and_rates_are_positive(report):
    cases = report["conv"]["cases"]
    assert [c["backward"] for c in cases] == [False, True]
    for case in cases:
        assert case["gflops"]["tracegrad"] > 0
        assert case["error"]["tracegrad"] < FLOAT32_REL
        if HAS_TORCH:
            assert case["gflops"]["cudnn-fp32"] > 0 and case["error"]["cudnn-fp32"] < FLOAT32_REL
            assert case["ratio"] == pytest.approx(case["gflops"]["tracegrad"] / case["gflops"]["cudnn-fp32"])


def test_onnx_unet_agrees_with_onnxruntime(report):
    onnx = report["onnx"]
    assert set(onnx["models"]) == {"unet"}
    unet = onnx["models"]["unet"]
    assert unet["input"] == [1, 1, 32, 32]
    assert all(ms > 0 for ms in unet["ms"].values())
    # a dozen float32 convolutions deep, outputs of order 1: differences of a few roundings
    assert unet["diff"]["tracegrad"] < 1e-4 * max(unet["ort_scale"], 1.0)
    if HAS_TORCH:      # the PyTorch twin has the same weights: the same network
        assert unet["diff"]["torch"] < 1e-4 * max(unet["ort_scale"], 1.0)


def test_training_sections(report):
    assert all(s > 0 for s in report["mnist"]["seconds"].values())
    (toy,) = report["gpt"].values()
    engines = toy["engines"]
    assert engines["tracegrad"]["tokens_per_second"] > 0
    if HAS_TORCH:      # same initial weights and batch: the same first loss
        assert engines["pytorch"]["first_loss"] == pytest.approx(engines["tracegrad"]["first_loss"], rel=1e-4)


def test_fp32_peak_from_attributes(bench):
    # H100 SXM: 132 SMs, 1980 MHz boost, sm_90 (128 lanes): NVIDIA's data sheet gives 67 TFLOPS
    assert bench.fp32_peak_gflops(132, 1_980_000, (9, 0)) == (pytest.approx(132 * 128 * 2 * 1.98), 128)
    # A100: 108 SMs, 1410 MHz, sm_80 (64 lanes): 19.5 TFLOPS
    assert bench.fp32_peak_gflops(108, 1_410_000, [8, 0])[0] == pytest.approx(19491.84)
    assert bench.fp32_peak_gflops(10, 1_000_000, (1, 0)) == (None, None)
    for reported in (1.98e9, 1_980_000, 1980):      # Hz, kHz (CUDA's unit), MHz
        assert bench.clock_khz(reported) == pytest.approx(1_980_000)


def test_own_variants_against_cublas(bench):
    gflops = {"naive": {4096: 2000.0}, "tiled": {4096: 20000.0}, "vectorized": {4096: 30000.0},
              "cublas": {4096: 50000.0}, "cublas-tf32": {4096: 200000.0}}
    variants = list(gflops)
    result = bench.own_against_cublas(gflops, variants, 4096)
    assert result["own_over_cublas"] == {"naive": 0.04, "tiled": 0.4, "vectorized": 0.6}
    assert result["best_own"] == "vectorized" and result["best_over_cublas"] == 0.6
    assert result["tiled_over_cublas"] == 0.4
    assert bench.own_against_cublas({"tiled": {4096: 1.0}}, ["naive", "tiled"], 4096) == {}
    table = bench.format_gemm({"sizes": [4096], "gflops": gflops, "error": {v: {4096: 1e-7} for v in variants},
                               "goal": 0.5, "goal_size": 4096, **result})
    assert "best of ours: vectorized at 0.60 x cuBLAS (goal >= 0.50: met)" in table


def test_tables_of_a_gpu_run_format(bench):
    """The tables with what only a GPU run gives (a peak, PyTorch on the GPU, a failed section)."""
    props = {"sm_count": 132, "clock_khz": 1_980_000.0, "capability": [9, 0], "source": "torch"}
    roof = {"properties": props, "peak_gflops": 66908.16, "fp32_lanes_per_sm": 128, "copy_elements": 1 << 26,
            "copy_bandwidth_gbs": 2900.0, "ridge_intensity": 66908.16 / 2900.0,
            "gemm_points": [{"variant": "cublas", "n": 4096, "intensity": 4096 / 6, "gflops": 50000.0,
                             "of_roof": 50000 / 66908.16},
                            {"variant": "cublas-tf32", "n": 4096, "intensity": 4096 / 6, "gflops": 3e5,
                             "of_roof": None}]}
    text = bench.format_roofline(roof)
    assert "132 SMs x 128 FP32 lanes x 2 flops x 1.980 GHz" in text and "66,908 GFLOPS" in text
    assert "0.75 of the roof" in text
    onnx = {"ort_version": "1", "ort_threads": 16, "models": {
        "resnet50": {"failed": "CudaError: out of memory"},
        "unet": {"input": [1, 1, 256, 256], "ms": {"tracegrad": 2.0, "onnxruntime": 4.0, "torch": 1.0},
                 "diff": {"tracegrad": 1e-6, "torch": 2e-6}, "ort_scale": 1.0, "torch": "timed"}}}
    text = bench.format_onnx(onnx, "cuda")
    assert "resnet50  failed: CudaError: out of memory" in text and "(2.00x ort)" in text


def test_a_failing_section_is_recorded_and_the_others_still_run(bench, monkeypatch, tmp_path):
    def broken(*args):
        raise RuntimeError("no cuDNN today")
    monkeypatch.setattr(bench, "conv", broken)
    out = tmp_path / "cuda.json"
    bench.main(["--device", "cuda-emu", "--quick", "--no-torch", "--only", "roofline", "conv", "--out", str(out)])
    report = json.loads(out.read_text())
    assert report["conv"] == {"failed": "RuntimeError: no cuDNN today"}
    assert report["roofline"]["copy_bandwidth_gbs"] > 0
    assert "(d) conv2d: failed: RuntimeError: no cuDNN today" in out.with_suffix(".md").read_text()


def test_a_run_cut_short_keeps_the_sections_it_finished(bench, monkeypatch, tmp_path):
    def cut(*args):
        raise KeyboardInterrupt          # as the end of a GPU lease would end it
    monkeypatch.setattr(bench, "conv", cut)
    out = tmp_path / "cuda.json"
    with pytest.raises(KeyboardInterrupt):
        bench.main(["--device", "cuda-emu", "--quick", "--no-torch", "--only", "roofline", "conv", "--out", str(out)])
    report = json.loads(out.read_text())
    assert report["complete"] is False and report["roofline"]["copy_bandwidth_gbs"] > 0 and "conv" not in report
