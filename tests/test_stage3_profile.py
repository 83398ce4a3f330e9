"""stage3_native/profile.py (chapter 6, section 8): the per-call timer of device "cpu" and the
classifier of a cProfile run. Timings themselves are not asserted (they depend on the
machine); what is: which calls are counted, how often, where their time goes, that the
values computed under the timer are unchanged, and that the backend is restored."""
import cProfile
import pstats

import numpy as np
import pytest

import stage2_tensor as tg
import stage2_tensor.nn.functional as F
from stage3_native import profile
from stage3_native.cpu import backend as cpu_backend

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((8, 5), dtype=np.float32), RNG.standard_normal((5, 3), dtype=np.float32)


def step():
    """A matmul, a relu and a sum on "cpu": the result, as numpy."""
    a, b = tg.from_numpy(A, device="cpu"), tg.from_numpy(B, device="cpu")
    return (a @ b).relu().sum().numpy()


def test_the_timer_counts_each_backend_call_and_its_c_time():
    want = step()
    with profile.StepTimer() as timer:
        got = [step() for _ in range(3)]
    assert all(np.array_equal(g, want) for g in got)          # the timers change no value
    assert timer.calls["matmul"] == 3 and timer.calls["unary relu"] == 3 and timer.calls["reduce sum"] == 3
    assert timer.flops == 3 * 2 * 8 * 5 * 3                     # 2mkn per product
    for key in ("matmul", "unary relu", "reduce sum"):
        assert 0 < timer.in_c[key] <= timer.seconds[key], key   # the C part is inside the call
    per_call = timer.per_call(steps=3)
    assert list(per_call) == sorted(timer.seconds, key=timer.seconds.get, reverse=True)
    assert per_call["matmul"] == pytest.approx((timer.seconds["matmul"] / 3, timer.in_c["matmul"] / 3))
    wall = 2 * sum(timer.seconds.values())
    split = timer.split(wall, steps=3)
    assert list(split) == [profile.C_KERNELS, profile.WRAPPER, profile.OUTSIDE]
    assert sum(split.values()) == pytest.approx(wall / 3)
    assert all(v >= 0 for v in split.values())


def test_a_nested_method_call_counts_for_the_outer_one():
    """softmax of a transposed view copies it (backend.contiguous) inside the softmax call:
    the copy's time is softmax's, and no 'contiguous' call is counted."""
    be, copies = tg.backend.get("cpu"), []
    a = tg.from_numpy(A, device="cpu").T
    with profile.StepTimer() as timer:
        timed_copy = be.contiguous
        be.contiguous = lambda *args: copies.append(args) or timed_copy(*args)
        F.softmax(a, dim=-1).numpy()
    assert copies, "softmax of a transposed view no longer copies it: pick another nested call"
    assert timer.calls["softmax"] == 1 and "contiguous" not in timer.calls


def test_leaving_restores_the_backend_even_after_an_error():
    be, lib = tg.backend.get("cpu"), cpu_backend.lib
    with pytest.raises(ValueError, match="boom"):
        with profile.StepTimer():
            assert cpu_backend.lib is not lib and "matmul" in vars(be)
            step()
            raise ValueError("boom")
    assert cpu_backend.lib is lib and "matmul" not in vars(be) and "unary" not in vars(be)
    assert np.array_equal(step(), step())


def test_timers_do_not_nest():
    with profile.StepTimer():
        with pytest.raises(RuntimeError, match="already active"):
            profile.StepTimer().__enter__()
    assert not isinstance(cpu_backend.lib, profile._TimedLib)


KERNEL = ("~", 0, "<built-in method stage3_native._native.tg_matmul_f32>")
WRAP = ("/repo/stage3_native/cpu/backend.py", 300, "matmul")
TENSOR = ("/repo/stage2_tensor/tensor.py", 50, "launch")
LINEAR = ("/repo/stage2_tensor/nn/linear.py", 10, "forward")
MINE = ("/repo/benchmarks/training.py", 5, "step")
ISINSTANCE = ("~", 0, "<built-in method builtins.isinstance>")


def test_categories_by_file():
    assert profile.category(KERNEL) == profile.C_KERNELS
    assert profile.category(WRAP) == profile.WRAPPER
    assert profile.category(TENSOR) == profile.STAGE2
    assert profile.category(LINEAR) == profile.STAGE2_MODULES
    assert profile.category(("/repo/stage2_tensor/optim/sgd.py", 1, "step")) == profile.STAGE2_MODULES
    assert profile.category(MINE) == profile.CALLER
    assert profile.category(ISINSTANCE) is None


def test_a_builtin_is_shared_among_its_callers_categories():
    # (calls, primitive calls, own time, cumulative time, callers {caller: (.., .., time under it, ..)})
    stats = {KERNEL: (5, 5, 2.0, 2.0, {WRAP: (5, 5, 2.0, 2.0)}),
             WRAP: (5, 5, 0.5, 2.5, {TENSOR: (5, 5, 0.5, 2.5)}),
             TENSOR: (5, 5, 1.0, 3.5, {LINEAR: (5, 5, 1.0, 3.5)}),
             LINEAR: (1, 1, 0.25, 3.75, {MINE: (1, 1, 0.25, 3.75)}),
             MINE: (1, 1, 0.125, 4.0, {}),
             ISINSTANCE: (40, 40, 0.4, 0.4, {TENSOR: (30, 30, 0.3, 0.3), MINE: (10, 10, 0.1, 0.1)}),
             ("~", 0, "<method 'get' of 'dict' objects>"): (2, 2, 0.2, 0.2, {}),
             ("~", 0, "<built-in method builtins.len>"): (2, 2, 0.1, 0.1, {WRAP: (1, 1, 0, 0), MINE: (1, 1, 0, 0)})}
    totals = profile.by_category(stats)
    assert totals == pytest.approx({profile.C_KERNELS: 2.0, profile.WRAPPER: 0.5 + 0.05,
                                    profile.STAGE2: 1.0 + 0.3, profile.STAGE2_MODULES: 0.25,
                                    profile.CALLER: 0.125 + 0.1 + 0.2 + 0.05})
    assert list(totals) == sorted(totals, key=totals.get, reverse=True)
    assert sum(totals.values()) == pytest.approx(sum(s[2] for s in stats.values()))   # nothing lost


def test_a_real_profile_finds_the_kernels_and_loses_no_time():
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(3):
        step()
    profiler.disable()
    stats = pstats.Stats(profiler)
    totals = profile.by_category(stats)
    assert totals[profile.C_KERNELS] > 0 and totals[profile.WRAPPER] > 0 and totals[profile.STAGE2] > 0
    own = sum(s[2] for s in stats.stats.values())
    assert sum(totals.values()) == pytest.approx(own)
    labels = [profile.label(f) for f in stats.stats]
    assert "stage2_tensor/tensor.py" in " ".join(labels) and not any(str(profile.REPO) in t for t in labels)
