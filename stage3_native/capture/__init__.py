"""Capture and replay on device "cpu" (chapter 11): the recording of a compiled function's
C calls (trace.py) and the plan that runs them again (plan.py). Stage2's tg.compile
(stage2_tensor/compiled/) asks the backend for ``capture(inputs)``."""
from .plan import Launch, LivePoint, Plan
from .trace import LaunchTrace

__all__ = ["Launch", "LaunchTrace", "LivePoint", "Plan"]
