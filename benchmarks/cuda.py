"""Device "cuda" on one GPU: its kernels against cuBLAS, cuDNN, PyTorch and onnxruntime on the
same machine (chapter 6b, "06b_cuda": sections 5 and 8).

Sections, in the order they run (--only picks some; the JSON records each section's seconds):

(a) gemm: SGEMM, float32 (n, n) @ (n, n) for n = 1024, 2048, 4096, 8192: each
    matmul variant of the device (stage3_native/cuda/matmul.cu: "naive" up to 4096, where
    it already takes a while; "tiled" and any other kernel of ours; "cublas" and
    "cublas-tf32" where libcublas loads), and PyTorch's torch.matmul on the same GPU (plain
    float32, and TF32 allowed) when torch.cuda is available. GFLOPS = 2 n^3 / seconds per
    product. A timed block is the products of about 0.25 s queued back to back between two
    synchronizations (backend.synchronize(), or torch.cuda.synchronize()), so the Python
    call of one product overlaps the GPU's work on the previous one, as in a training step;
    each figure is the median of --rounds blocks. Each variant's product is checked against
    numpy's float64 one on 16 rows. Goal: the best of our own kernels (every variant but
    the cublas ones, whatever their names) >= 0.50 x cuBLAS float32 at n = 4096; each one's
    ratio is reported.
(b) roofline: the GPU's float32 peak = SMs x FP32 lanes per SM x 2 flops x clock,
    the attributes from the backend when it exposes them, else PyTorch, else the driver
    library (the JSON says which), the lanes from FP32_LANES_BY_CAPABILITY; the measured
    copy bandwidth (Tensor.clone of 2^26 float32 through the backend: bytes read + written
    per second); and each GEMM point of (a) with its arithmetic intensity 2 n^3 / (3 n^2 x 4
    bytes) and its fraction of the roof min(peak, intensity x bandwidth).
(c) bandwidth: element-wise and reduction kernels through the Tensor (the
    backend's ops, as a model calls them): copy, add, mul, exp and sum of all elements on
    (N,) for N = 2^24, 2^25, 2^26; sum over dim -1 and dim 0 and softmax over rows of
    (4096, 4096) and (16384, 4096) float32. GB/s = the bytes the op must move (inputs read,
    output written, once) / time, and its fraction of (g)'s copy bandwidth; PyTorch's same
    ops on the GPU beside them. Each op is checked against numpy (float64) at the first size.
(d) conv: tracegrad's F.conv2d on the device, forward and forward + backward,
    at benchmarks/conv.py's shapes, against torch.nn.functional.conv2d on the GPU (cuDNN,
    cudnn.benchmark False: the default users get), with TF32 as PyTorch allows it by default
    and with TF32 off; GFLOPS (as conv.py counts them) and ratio. Outputs are checked
    against numpy's float64 convolution.
(e) onnx: the light ResNet-50 of the onnx wheel (1x3x224x224) and
    benchmarks/onnx.py's U-net (1x1x256x256) through stage4_models.onnx.InferenceSession on
    the device, against onnxruntime's CPU provider on os.cpu_count() threads, and, for the
    U-net, its PyTorch twin (torch_unet_twin below, the same weights) on the GPU: ms per
    run, and each output's largest difference from onnxruntime's. ResNet-50 has no PyTorch
    twin in this repository: onnxruntime only.
(f) gpt: GPT training, benchmarks/gpt.py's "char" and "tiny" configurations
    (same model, batch, AdamW, random batches): tracegrad on the device against gpt.py's
    PyTorch twin of the model in eager mode on the same GPU, same initial weights and
    batches. Warm-up steps, then --rounds rounds of --steps steps per engine (the engine
    that goes first alternates), each block ending with a synchronization; tokens/s from
    the median block. Goal: at least half PyTorch's throughput on the char-GPT step.
(g) mnist [the longest: 60,000 steps on each device; --mnist-steps N shortens it]: stage4's training loop
    (``python -m stage4_models.mnist train``: 60,000 SGD steps of 32, the thesis's loss, the
    loss read back every step) on the device and on device "cpu": wall time of the loop.
    The MNIST files come from the usual cache; where they are missing, random images of the
    same shapes stand in (the time does not depend on the pixels; the accuracy is then
    meaningless and not reported).

A section that fails is recorded as {"failed": "..."} in the JSON and a line in the table; the
others still run and the files are still written (section_seconds: each one's time). The
files are rewritten after each section ("complete": false until the last one is done), so a
run cut short keeps what it measured.
Results are printed and written, with the GPU's name, to benchmarks/results/cuda.json (the
chapter's plots read it) and cuda.md (the printed tables). --quick runs tiny sizes as a
smoke test, on device "cuda-emu" too (the kernels on the CPU: no GPU needed; the U-net at
32x32, ResNet-50 at full size); it writes files only when --out is given. --torch-on-cpu
runs the PyTorch comparisons on the CPU instead, to test that code where there is no GPU.
On device "cuda" without a GPU the script stops at once, saying why.

    python benchmarks/cuda.py [--device cuda] [--quick] [--only gemm roofline bandwidth conv onnx gpt mnist]
                              [--rounds 5] [--steps N] [--mnist-steps N] [--onnx-models resnet50 unet]
                              [--out PATH] [--no-torch] [--torch-on-cpu]
"""
import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
# this folder (first on the path when this file runs as a script) goes last: its gpt.py,
# training.py and conv.py are imported, but its stage2_tensor.py and onnx.py must not shadow
# the package and the onnx wheel
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE)]
import stage2_tensor as tg  # noqa: E402
import stage3_native  # noqa: E402,F401  (registers "cpu", "cuda", "cuda-emu")
from stage2_tensor import backend, dtypes  # noqa: E402
from stage2_tensor.backend import View  # noqa: E402
from stage3_native.cuda import backend as cuda_backend  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
GEMM_SIZES = (1024, 2048, 4096, 8192)
NAIVE_MAX = 4096                  # naive at 8192 alone would take minutes
GOAL_SIZE, GEMM_GOAL = 4096, 0.50
GPT_GOAL = 0.5
MNIST_STEPS = 60000
COPY_ELEMENTS = 1 << 26           # 256 MiB of float32: far beyond any GPU's L2 cache (50 MiB on an H100)
VECTOR_SIZES = (1 << 24, 1 << 25, 1 << 26)
MATRIX_SHAPES = ((4096, 4096), (16384, 4096))
ONNX_MODELS = ("resnet50", "unet")
UNET_SIZE = 256
QUICK = {"gemm": (64, 160), "mnist_steps": 30, "gpt_steps": 1, "copy": 1 << 16, "vectors": (1 << 12, 1 << 14),
         "matrices": ((64, 256), (256, 64)), "conv": {"tiny (2, 3, 10, 10) -> 4, pad 1": (2, 3, 10, 10, 4, 3, 1)},
         "unet_size": 32}
