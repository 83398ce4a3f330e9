import errno
import functools
import os

import pytest
from hypothesis import HealthCheck, settings

# Deterministic example generation: CI and a reader's machine see the same cases. 12 per
# property keeps make test within its budget; TRACEGRAD_HYPOTHESIS_EXAMPLES=500 searches deeper.
settings.register_profile("tracegrad", deadline=None, derandomize=True, database=None,
                          max_examples=int(os.environ.get("TRACEGRAD_HYPOTHESIS_EXAMPLES", 12)),
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tracegrad")


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    """Run a stage3 test on 1 and on 2 kernel threads (threaded code paths included)."""
    import stage3_native
    before = stage3_native.get_num_threads()
    stage3_native.set_num_threads(request.param)
    yield request.param
    stage3_native.set_num_threads(before)


def pytest_generate_tests(metafunc):
    """A test that asks for ``simd_level`` runs once per SIMD level of the element-wise
    kernels this CPU runs, one that asks for ``gemm_kernel`` once per TinyBLAS micro-kernel
    it runs: the library says which (stage3_native.cpu.backend), the tests never assume."""
    for fixture, available in (("simd_level", "simd_levels"), ("gemm_kernel", "gemm_kernels")):
        if fixture in metafunc.fixturenames:
            from stage3_native.cpu import backend as cpu_backend
            metafunc.parametrize(fixture, getattr(cpu_backend, available)(), indirect=True)


@functools.cache
def unavailable_reason(device):
    """Why Tensor device `device` cannot run on this machine, or None: only the CUDA devices
    may not (no GPU, no compiler to build the library)."""
    if not device.startswith("cuda"):
        return None
    from stage3_native.cuda import backend as cuda_backend
    return cuda_backend.unavailable_reason(device)


@pytest.hookimpl(trylast=True)          # after -m and -k have deselected theirs: the counts are of what would run
def pytest_collection_modifyitems(config, items):
    """A test marked ``device(name)`` needs that device. Where it cannot run, its tests are
    deselected but one, which is skipped saying why and how many: one skip per device in the
    summary, not thousands of identical ones."""
    cannot_run = {}                     # device -> its tests
    for item in items:
        for marker in item.iter_markers("device"):
            if unavailable_reason(marker.args[0]) is not None:
                cannot_run.setdefault(marker.args[0], []).append(item)
                break
    set_aside = []
    for device, tests in cannot_run.items():
        reason = (f"device {device!r} cannot run here ({unavailable_reason(device)}): "
                  + (f"its {len(tests):,} tests are not run" if len(tests) > 1 else "its test is not run"))
        tests[0].add_marker(pytest.mark.skip(reason=reason))
        set_aside += tests[1:]
    if set_aside:
        deselected = set(set_aside)
        items[:] = [item for item in items if item not in deselected]
        config.hook.pytest_deselected(items=set_aside)


class SlowTests:
    """A test marked ``slow`` runs only when the -m expression names it (``-m slow``): ``make
    test`` keeps its budget (5 minutes on 2 cores, set-up included) and ``.ci/run`` runs them
    after it (``make test-slow``). Slow are: the tests marked so (the chapter notebooks
    among them), and the CUDA checks, each test of device "cuda-emu" (the CUDA kernels run
    one thread at a time on the CPU) or "cuda" (its own tests on a GPU, which such a
    machine's CI run reaches too)."""

    SLOW_DEVICES = ("cuda", "cuda-emu")

    @classmethod
    def is_slow(cls, item):
        return (item.get_closest_marker("slow") is not None
                or any(m.args[0] in cls.SLOW_DEVICES for m in item.iter_markers("device")))

    @classmethod
    def set_aside(cls, markexpr, items):
        """The slow items, removed from ``items`` unless ``markexpr`` asks for them, or
        TRACEGRAD_ALL_TESTS=1 does (.ci/gpu, on a machine with a GPU and cores to spare)."""
        if "slow" in (markexpr or "") or os.environ.get("TRACEGRAD_ALL_TESTS") == "1":
            return []
        slow, fast = [], []
        for item in items:
            (slow if cls.is_slow(item) else fast).append(item)
        items[:] = fast
        return slow

    @pytest.hookimpl(tryfirst=True)     # before -m reads the markers: -m slow selects the CUDA checks too
    def pytest_collection_modifyitems(self, config, items):
        for item in items:
            if item.get_closest_marker("slow") is None and self.is_slow(item):
                item.add_marker(pytest.mark.slow)
        slow = self.set_aside(config.getoption("markexpr"), items)
        if slow:
            config.hook.pytest_deselected(items=slow)


def pytest_configure(config):
    config.pluginmanager.register(SlowTests(), "tracegrad-slow-tests")


def _switched(current, use, name):
    before = current()
    use(name)
    assert current() == name
    yield name
    use(before)


@pytest.fixture
def simd_level(request):
    """Run a stage3 kernel test at one SIMD level (csrc/simd.h), then switch back."""
    from stage3_native.cpu import backend as cpu_backend
    yield from _switched(cpu_backend.simd_level, cpu_backend.use_simd_level, request.param)


@pytest.fixture
def gemm_kernel(request):
    """Run a stage3 matmul test on one TinyBLAS micro-kernel (csrc/gemm_kernels.c)."""
    from stage3_native.cpu import backend as cpu_backend
    yield from _switched(cpu_backend.gemm_kernel, cpu_backend.use_gemm_kernel, request.param)


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """What a data loader meets on a fresh machine without a network: $TRACEGRAD_DATA an empty
    folder, an empty home (so no ~/.cache/tracegrad) and every download failing. Returns
    that home; a test may patch urlopen again (monkeypatch) to serve wrong bytes."""
    import stage4_models.data as datafiles

    def unreachable(*args, **kwargs):
        raise OSError("network is unreachable")
    monkeypatch.setenv("TRACEGRAD_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(datafiles.urllib.request, "urlopen", unreachable)
    return tmp_path / "home"


@pytest.fixture
def full_disk(monkeypatch):
    """Writing fails as on a full disk, at the flush before the rename (``os.fsync``) that
    every atomic write makes (stage2_tensor/atomic.py). A writer that goes through
    ``atomic_write`` then raises, leaving the previous file whole and no temporary file;
    one that writes in place never flushes, and has already replaced the file."""
    def fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", fsync)


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory):
    """One cache folder for a test module's generated kernels (chapter 11): each is compiled
    once and shared by the module's tests, and nothing is written to the user's cache."""
    patch = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("kernels")
    patch.setenv("TRACEGRAD_KERNEL_CACHE", str(folder))
    yield folder
    patch.undo()
