""".ci/gpu, the script a machine with a GPU runs once (CI has none): its steps run, each under
its time limit, and each leaves its line in summary.txt and its log in logs.tgz, here
without a GPU. The compute-sanitizer is a stand-in that succeeds: the real one runs only
where there is a GPU."""
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.stage3, pytest.mark.slow]          # the CUDA checks: make test-slow

ROOT = Path(__file__).resolve().parents[1]
ONE_TEST = "tests/test_stage3_cuda.py::test_abs_clears_the_sign_of_zero_as_on_the_cpu"


def test_the_gpu_script_runs_its_steps_and_reports_each(tmp_path):
    env = {**os.environ, "PY": sys.executable, "OUT": str(tmp_path), "TESTS": ONE_TEST,
           "SANITIZER": "true"}
    result = subprocess.run(["bash", str(ROOT / ".ci" / "gpu"), "env", "check"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    summary = (tmp_path / "summary.txt").read_text()
    lines = {line.split()[0]: line for line in summary.splitlines()[1:]}
    assert set(lines) == {"env", "suite-cuda", "suite-cpu", "sanitize"}, summary
    for step in ("suite-cuda", "suite-cpu", "sanitize"):
        assert lines[step].split()[1] == "ok", result.stdout + summary
    assert " passed" in lines["suite-cpu"]                      # the cuda-emu cases of the one test
    with tarfile.open(tmp_path / "logs.tgz") as logs:
        names = {Path(name).name for name in logs.getnames()}
    assert {"env.log", "suite-cuda.log", "suite-cpu.log", "sanitize.log"} <= names


def test_the_gpu_script_refuses_an_unknown_step(tmp_path):
    result = subprocess.run(["bash", str(ROOT / ".ci" / "gpu"), "bench-everything"], cwd=ROOT,
                            env={**os.environ, "PY": sys.executable, "OUT": str(tmp_path)},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "unknown step bench-everything" in result.stdout