SECTIONS = ("gemm", "roofline", "bandwidth", "conv", "onnx", "gpt", "mnist")   # the longest last
BLOCK_SECONDS = 0.25              # a timed block of products lasts about this long
TORCH_DEVICE = "cuda"             # where PyTorch runs: "cpu" only with --torch-on-cpu (a test of this code)
# FP32 lanes (CUDA cores) per multiprocessor by compute capability, from the throughput table of
# NVIDIA's CUDA C++ Programming Guide: each does one fused multiply-add (2 flops) per clock.
FP32_LANES_BY_CAPABILITY = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
                            (9, 0): 128, (10, 0): 128, (12, 0): 128}


def torch_cuda():
    """torch, when it is importable and sees a GPU; else None."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def torch_synchronize(torch):
    """PyTorch's synchronization on TORCH_DEVICE (nothing to wait for on the CPU)."""
    return torch.cuda.synchronize if TORCH_DEVICE == "cuda" else (lambda: None)


def error_text(err):
    """A section's failure as the JSON and the table record it."""
    return f"{type(err).__name__}: {err}"


# ---- (a) SGEMM ------------------------------------------------------------------------------
def timed_blocks(call, synchronize, rounds, reps):
    """Median seconds per call over `rounds` blocks of `reps` calls, each block between two
    synchronizations."""
    per_call = []
    for _ in range(rounds):
        synchronize()
        start = time.perf_counter()
        for _ in range(reps):
            call()
        synchronize()
        per_call.append((time.perf_counter() - start) / reps)
    return statistics.median(per_call)


def reps_for(call, synchronize, limit=50):
    """How many calls fill a block of about BLOCK_SECONDS (one call timed, after a warm-up)."""
    call()
    synchronize()
    start = time.perf_counter()
    call()
    synchronize()
    return max(1, min(limit, int(BLOCK_SECONDS / max(time.perf_counter() - start, 1e-6))))


def gemm(be, sizes, rounds, torch):
    """{"gflops": {variant: {n: GFLOPS}}, "error": {variant: {n: largest relative error}}}"""
    f32 = dtypes.float32
    rng = np.random.default_rng(0)
    gflops, errors = {}, {}
    saved = be.matmul_variant
    for n in sizes:
        host_a = rng.standard_normal((n, n), dtype=np.float32)
        host_b = rng.standard_normal((n, n), dtype=np.float32)
        a = View(be.from_bytes(host_a.tobytes(), f32), (n, n), (n, 1), 0, f32)
        b = View(be.from_bytes(host_b.tobytes(), f32), (n, n), (n, 1), 0, f32)
        rows = rng.choice(n, size=min(16, n), replace=False)
        expected = host_a[rows].astype(np.float64) @ host_b.astype(np.float64)
        scale = np.abs(host_a[rows]).astype(np.float64) @ np.abs(host_b).astype(np.float64)
        flops = 2.0 * n ** 3
        for variant in be.matmul_variants():
            if variant == "naive" and n > NAIVE_MAX:
                continue
            be.matmul_variant = variant
            out = be.matmul(a, b, f32)
            got = be.as_numpy(View(out, (n, n), (n, 1), 0, f32))[rows].astype(np.float64)
            errors.setdefault(variant, {})[n] = float(np.max(np.abs(got - expected) / scale))
            call = lambda a=a, b=b: be.matmul(a, b, f32)                 # noqa: E731
            seconds = timed_blocks(call, be.synchronize, rounds, reps_for(call, be.synchronize))
            gflops.setdefault(variant, {})[n] = flops / seconds / 1e9
            print(f"    n={n:5} {variant:12} {gflops[variant][n]:10.1f} GFLOPS", flush=True)
        if torch is not None:
            sync = torch_synchronize(torch)
            ta, tb = torch.from_numpy(host_a).to(TORCH_DEVICE), torch.from_numpy(host_b).to(TORCH_DEVICE)
            for name, tf32 in (("torch", False), ("torch-tf32", True)):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                call = lambda ta=ta, tb=tb: torch.matmul(ta, tb)         # noqa: E731
                got = call()[torch.from_numpy(rows).to(TORCH_DEVICE)].double().cpu().numpy()
                errors.setdefault(name, {})[n] = float(np.max(np.abs(got - expected) / scale))
                seconds = timed_blocks(call, sync, rounds, reps_for(call, sync))
                gflops.setdefault(name, {})[n] = flops / seconds / 1e9
                print(f"    n={n:5} {name:12} {gflops[name][n]:10.1f} GFLOPS", flush=True)
            torch.backends.cuda.matmul.allow_tf32 = False
        a = b = ta = tb = None                                   # free the GPU memory of this n
        be.empty_cache()
    be.matmul_variant = saved
    result = {"sizes": list(sizes), "gflops": gflops, "error": errors, "goal": GEMM_GOAL, "goal_size": GOAL_SIZE,
              # flops per byte of the compulsory traffic (a and b read, the product written, once each)
              "intensity": {n: gemm_intensity(n) for n in sizes}}
    result.update(own_against_cublas(gflops, be.matmul_variants(), GOAL_SIZE))
    return result


def own_against_cublas(gflops, variants, size):
    """Each of our own matmul variants' GFLOPS over cuBLAS's float32 at n = size (every variant
    but the cublas* ones, whatever their names), and the best of them; {} without cuBLAS."""
    cublas = gflops.get("cublas", {}).get(size)
    own = {v: gflops[v][size] / cublas for v in variants
           if not v.startswith("cublas") and size in gflops.get(v, {})} if cublas else {}
    if not own:
        return {}
    best = max(own, key=own.get)
    result = {"own_over_cublas": own, "best_own": best, "best_over_cublas": own[best]}
    if "tiled" in own:
        result["tiled_over_cublas"] = own["tiled"]
    return result


