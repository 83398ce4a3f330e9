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
