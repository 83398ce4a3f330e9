import os

from hypothesis import HealthCheck, settings

# Deterministic example generation: CI and a reader's machine see the same cases.
settings.register_profile("tracegrad", deadline=None, derandomize=True, database=None,
                          max_examples=int(os.environ.get("TRACEGRAD_HYPOTHESIS_EXAMPLES", 60)),
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tracegrad")