def format_gemm(result):
    sizes = result["sizes"]
    lines = ["(a) SGEMM float32 (n, n) @ (n, n): GFLOPS, median of timed blocks of back-to-back products",
             f"  {'':14}" + "".join(f"{f'n={n}':>11}" for n in sizes) + f"{'max rel. error':>17}"]
    for name, by_size in result["gflops"].items():
        cells = "".join(f"{by_size[n]:11.1f}" if n in by_size else f"{'-':>11}" for n in sizes)
        lines.append(f"  {name:14}{cells}{max(result['error'][name].values()):17.1e}")
    if "own_over_cublas" in result:
        own = result["own_over_cublas"]
        lines.append(f"  our variants / cuBLAS float32 at n={result['goal_size']}: "
                     + ", ".join(f"{v} {r:.2f}" for v, r in own.items()))
        ratio = result["best_over_cublas"]
        lines.append(f"  best of ours: {result['best_own']} at {ratio:.2f} x cuBLAS "
                     f"(goal >= {result['goal']:.2f}: {'met' if ratio >= result['goal'] else 'not met'})")
    return "\n".join(lines)


# ---- (b) roofline ----------------------------------------------------------------------------
def clock_khz(value):
    """A clock rate in kHz, whichever unit the source gives (CUDA's attribute is in kHz; a GPU
    runs at 0.3 to 4 GHz, so the size of the number says its unit: Hz, kHz or MHz)."""
    value = float(value)
    return value / 1e3 if value > 1e8 else value if value > 1e5 else value * 1e3


def driver_properties():
    """(SMs, clock in kHz, (major, minor)) of GPU 0 from NVIDIA's driver library
    (cuDeviceGetAttribute), without PyTorch. Raises OSError or RuntimeError."""
    import ctypes
    driver = ctypes.CDLL(cuda_backend.DRIVER)
    # CUdevice_attribute: MULTIPROCESSOR_COUNT 16, CLOCK_RATE 13 (kHz), COMPUTE_CAPABILITY_MAJOR 75, _MINOR 76
    device, value = ctypes.c_int(), ctypes.c_int()
    for call, args in (("cuInit", (0,)), ("cuDeviceGet", (ctypes.byref(device), 0))):
        if getattr(driver, call)(*args):
            raise RuntimeError(f"{call} failed")
    values = []
    for attribute in (16, 13, 75, 76):
        if driver.cuDeviceGetAttribute(ctypes.byref(value), attribute, device):
            raise RuntimeError(f"cuDeviceGetAttribute({attribute}) failed")
        values.append(value.value)
    return values[0], float(values[1]), (values[2], values[3])


def device_properties(be, device):
    """{"sm_count", "clock_khz", "capability": [major, minor], "source"} of the GPU: from the
    backend when it has device_properties() (returning those three), else from PyTorch
    (torch.cuda.get_device_properties, when torch sees the GPU), else from the driver
    library; {"source": None, "why": ...} when none can say (device cuda-emu: no GPU)."""
    failures = []
    if hasattr(be, "device_properties"):
        try:
            p = be.device_properties()
            return {"sm_count": int(p["sm_count"]), "clock_khz": clock_khz(p["clock_khz"]),
                    "capability": list(p["capability"]), "source": "backend.device_properties()"}
        except Exception as err:
            failures.append(f"backend: {error_text(err)}")
    if device != "cuda":
        return {"source": None, "why": f"device {device!r} is not a GPU", "failures": failures}
    torch = torch_cuda()
    if torch is not None:
        try:
            p = torch.cuda.get_device_properties(0)
            return {"sm_count": int(p.multi_processor_count), "clock_khz": clock_khz(p.clock_rate),
                    "capability": [p.major, p.minor], "source": "torch.cuda.get_device_properties"}
        except Exception as err:
            failures.append(f"torch: {error_text(err)}")
    try:
        sms, clock, capability = driver_properties()
        return {"sm_count": sms, "clock_khz": clock_khz(clock), "capability": list(capability),
                "source": "cuDeviceGetAttribute (driver library)"}
    except Exception as err:
        failures.append(f"driver: {error_text(err)}")
    return {"source": None, "why": "; ".join(failures), "failures": failures}


def fp32_peak_gflops(sm_count, clock_khz, capability):
    """(float32 peak GFLOPS, FP32 lanes per SM): SMs x lanes x 2 flops (a fused multiply-add)
    x clock; (None, None) for a compute capability not in FP32_LANES_BY_CAPABILITY."""
    lanes = FP32_LANES_BY_CAPABILITY.get(tuple(capability))
    if lanes is None:
        return None, None
    return sm_count * lanes * 2 * clock_khz / 1e6, lanes


def gemm_intensity(n):
    """Flops per byte of an (n, n) @ (n, n) float32 product: 2 n^3 over a and b read and the
    product written once each (3 n^2 x 4 bytes), the least traffic it can have."""
    return 2.0 * n ** 3 / (3 * n * n * 4)


def copy_bandwidth(be, device, n, rounds):
    """GB/s of the device-to-device copy of n float32 through the backend (Tensor.clone: the
    copy kernel of elementwise.cu), counting the bytes read and the bytes written."""
    with tg.no_grad():
        x = tg.ones(n, device=device)
        call = lambda: x.clone()                                            # noqa: E731
        seconds = timed_blocks(call, be.synchronize, rounds, reps_for(call, be.synchronize))
    return 2 * 4 * n / seconds / 1e9


def roofline(be, device, gemm_result, n, rounds):
    """{"properties", "peak_gflops", "fp32_lanes_per_sm", "copy_bandwidth_gbs", "ridge_intensity",
    "gemm_points": [{"variant", "n", "intensity", "gflops", "of_roof"}]}"""
    props = device_properties(be, device)
    peak = lanes = None
    if props["source"] is not None:
        peak, lanes = fp32_peak_gflops(props["sm_count"], props["clock_khz"], props["capability"])
    bandwidth = copy_bandwidth(be, device, n, rounds)
    result = {"properties": props, "peak_gflops": peak, "fp32_lanes_per_sm": lanes,
              "lanes_table": "FP32_LANES_BY_CAPABILITY (NVIDIA's CUDA C++ Programming Guide)",
              "copy_elements": n, "copy_bandwidth_gbs": bandwidth,
              "ridge_intensity": peak / bandwidth if peak else None, "gemm_points": []}
    for variant, by_size in ((gemm_result or {}).get("gflops") or {}).items():
        for size, gflops in by_size.items():
            ai = gemm_intensity(int(size))
            # the float32 roof: TF32 runs on the tensor cores, whose peak is higher
            roof = min(peak, ai * bandwidth) if peak and "tf32" not in variant else None
            result["gemm_points"].append({"variant": variant, "n": int(size), "intensity": ai, "gflops": gflops,
                                          "of_roof": gflops / roof if roof else None})
    print(f"    peak {peak or 0:.0f} GFLOPS ({props['source'] or props['why']}), copy {bandwidth:.1f} GB/s",
          flush=True)
    return result


