"""The CUDA emulator's second thread order (cuda/emulate.cuh, TRACEGRAD_CUDA_EMU_ORDER=reverse):
a race between the threads of a block that the usual first-to-last order hides shows in the
last-to-first one, and the kernels that share memory through barriers give the same results
in both. The variable is read when the library loads: each check runs in a fresh process."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stage3_native import cuda_build

pytestmark = [pytest.mark.stage3, pytest.mark.slow]          # the CUDA checks: make test-slow

ROOT = Path(__file__).resolve().parents[1]

# Each thread of a block writes its slot, then reads its left neighbour's (the first thread
# its own). With the barrier
# between the two that is always the neighbour's new value. Without it, first-to-last order
# happens to give the same (the neighbour has run already); last-to-first reads the slot
# before the neighbour writes it: what a GPU, which promises no order, may do.
NEIGHBOUR = r"""
#include <cstdio>
#include <cstring>
#include "emulate.cuh"

__global__ void left_neighbour(int *out, bool barrier) {
    __shared__ int slots[64];
    slots[threadIdx.x] = (int)(blockIdx.x * 1000 + threadIdx.x);
    if (barrier) __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = slots[threadIdx.x == 0 ? 0 : threadIdx.x - 1];
}

int main(int argc, char **argv) {
    bool barrier = std::strcmp(argv[1], "barrier") == 0;
    int out[2 * 64];
    emu::launch(dim3(2), dim3(64), left_neighbour)(out, barrier);
    int wrong = 0;
    for (int i = 0; i < 2 * 64; i++) wrong += out[i] != (i / 64) * 1000 + (i % 64 == 0 ? 0 : i % 64 - 1);
    std::printf("%d\n", wrong);
}
"""


@pytest.fixture(scope="module")
def neighbour_program(tmp_path_factory):
    folder = tmp_path_factory.mktemp("emulator")
    source, program = folder / "neighbour.cpp", folder / "neighbour"
    source.write_text(NEIGHBOUR)
    command = [*cuda_build.cxx().split(), "-std=c++17", "-O1", "-DTG_CUDA_EMULATE", "-I", str(cuda_build.SOURCES),
               str(source), "-o", str(program)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return program


def wrong_reads(program, barrier, order):
    env = {**os.environ, "TRACEGRAD_CUDA_EMU_ORDER": order}
    result = subprocess.run([str(program), "barrier" if barrier else "none"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


def test_the_reverse_order_exposes_a_missing_barrier(neighbour_program):
    assert wrong_reads(neighbour_program, barrier=True, order="forward") == 0
    assert wrong_reads(neighbour_program, barrier=True, order="reverse") == 0
    assert wrong_reads(neighbour_program, barrier=False, order="forward") == 0      # the race, hidden
    # every thread but the block's first reads its neighbour's slot before it is written
    assert wrong_reads(neighbour_program, barrier=False, order="reverse") == 2 * 63


def test_the_kernels_that_share_memory_agree_in_reverse_order():
    """Reductions, matrix products, softmax, cross-entropy, layer and batch norm: every
    kernel with __shared__ memory and barriers, through their own tests, on "cuda-emu" with
    the threads and blocks run last to first."""
    cuda_build.ensure_built("cuda-emu")
    env = {**os.environ, "TRACEGRAD_CUDA_EMU_ORDER": "reverse"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "-m", "slow",
               "-k", "emu and (reduce or sum or mean or max or tiled or vectorized or softmax or cross_entropy "
                     "or layer_norm or batch_norm)",
               "tests/test_stage3_cuda_reduce.py", "tests/test_stage3_cuda_matmul.py", "tests/test_ops.py"]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and " failed" not in result.stdout
