import os

import pytest
from hypothesis import HealthCheck, settings

# Deterministic example generation: CI and a reader's machine see the same cases.
settings.register_profile("tracegrad", deadline=None, derandomize=True, database=None,
                          max_examples=int(os.environ.get("TRACEGRAD_HYPOTHESIS_EXAMPLES", 60)),
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


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory):
    """One cache folder for a test module's generated kernels (chapter 11): each is compiled
    once and shared by the module's tests, and nothing is written to the user's cache."""
    patch = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("kernels")
    patch.setenv("TRACEGRAD_KERNEL_CACHE", str(folder))
    yield folder
    patch.undo()