def format_roofline(result):
    props = result["properties"]
    lines = ["(b) Roofline: float32 peak from the GPU's attributes, copy bandwidth measured"]
    if result["peak_gflops"]:
        lines.append(f"  {props['sm_count']} SMs x {result['fp32_lanes_per_sm']} FP32 lanes x 2 flops x "
                     f"{props['clock_khz'] / 1e6:.3f} GHz (compute capability {props['capability'][0]}."
                     f"{props['capability'][1]}; from {props['source']}) = {result['peak_gflops']:,.0f} GFLOPS")
    elif props["source"]:
        lines.append(f"  peak: compute capability {props['capability']} is not in the table of FP32 lanes")
    else:
        lines.append(f"  peak: unknown ({props['why']})")
    lines.append(f"  copy of {result['copy_elements']:,} float32 (read + written): "
                 f"{result['copy_bandwidth_gbs']:,.1f} GB/s"
                 + (f"; ridge at {result['ridge_intensity']:.1f} flops/byte" if result["ridge_intensity"] else ""))
    for point in result["gemm_points"]:
        lines.append(f"  {point['variant']:12} n={point['n']:5}  {point['intensity']:7.1f} flops/byte "
                     f"{point['gflops']:10.1f} GFLOPS" + (f"  {point['of_roof']:.2f} of the roof" if point["of_roof"] else ""))
    return "\n".join(lines)


# ---- (c) element-wise and reduction bandwidth ------------------------------------------------
# name: (bytes moved per element of the input; the call, the same for tracegrad's Tensor and torch's)
VECTOR_OPS = {"copy": (2, lambda a, b: a.clone()), "add": (3, lambda a, b: a + b), "mul": (3, lambda a, b: a * b),
              "exp": (2, lambda a, b: a.exp()), "sum": (1, lambda a, b: a.sum())}
MATRIX_OPS = {"sum(dim=-1)": (lambda r, c: r * c + r, lambda m: m.sum(dim=-1)),
              "sum(dim=0)": (lambda r, c: r * c + c, lambda m: m.sum(dim=0)),
              "softmax(dim=-1)": (lambda r, c: 2 * r * c, lambda m: m.softmax(dim=-1))}
VECTOR_REFERENCE = {"copy": lambda a, b: a, "add": np.add, "mul": np.multiply, "exp": lambda a, b: np.exp(a),
                    "sum": lambda a, b: a.sum()}
MATRIX_REFERENCE = {"sum(dim=-1)": lambda m: m.sum(-1), "sum(dim=0)": lambda m: m.sum(0),
                    "softmax(dim=-1)": lambda m: np.exp(m - m.max(-1, keepdims=True))
                    / np.exp(m - m.max(-1, keepdims=True)).sum(-1, keepdims=True)}


def bandwidth(be, device, torch, vector_sizes, matrix_shapes, copy_gbs, rounds):
    """{"copy_gbs": the reference, "rows": [{"op", "shape", "bytes", "gbs": {engine: GB/s},
    "of_copy": {engine: fraction}, "error": largest relative error of ours against numpy}]}"""
    engines = {"tracegrad": (lambda a: tg.from_numpy(a, device=device), be.synchronize)}
    if torch is not None:
        engines["torch"] = (lambda a: torch.from_numpy(a).to(TORCH_DEVICE), torch_synchronize(torch))
    rng = np.random.default_rng(0)
    cases = []      # (op, shape, bytes, call of the inputs, numpy inputs, reference or None: not checked)
    for i, n in enumerate(vector_sizes):
        a, b = (rng.random(n, dtype=np.float32) for _ in range(2))
        for op, (per_element, call) in VECTOR_OPS.items():      # checked at the first size only (time)
            cases.append((op, (n,), 4 * per_element * n, call, (a, b), VECTOR_REFERENCE[op] if i == 0 else None))
    for i, (rows, cols) in enumerate(matrix_shapes):
        m = rng.random((rows, cols), dtype=np.float32)
        for op, (elements, call) in MATRIX_OPS.items():
            cases.append((op, (rows, cols), 4 * elements(rows, cols), call, (m,), MATRIX_REFERENCE[op] if i == 0
                          else None))
    result = {"copy_gbs": copy_gbs, "engines": list(engines), "rows": []}
    with tg.no_grad():
        for op, shape, nbytes, call, arrays, reference in cases:
            row = {"op": op, "shape": list(shape), "bytes": nbytes, "gbs": {}, "of_copy": {}, "error": None}
            for engine, (make, sync) in engines.items():
                try:
                    inputs = [make(a) for a in arrays]
                    if engine == "tracegrad" and reference is not None:
                        expected = np.asarray(reference(*(a.astype(np.float64) for a in arrays)))
                        got = call(*inputs).numpy().astype(np.float64)
                        row["error"] = float(np.max(np.abs(got - expected)) / max(np.max(np.abs(expected)), 1e-30))
                    go = lambda call=call, inputs=inputs: call(*inputs)               # noqa: E731
                    seconds = timed_blocks(go, sync, rounds, reps_for(go, sync))
                    row["gbs"][engine] = nbytes / seconds / 1e9
                    row["of_copy"][engine] = row["gbs"][engine] / copy_gbs
                except Exception as err:       # this op on this engine: the rest still run
                    row.setdefault("failed", {})[engine] = error_text(err)
                inputs = None
            result["rows"].append(row)
            print(f"    {op:16} {str(tuple(shape)):16} " + ", ".join(
                f"{e} {g:8.1f} GB/s ({row['of_copy'][e]:.2f} of copy)" for e, g in row["gbs"].items())
                + (f"  failed: {row['failed']}" if "failed" in row else ""), flush=True)
    be.empty_cache()
    return result


