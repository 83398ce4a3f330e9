"""Capture and replay on the native devices (chapter 11): the recording of a compiled
function's C calls and the plan that runs them again. Stage2's tg.compile
(stage2_tensor/compiled/) asks the backend for ``capture(inputs)``.

    values.py     the numbered buffers of a trace, found again from a pointer into one
    steps.py      a launch, a live point
    trace.py      the recording (LaunchTrace)
    stand_ins.py  the library and ffi a device's backend reaches while a trace records
    plan.py       the replay: segments, fresh buffers, the loop of launches
    device.py     what differs between devices (CaptureDevice), for
    cpu.py        device "cpu": cpu/backend.py's module globals, cffi arrays
    cuda.py       "cuda" and "cuda-emu": the backend's own library, device pointers
"""
from .plan import Plan
from .steps import Launch, LivePoint
from .trace import LaunchTrace

__all__ = ["Launch", "LaunchTrace", "LivePoint", "Plan"]
