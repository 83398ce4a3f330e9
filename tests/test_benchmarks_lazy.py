"""Smoke test of benchmarks/lazy.py (eager device "cpu" against lazy device "cpu:lazy"):
its --quick run finishes, prints every section's table and counts the kernels on both
sides. The timings themselves are not checked (a shared machine)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.stage3

ROOT = Path(__file__).resolve().parents[1]
TITLES = ("(a) GELU epilogue", "(b) LayerNorm over the last dim", "(c) softmax over the last dim",
          "(d) char-GPT training step")
HEADER = re.compile(r"case\s+eager ms\s+lazy ms\s+speedup\s+kernels eager\s+kernels lazy")
# a table row: case, eager ms, lazy ms, speedup, kernels eager, kernels lazy, max |diff|
ROW = re.compile(r"^  (?P<case>\S.*?)\s+(?P<eager>\d+\.\d+)\s+(?P<lazy>\d+\.\d+)\s+(?P<speedup>\d+\.\d+)x"
                 r"\s+(?P<k_eager>\d+)\s+(?P<k_lazy>\d+)\s+\S+$")


@pytest.fixture(scope="module")
def quick_run():
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lazy.py"), "--quick"], cwd=ROOT,
                            env=dict(os.environ), capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result.stdout


def summary_section(output, title):
    """The lines of the final summary's table that starts with ``title``."""
    summary = output[output.rindex(TITLES[0]):]              # the tables printed at the end
    block = summary[summary.index(title):].split("\n\n")[0]
    return block.splitlines()


def rows(lines):
    return [m for m in (ROW.match(line) for line in lines) if m]


def test_every_section_prints_its_table(quick_run):
    for title in TITLES:
        lines = summary_section(quick_run, title)
        assert HEADER.search(lines[1]), lines
        assert rows(lines), f"no table row under {title!r}: {lines}"
    assert len(HEADER.findall(quick_run)) >= 2 * len(TITLES)   # as measured, and in the summary


def test_kernel_counts_are_printed_for_both_devices(quick_run):
    (layernorm,) = rows(summary_section(quick_run, TITLES[1]))
    eager, lazy = int(layernorm["k_eager"]), int(layernorm["k_lazy"])
    assert eager > 1, "the composite LayerNorm is several eager kernels"
    assert 0 < lazy <= eager, "lazy runs at least one kernel and never more than eager"
    (step,) = rows(summary_section(quick_run, TITLES[3]))
    assert int(step["k_eager"]) > 0 and int(step["k_lazy"]) > 0


def test_goals_are_judged_from_the_measurements(quick_run):
    verdicts = re.findall(r"^  (fused LayerNorm|plan cache, LayerNorm|GELU epilogue|training step): .*: "
                          r"(goal met|goal not met)$", quick_run, re.MULTILINE)
    assert [goal for goal, _ in verdicts] == ["fused LayerNorm", "plan cache, LayerNorm", "GELU epilogue",
                                              "training step"]