def format_bandwidth(result):
    engines = result["engines"]
    lines = [f"(c) Element-wise and reduction kernels: GB/s (bytes moved / time) and fraction of the copy's "
             f"{result['copy_gbs']:.1f} GB/s",
             f"  {'op':16} {'shape':16}" + "".join(f"{e + ' GB/s':>16} {'of copy':>8}" for e in engines)
             + f"{'rel. error':>12}"]
    for row in result["rows"]:
        lines.append(f"  {row['op']:16} {str(tuple(row['shape'])):16}" + "".join(
            f"{row['gbs'][e]:16.1f} {row['of_copy'][e]:8.2f}" if e in row["gbs"] else f"{'failed':>16} {'':8}"
            for e in engines) + (f"{row['error']:12.1e}" if row["error"] is not None else f"{'-':>12}")
            + "".join(f"\n    {e} failed: {why}" for e, why in row.get("failed", {}).items()))
    return "\n".join(lines)


# ---- (d) conv2d against cuDNN ----------------------------------------------------------------
def conv2d_reference(x, w, padding):
    """numpy's float64 convolution (stride 1, no dilation): windows times the kernel."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3))   # (N, C, Ho, Wo, k, k)
    return np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64), optimize=True)


def conv(be, device, torch, shapes, rounds):
    """[{"case", "shape", "backward", "gflop", "gflops": {engine: GFLOPS}, "ratio", "ratio_tf32",
    "error"}]: tracegrad's F.conv2d on the device against torch.nn.functional.conv2d on the GPU
    (cuDNN, cudnn.benchmark False: PyTorch's default), with TF32 as PyTorch allows it by
    default ("cudnn") and with TF32 off ("cudnn-fp32"); ratio = ours / cudnn-fp32."""
    import stage2_tensor.nn.functional as F
    rng = np.random.default_rng(0)
    sync = torch_synchronize(torch) if torch is not None else None
    saved = (torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32) if torch is not None else None
    cases = []
    try:
        if torch is not None:
            torch.backends.cudnn.benchmark = False
        for name, (n, c, h, w, o, k, p) in shapes.items():
            try:
                x = rng.standard_normal((n, c, h, w), dtype=np.float32)
                wt = (rng.standard_normal((o, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32)
                flops = 2 * n * o * (h + 2 * p - k + 1) * (w + 2 * p - k + 1) * c * k * k
                expected = conv2d_reference(x, wt, p)
                scale = max(float(np.max(np.abs(expected))), 1e-30)
                ours = [tg.from_numpy(a, device=device).requires_grad_() for a in (x, wt)]
                got = F.conv2d(*ours, padding=p).detach().numpy()
                error = {"tracegrad": float(np.max(np.abs(got - expected))) / scale}
                engines = {"tracegrad": (F.conv2d, ours, be.synchronize)}
                if torch is not None:
                    theirs = [torch.from_numpy(a).to(TORCH_DEVICE).requires_grad_() for a in (x, wt)]
                    for engine, tf32 in (("cudnn", saved[1]), ("cudnn-fp32", False)):
                        torch.backends.cudnn.allow_tf32 = tf32
                        got = torch.nn.functional.conv2d(*theirs, padding=p).detach().cpu().numpy()
                        error[engine] = float(np.max(np.abs(got - expected))) / scale
                        engines[engine] = (torch.nn.functional.conv2d, theirs, sync)
                for backward in (False, True):
                    case = {"case": name, "shape": [n, c, h, w, o, k, p], "backward": backward,
                            "gflop": flops * (3 if backward else 1) / 1e9, "gflops": {}, "error": error}
                    for engine, (conv2d, args, synchronize) in engines.items():
                        if torch is not None:
                            torch.backends.cudnn.allow_tf32 = saved[1] if engine == "cudnn" else False

                        def step(conv2d=conv2d, args=args, backward=backward):
                            y = conv2d(*args, padding=p)
                            if backward:
                                y.sum().backward()
                        seconds = timed_blocks(step, synchronize, rounds, reps_for(step, synchronize))
                        case["gflops"][engine] = case["gflop"] / seconds
                    if "cudnn-fp32" in case["gflops"]:
                        case["ratio"] = case["gflops"]["tracegrad"] / case["gflops"]["cudnn-fp32"]
                        case["ratio_tf32"] = case["gflops"]["tracegrad"] / case["gflops"]["cudnn"]
                    cases.append(case)
                    print(f"    {name}{', fwd+bwd' if backward else ''}: " + ", ".join(
                        f"{e} {g:.1f}" for e, g in case["gflops"].items()) + " GFLOPS", flush=True)
            except Exception as err:        # this shape: the others still run
                cases.append({"case": name, "shape": [n, c, h, w, o, k, p], "failed": error_text(err)})
                print(f"    {name}: failed: {error_text(err)}", flush=True)
            ours = theirs = engines = None      # noqa: F841  (the GPU memory of this shape, freed)
    finally:
        if torch is not None:
            torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32 = saved
    be.empty_cache()
    return {"cases": cases, "cudnn_benchmark": False,
            "torch_allow_tf32_default": saved[1] if saved else None}


def format_conv(result):
    lines = ["(d) conv2d float32 (benchmarks/conv.py's shapes): GFLOPS = 2 N C_out H_out W_out C_in k^2 / s "
             "(fwd+bwd: 3x); cuDNN without benchmark mode, with PyTorch's default TF32 "
             f"({result['torch_allow_tf32_default']}) and with TF32 off"]
    for case in result["cases"]:
        if "failed" in case:
            lines.append(f"  {case['case']:48} failed: {case['failed']}")
            continue
        label = case["case"] + (", fwd+bwd" if case["backward"] else "")
        lines.append(f"  {label:48} " + "  ".join(f"{e} {g:9.1f}" for e, g in case["gflops"].items())
                     + (f"   ours / cudnn-fp32 {case['ratio']:.2f}, / cudnn {case['ratio_tf32']:.2f}"
                        if "ratio" in case else "")
                     + "   rel. error " + ", ".join(f"{e} {v:.1e}" for e, v in case["error"].items()))
    return "\n".join(lines)


# ---- (e) ONNX inference ----------------------------------------------------------------------
def onnx_bench():
    """benchmarks/onnx.py, whose models and inputs section (e) runs, loaded by its path (as a
    module named onnx it would shadow the onnx package). It drops this folder from sys.path
    as it loads, and gpt.py and training.py are imported from there later: sys.path is put
    back as it was."""
    import importlib.util
    saved = list(sys.path)
    spec = importlib.util.spec_from_file_location("bench_onnx", HERE / "onnx.py")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved
    return module


def torch_unet_twin(torch, model):
    """stage4_models/unet/model.py's UNet written in PyTorch (same layer names), with `model`'s
    weights: the U-net on PyTorch's GPU. The model carries no torch twin of its own."""
    nn, Fn = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, c_in, c_out):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(c_in, c_out, 3, padding=1), nn.Conv2d(c_out, c_out, 3, padding=1)

        def forward(self, x):
            return Fn.relu(self.conv2(Fn.relu(self.conv1(x))))

    class UNet(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.down1, self.down2 = Block(1, c), Block(c, 2 * c)
            self.bottom = nn.Conv2d(2 * c, 2 * c, 3, padding=1)
            self.up2, self.up1 = nn.Conv2d(4 * c, 2 * c, 3, padding=1), nn.Conv2d(3 * c, c, 3, padding=1)
            self.head = nn.Conv2d(c, 1, 1)

        def forward(self, x):
            h, w = x.shape[2:]
            p = Fn.pad(x, (0, -w % 4, 0, -h % 4), mode="replicate")
            s1 = self.down1(p)
            s2 = self.down2(Fn.max_pool2d(s1, 2))
            b = Fn.relu(self.bottom(Fn.max_pool2d(s2, 2)))
            u2 = Fn.relu(self.up2(torch.cat([s2, Fn.interpolate(b, scale_factor=2, mode="nearest")], 1)))
            u1 = Fn.relu(self.up1(torch.cat([s1, Fn.interpolate(u2, scale_factor=2, mode="nearest")], 1)))
            return x - self.head(u1)[:, :, :h, :w]

    twin = UNet(model.down1.conv1.weight.shape[0])
    twin.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in model.state_dict().items()})
    return twin.eval()


