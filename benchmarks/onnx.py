"""ONNX inference: tracegrad's InferenceSession (stage4_models/onnx, device "cpu": the C
kernels) against onnxruntime's CPU provider, batch 1, float32 (chapter 13,
"13_inference_compiler").

Models: the light ResNet-50 of the onnx wheel (onnx/backend/test/data/light, generated
weights, 1x3x224x224; input arange(n) / n as the files were made) and the padded denoising
U-net of stage4_models/unet (16/32 channels, padding to a multiple of 4 as ONNX shape
arithmetic) exported with H and W free and run at 1x1x256x256.

Speed: each engine makes its plan / session first and runs once to warm up; then in each
round the two run one after the other, the first alternating, so a busy neighbour slows
both, with a pause of SETTLE seconds before each run: both engines' worker threads spin for
a while after their work (onnxruntime's thread pool, libgomp's GOMP_SPINCOUNT), and without
the pause one engine's spinning threads take the cores the other's run needs, which no user
running one engine meets; figures are medians over rounds; ratio = onnxruntime's time / ours (>= 1: we are as
fast or faster). Both use ``--threads`` threads (stage3_native.set_num_threads;
intra_op_num_threads, one inter-op thread).

Peak memory: tracemalloc sees no native buffer, so each engine runs in a fresh process of
its own (``--child``): after the imports and the input are made, the kernel's peak-RSS
counter is reset (``echo 5 > /proc/self/clear_refs``, Linux) and the current RSS noted;
then the session is made and run three times; peak = VmHWM - that RSS: everything the
session itself holds at its worst moment (weights, plan, activations, arenas, code paged
in on first use).

    python benchmarks/onnx.py [--rounds 7] [--threads 2] [--device cpu] [--profile]

``--profile`` adds the time of our plan's steps by kernel (one run of the compiled replay) and the
memory plan's own peak of activations (passes/memory.py's accounting: weights, im2col's
columns and other kernel scratch are not in it).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SETTLE = 0.2      # seconds before each timed run: the other engine's threads stop spinning
# this file is named onnx.py: its folder, first on the path, would shadow the onnx package
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


def light_resnet50():
    import onnx
    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
    n = 1 * 3 * 224 * 224
    return str(path), (np.arange(n, dtype=np.float32) / n).reshape(1, 3, 224, 224)


def unet_model():
    """Our U-net, 16/32 channels, with seed 0's random weights (the speed does not depend on them)."""
    import stage2_tensor as tg
    from stage4_models.unet.model import UNet
    tg.seed(0)
    return UNet(16, device="cpu")


def export_unet(model, folder):
    """``model`` exported to ``folder``/unet.onnx with N, H and W left free: the file's path."""
    import stage2_tensor as tg
    from stage4_models.onnx.export import export
    path = os.path.join(folder, "unet.onnx")
    dims = {0: "N", 2: "H", 3: "W"}
    export(model, tg.zeros(1, 1, 28, 28, device="cpu"), path, input_names=["noisy"],
           output_names=["denoised"], dynamic_axes={"noisy": dims, "denoised": dims})
    return path


def unet_256(folder):
    """Our U-net exported to ``folder``, and its 1x1x256x256 input."""
    return export_unet(unet_model(), folder), unet_input(256)


def session(engine, path, threads, device):
    """run(x) -> the output, for a fresh session of ``engine`` on ``path``."""
    if engine == "tracegrad":
        import stage3_native
        from stage4_models.onnx import InferenceSession
        stage3_native.set_num_threads(threads)
        sess = InferenceSession(path, device=device)
    else:
        import onnxruntime
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.log_severity_level = 3     # errors only: not its warnings about the files' unused initializers
        sess = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return lambda x: sess.run(None, {name: x})[0]


