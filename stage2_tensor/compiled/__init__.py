"""Capture and replay: ``tg.compile`` (chapter 11, "Capturing a training step").

A training step on a native device spends part of its time in Python around each kernel:
modules, autograd, broadcasting, the backend's checks. The kernels it launches, their
order and their arguments' layouts are the same at every step; only the numbers in the
buffers change. So the step is run once while the device records its launches (a
capture), and later steps replay the record: the kernels again, on the current buffers,
with no Python between them.

    state.py     where the tensors a step reads and leaves behind are kept (slots)
    capture.py   one call recorded: live calls, syncs, graph breaks
    compiled.py  tg.compile: the guards, the cache of plans, the replay
    module.py    tg.compile(model): OptimizedModule

The device provides the recording and the plan (its backend's ``capture(inputs)``: stage
3's capture package, for "cpu" and the CUDA devices).
"""
from .capture import GraphBreak, graph_break, live, note_backward
from .compiled import CompiledFunction, compile, config  # noqa: A004

__all__ = ["CompiledFunction", "GraphBreak", "compile", "config", "graph_break", "live", "note_backward"]