def onnx_inference(be, device, torch, names, unet_size, rounds):
    """{"ort_threads", "ort_version", "models": {model: onnx_model's result, or {"failed"}}}: our
    InferenceSession on the device, onnxruntime's CPU provider on os.cpu_count() threads,
    and PyTorch on the GPU for the U-net (its twin above; ResNet-50 has no PyTorch twin here)."""
    import tempfile

    import onnxruntime
    threads = os.cpu_count()
    results = {"ort_threads": threads, "ort_version": onnxruntime.__version__, "models": {}}
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            try:
                results["models"][name] = onnx_model(be, device, torch, name, folder, unet_size, threads, rounds)
            except Exception as err:       # this model: the other still runs
                results["models"][name] = {"failed": error_text(err)}
                print(f"    {name}: failed: {error_text(err)}", flush=True)
            be.empty_cache()
    return results


def onnx_model(be, device, torch, name, folder, unet_size, threads, rounds):
    """{"input", "ms": {engine: ms per run}, "diff": {engine: largest |output - ort's|},
    "ort_scale": largest |ort output|, "torch": why PyTorch is or is not timed}."""
    import onnxruntime
    from stage4_models.onnx import InferenceSession
    bench = onnx_bench()
    if name == "resnet50":
        (path, x), twin = bench.light_resnet50(), None
    else:
        model = bench.unet_model()
        path, x = bench.export_unet(model, folder), bench.unet_input(unet_size)
        twin = torch_unet_twin(torch, model) if torch is not None else None
    ours = InferenceSession(path, device=device)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    options.log_severity_level = 3     # errors only: not its warnings about unused initializers
    ort = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feed = {ours.get_inputs()[0].name: x}
    engines = {"tracegrad": (lambda: ours.run(None, feed)[0], be.synchronize),
               "onnxruntime": (lambda: ort.run(None, feed)[0], lambda: None)}
    if twin is not None:
        twin = twin.to(TORCH_DEVICE)
        xt = torch.from_numpy(x).to(TORCH_DEVICE)

        def run_torch():
            with torch.no_grad():
                return twin(xt)
        engines["torch"] = (run_torch, torch_synchronize(torch))
    outputs = {e: np.asarray(call() if e != "torch" else call().cpu().numpy()) for e, (call, _) in engines.items()}
    result = {"input": list(x.shape), "ms": {}, "diff": {},
              "ort_scale": float(np.max(np.abs(outputs["onnxruntime"]))),
              "torch": ("timed (the twin in benchmarks/cuda.py)" if twin is not None else
                        "not timed: no PyTorch twin of this model here" if name == "resnet50" else
                        "not timed: no PyTorch on the GPU")}
    for engine, out in outputs.items():
        if engine != "onnxruntime":
            result["diff"][engine] = float(np.max(np.abs(out - outputs["onnxruntime"])))
    for engine, (call, sync) in engines.items():
        result["ms"][engine] = timed_blocks(call, sync, rounds, reps_for(call, sync, limit=20)) * 1e3
    print(f"    {name} {tuple(x.shape)}: " + ", ".join(f"{e} {ms:.2f} ms" for e, ms in result["ms"].items())
          + "; |out - ort| " + ", ".join(f"{e} {d:.1e}" for e, d in result["diff"].items()), flush=True)
    return result


def format_onnx(result, device):
    lines = [f"(e) ONNX inference, batch 1, float32: InferenceSession on {device!r}, onnxruntime "
             f"{result['ort_version']} CPU provider on {result['ort_threads']} threads, PyTorch on the GPU; ms per run"]
    for name, r in result["models"].items():
        if "failed" in r:
            lines.append(f"  {name:9} failed: {r['failed']}")
            continue
        ms, base = r["ms"], r["ms"]["onnxruntime"]
        lines.append(f"  {name:9} {str(tuple(r['input'])):18} " + "  ".join(
            f"{e} {t:8.2f}" + ("" if e == "onnxruntime" else f" ({base / t:.2f}x ort)") for e, t in ms.items()))
        lines.append(f"  {'':9} largest |output - onnxruntime's| (outputs up to {r['ort_scale']:.2g}): "
                     + ", ".join(f"{e} {d:.1e}" for e, d in r["diff"].items()) + f"; PyTorch {r['torch']}")
    return "\n".join(lines)