def _rss_kib(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def unet_input(size):
    """The U-net's input, 1x1xSIZExSIZE (uniform in [0, 1): the speed does not depend on it)."""
    return np.random.default_rng(0).random((1, 1, size, size), dtype=np.float32)


def child(engine, path, model, threads, device):
    """In a fresh process: the peak RSS the session adds, in MiB (printed as JSON). ``model``:
    "resnet50", or "unet" / "unet:SIZE" (input 1x1xSIZExSIZE, default 256)."""
    import onnx  # noqa: F401  (imported in both children: the baseline holds the same libraries)
    import onnxruntime  # noqa: F401
    import stage2_tensor  # noqa: F401
    import stage3_native  # noqa: F401
    from stage4_models.onnx import InferenceSession  # noqa: F401
    x = light_resnet50()[1] if model == "resnet50" else unet_input(int(model.partition(":")[2] or 256))
    Path("/proc/self/clear_refs").write_text("5")      # VmHWM := the current RSS
    base = _rss_kib("VmRSS")
    run = session(engine, path, threads, device)
    for _ in range(3):
        run(x)
    print(json.dumps({"peak_mib": (_rss_kib("VmHWM") - base) / 1024}))


def peak_memory(engine, path, model, threads, device):
    out = subprocess.run([sys.executable, __file__, "--child", engine, path, model, "--threads", str(threads),
                          "--device", device], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["peak_mib"]


def profile(path, x, device):
    """Our plan's step times by kernel (the schedule's: conv_bias_relu is a Conv and its
    Relu in one conv_bands call), one run of the compiled replay (the plan already made)."""
    import stage2_tensor as tg
    from stage4_models.onnx import InferenceSession
    sess = InferenceSession(path, device=device)
    name = sess.get_inputs()[0].name
    sess.run(None, {name: x})
    [plan] = sess._plans.values()
    env = dict(plan.values)
    env[name] = tg.from_numpy(x, device=device)
    times = {}
    with tg.no_grad():
        for choice, steps in zip(plan.schedule.choices, plan.choice_steps):
            start = time.perf_counter()
            for step in steps:
                step.run(env)
            times[choice.kernel] = times.get(choice.kernel, 0.0) + time.perf_counter() - start
    total = sum(times.values())
    memory = (getattr(plan, "memory", None) and plan.memory.summary()) or {}
    return total, sorted(times.items(), key=lambda kv: -kv[1]), memory.get("peak_bytes")


def compare(path, x, model, rounds=7, threads=2, device="cpu", memory=True):
    """Our InferenceSession (on ``device``) against onnxruntime's CPU provider on the ONNX
    file ``path`` and input ``x``: {"ours_ms", "ort_ms": median times of ``rounds``
    interleaved runs after a warm-up; "speed": ort_ms / ours_ms; "diff": the largest
    |difference| of the outputs; with ``memory``, "ours_mib", "ort_mib": peak memory, each in
    a fresh process (``model`` names the input there: see child); "memory": ours / ort's}."""
    runs = {e: session(e, path, threads, device if e == "tracegrad" else "cpu") for e in ("tracegrad", "onnxruntime")}
    outputs = {e: run(x) for e, run in runs.items()}          # warm-up; the plan made
    diff = float(np.max(np.abs(outputs["tracegrad"] - outputs["onnxruntime"])))
    times = {e: [] for e in runs}
    for r in range(rounds):
        for e in (("tracegrad", "onnxruntime") if r % 2 == 0 else ("onnxruntime", "tracegrad")):
            time.sleep(SETTLE)
            start = time.perf_counter()
            runs[e](x)
            times[e].append(time.perf_counter() - start)
    ours, theirs = (statistics.median(times[e]) * 1e3 for e in ("tracegrad", "onnxruntime"))
    result = {"ours_ms": ours, "ort_ms": theirs, "speed": theirs / ours, "diff": diff}
    del runs, outputs
    if memory:
        mem = {e: peak_memory(e, path, model, threads, device if e == "tracegrad" else "cpu")
               for e in ("tracegrad", "onnxruntime")}
        result.update(ours_mib=mem["tracegrad"], ort_mib=mem["onnxruntime"],
                      memory=mem["tracegrad"] / mem["onnxruntime"])
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="our engine's device (onnxruntime: its CPU provider)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("ENGINE", "PATH", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child, args.threads, args.device)
    try:
        import onnxruntime
    except ImportError:
        sys.exit("error: benchmarks/onnx.py compares against onnxruntime: pip install onnxruntime")
    with tempfile.TemporaryDirectory() as folder:
        models = {"resnet50": ("light ResNet-50, 1x3x224x224", *light_resnet50()),
                  "unet": ("padded U-net 16/32, 1x1x256x256", *unet_256(folder))}
        print(f"ONNX inference, batch 1, float32, {args.threads} thread(s), median of {args.rounds} rounds; "
              f"tracegrad on {args.device}, onnxruntime {onnxruntime.__version__} CPU provider")
        print(f"  {'model':34} {'tracegrad ms':>12} {'ort ms':>8} {'speed':>6} {'tracegrad MiB':>13} "
              f"{'ort MiB':>8} {'memory':>7}")
        for model, (label, path, x) in models.items():
            r = compare(path, x, model, args.rounds, args.threads, args.device)
            print(f"  {label:34} {r['ours_ms']:12.1f} {r['ort_ms']:8.1f} {r['speed']:5.2f}x "
                  f"{r['ours_mib']:13.1f} {r['ort_mib']:8.1f} {r['memory']:6.2f}x   (outputs within {r['diff']:.1e})")
            if args.profile:
                total, by_op, planned = profile(path, x, args.device)
                print(f"    our steps by kernel, one run, {total * 1e3:.1f} ms: " +
                      ", ".join(f"{op} {t * 1e3:.1f} ({t / total:.0%})" for op, t in by_op))
                if planned is not None:
                    print(f"    the memory plan's activation peak (passes/memory.py): {planned / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