# ---- (g) MNIST -------------------------------------------------------------------------------
def mnist_data(quick):
    """({"train": (images, labels), "test": ...}, None), or random stand-ins of the same
    shapes and the reason the real files could not be read."""
    from stage4_models.mnist import data
    try:
        return {split: data.load(split, download=not quick) for split in ("train", "test")}, None
    except Exception as err:                            # missing, offline, corrupt: say which
        rng = np.random.default_rng(0)
        fake = {split: (rng.integers(0, 256, (size, 28, 28), dtype=np.uint8),
                        rng.integers(0, 10, size, dtype=np.uint8))
                for split, size in (("train", 60000), ("test", 10000))}
        return fake, f"{type(err).__name__}: {err}"


def mnist(device, steps, quick):
    from stage4_models.mnist.training import Config, train
    datasets, missing = mnist_data(quick)
    if missing:
        print(f"    MNIST not found ({missing}); timing on random images of the same shapes", flush=True)
    result = {"steps": steps, "batch": 32, "real_data": missing is None, "seconds": {}, "accuracy": {}}
    for name in (device, "cpu"):
        run = train(Config(optim="sgd", steps=steps, device=name), datasets, progress=False,
                    test_limit=1000 if quick else None)
        result["seconds"][name] = run.wall_seconds
        result["accuracy"][name] = run.accuracy if missing is None else None
        print(f"    {name:9} {run.wall_seconds:8.1f} s  {steps * 32 / run.wall_seconds:12,.0f} examples/s", flush=True)
    result["cpu_over_device"] = result["seconds"]["cpu"] / result["seconds"][device]
    return result


def format_mnist(result, device):
    seconds = result["seconds"]
    lines = [f"(g) MNIST, {result['steps']:,} SGD steps of {result['batch']}: wall time of the training loop"
             + ("" if result["real_data"] else " (random images: MNIST was not found)")]
    for name, s in seconds.items():
        accuracy = result["accuracy"][name]
        lines.append(f"  {name:9} {s:9.1f} s {result['steps'] * result['batch'] / s:12,.0f} examples/s"
                     + (f"   test accuracy {accuracy:.4f}" if accuracy is not None else ""))
    lines.append(f"  cpu time / {device} time: {result['cpu_over_device']:.2f}x")
    return "\n".join(lines)


# ---- (f) GPT ---------------------------------------------------------------------------------
class Engine:
    """A training step, the synchronization of its device, and what it measured."""

    def __init__(self, name, step, synchronize):
        self.name, self.step, self.synchronize = name, step, synchronize
        self.losses, self.block_seconds, self.i = [], [], 0

    def run(self, n, timed=True):
        losses = []
        self.synchronize()
        start = time.perf_counter()
        for _ in range(n):
            losses.append(self.step(self.i))
            self.i += 1
        self.synchronize()
        seconds = (time.perf_counter() - start) / n
        self.losses += [float(loss.item()) for loss in losses]    # read after the clock stops
        if timed:
            self.block_seconds.append(seconds)


def gpt_configs(quick):
    """{name: (GPTConfig, batch)}: gpt.py's, or a toy one for --quick."""
    import gpt as gpt_bench
    from stage4_models.gpt import GPTConfig
    if quick:
        return {"toy": (GPTConfig(vocab_size=32, block_size=8, n_layer=1, n_head=2, n_embd=16, dropout=0.0), 2)}
    return {name: gpt_bench.CONFIGS[name][:2] for name in ("char", "tiny")}


def gpt(be, device, torch, quick, rounds, steps, warmup):
    import gpt as gpt_bench
    import training
    from stage4_models.gpt import GPT
    results = {}
    for name, (config, batch) in gpt_configs(quick).items():
        tokens = batch * config.block_size
        pool = gpt_bench.batches(config, batch)
        tg.seed(0)
        model = GPT(config, device=device)
        opt = tg.optim.AdamW(model.parameters(), **gpt_bench.ADAMW)
        data = [(tg.from_numpy(x, device=device), tg.from_numpy(y, device=device)) for x, y in pool]
        engines = [Engine("tracegrad", training.training_step(opt, lambda i, t, model=model: model(i, t)[1], data),
                          be.synchronize)]
        if torch is not None:
            training.torch = torch
            theirs = training.torch_gpt_model(config, sdpa=False).to(TORCH_DEVICE)
            theirs.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in training.weights_of(model).items()})
            topt = torch.optim.AdamW(theirs.parameters(), **gpt_bench.ADAMW)
            tdata = [(torch.from_numpy(x).to(TORCH_DEVICE), torch.from_numpy(y).to(TORCH_DEVICE)) for x, y in pool]
            engines.append(Engine("pytorch", training.training_step(topt, lambda i, t, m=theirs: m(i, t)[1], tdata),
                                  torch_synchronize(torch)))
        print(f"    {name}: vocab {config.vocab_size}, block {config.block_size}, {config.n_layer} layers, "
              f"n_embd {config.n_embd}, batch {batch} ({tokens} tokens/step)", flush=True)
        for e in engines:
            e.run(warmup, timed=False)
        for r in range(rounds):
            for e in (engines if r % 2 == 0 else engines[::-1]):
                e.run(steps)
            print(f"      round {r + 1}: " + ", ".join(
                f"{e.name} {e.block_seconds[-1] * 1e3:.2f} ms/step" for e in engines), flush=True)
        result = {"tokens_per_step": tokens, "config": vars(config), "batch": batch, "engines": {}}
        for e in engines:
            seconds = statistics.median(e.block_seconds)
            result["engines"][e.name] = {"ms_per_step": seconds * 1e3, "tokens_per_second": tokens / seconds,
                                         "first_loss": e.losses[0], "block_seconds": e.block_seconds}
        if torch is not None:
            ratios = [t / o for o, t in zip(engines[0].block_seconds, engines[1].block_seconds)]
            result["ratio"] = statistics.median(ratios)
            result["goal"] = GPT_GOAL if name == "char" else None
        results[name] = result
    return results


def format_gpt(results, device):
    lines = [f"(f) GPT training (AdamW), tracegrad on device {device!r} vs PyTorch eager on the same GPU"]
    for name, result in results.items():
        for engine, r in result["engines"].items():
            lines.append(f"  {name:6} {engine:10} {r['ms_per_step']:9.2f} ms/step {r['tokens_per_second']:12,.0f} "
                         f"tokens/s   first loss {r['first_loss']:.4f}")
        if "ratio" in result:
            goal = result["goal"]
            lines.append(f"  {name:6} tracegrad / pytorch throughput {result['ratio']:.2f}x"
                         + (f" (goal >= {goal}: {'met' if result['ratio'] >= goal else 'not met'})" if goal else ""))
    return "\n".join(lines)


# ---- main ------------------------------------------------------------------------------------
def main(argv=None):
    global TORCH_DEVICE
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--device", default="cuda", choices=("cuda", "cuda-emu"))
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test (runs on cuda-emu)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS),
                        help="the sections to run, in this file's order (default: all)")
    parser.add_argument("--rounds", type=int, default=5, help="timed blocks per measurement (the median is kept)")
    parser.add_argument("--steps", type=int, help="GPT steps per timed block (default 10; 1 with --quick)")
    parser.add_argument("--mnist-steps", type=int, help=f"MNIST steps (default {MNIST_STEPS:,})")
    parser.add_argument("--onnx-models", nargs="+", choices=ONNX_MODELS, default=list(ONNX_MODELS),
                        help="the ONNX models of section (e) (default: both)")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    parser.add_argument("--torch-on-cpu", action="store_true",
                        help="compare against PyTorch on the CPU (a test of the comparison code where there is "
                             "no GPU: its figures are not a GPU's)")
    parser.add_argument("--out", help="the JSON file to write (default: benchmarks/results/cuda.json, "
                                      "and cuda.md beside it; none with --quick)")
    args = parser.parse_args(argv)

    reason = cuda_backend.unavailable_reason(args.device)
    if reason is not None:
        raise SystemExit(f"benchmarks/cuda.py: device {args.device!r} cannot run here: {reason}")
    be = backend.get(args.device)
    TORCH_DEVICE = "cpu" if args.torch_on_cpu else "cuda"
    if args.no_torch:
        torch = None
    elif args.torch_on_cpu:
        import torch
    else:
        torch = torch_cuda() if args.device == "cuda" else None
    rounds = 2 if args.quick else args.rounds
    report = {"device": args.device, "gpu": be.device_name(), "date": datetime.datetime.now().isoformat(timespec="seconds"),
              "platform": platform.platform(), "python": platform.python_version(),
              "torch": torch.__version__ if torch else None, "torch_device": TORCH_DEVICE if torch else None,
              "cublas": be.cublas_library() or None, "default_matmul": be.matmul_variant,
              "quick": args.quick, "rounds": rounds, "sections": [s for s in SECTIONS if s in args.only]}
    header = (f"device {args.device!r}: {report['gpu']}; cuBLAS {report['cublas'] or 'not loaded'}; "
              f"default matmul {report['default_matmul']!r}; PyTorch "
              + (f"{torch.__version__} on the CPU (--torch-on-cpu: a test, not a GPU's figures)" if args.torch_on_cpu
                 and torch else f"{torch.__version__} on {torch.cuda.get_device_name()}" if torch else
                 "not compared (not importable, no GPU for it, --no-torch, or device cuda-emu)"))
    print(header, flush=True)
    tables = [header]
    steps = args.mnist_steps or (QUICK["mnist_steps"] if args.quick else MNIST_STEPS)
    sections = {   # name: (title, measure, format)
        "gemm": ("(a) SGEMM", lambda: gemm(be, QUICK["gemm"] if args.quick else GEMM_SIZES, rounds, torch),
                 format_gemm),
        "roofline": ("(b) roofline", lambda: roofline(be, args.device, report.get("gemm"),
                                                      QUICK["copy"] if args.quick else COPY_ELEMENTS, rounds),
                     format_roofline),
        "bandwidth": ("(c) element-wise and reduction bandwidth", lambda: bandwidth(
            be, args.device, torch, QUICK["vectors"] if args.quick else VECTOR_SIZES,
            QUICK["matrices"] if args.quick else MATRIX_SHAPES,
            (report.get("roofline") or {}).get("copy_bandwidth_gbs")
            or copy_bandwidth(be, args.device, QUICK["copy"] if args.quick else COPY_ELEMENTS, rounds), rounds),
            format_bandwidth),
        "conv": ("(d) conv2d", lambda: conv(be, args.device, torch, QUICK["conv"] if args.quick else conv_shapes(),
                                            rounds), format_conv),
        "onnx": ("(e) ONNX inference", lambda: onnx_inference(
            be, args.device, torch, [m for m in ONNX_MODELS if m in args.onnx_models],
            QUICK["unet_size"] if args.quick else UNET_SIZE, rounds), lambda r: format_onnx(r, args.device)),
        "mnist": (f"(g) MNIST, {steps:,} steps", lambda: mnist(args.device, steps, args.quick),
                  lambda r: format_mnist(r, args.device)),
        "gpt": ("(f) GPT training", lambda: gpt(be, args.device, torch, args.quick, rounds,
                                                args.steps or (QUICK["gpt_steps"] if args.quick else 10),
                                                1 if args.quick else 3),
                lambda r: format_gpt(r, args.device)),
    }
    out = Path(args.out) if args.out else (None if args.quick else RESULTS / "cuda.json")
    report["complete"] = False
    for name in report["sections"]:
        title, measure, format_result = sections[name]
        print(title, flush=True)
        start = time.perf_counter()
        try:
            report[name] = measure()
            table = format_result(report[name])
        except Exception as err:            # one section's failure is recorded; the others still run
            import traceback
            traceback.print_exc()
            report[name] = {"failed": error_text(err)}
            table = f"{title}: failed: {report[name]['failed']}"
        report.setdefault("section_seconds", {})[name] = time.perf_counter() - start
        tables.append(table)
        if out is not None:                 # after each section: a run cut short keeps what it measured
            write(out, report, tables, quiet=True)

    report["complete"] = True
    tables.append("seconds per section: " + ", ".join(f"{k} {v:.0f}" for k, v in report["section_seconds"].items()))
    print("\n" + "\n\n".join(tables))
    if out is not None:
        write(out, report, tables)
    return report


def write(out, report, tables, quiet=False):
    """The JSON and the tables beside it as Markdown (training.write_report; quiet: not saying so)."""
    import contextlib
    import io

    import training         # here, not at the top: it imports torch where there is one
    with contextlib.redirect_stdout(io.StringIO()) if quiet else contextlib.nullcontext():
        training.write_report(out, report, "\n\n".join(tables), "cuda.py")


def conv_shapes():
    """benchmarks/conv.py's SHAPES: {name: (N, C_in, H, W, C_out, k, padding)}."""
    import conv as conv_bench
    return conv_bench.SHAPES


if __name__ == "__main__":
    main()
