"""ONNX models on tracegrad's ops (chapter 13, "13_inference_compiler").

``ir.py`` (the graph), ``importer.py`` (ModelProto -> graph, checked), ``operators/`` (each
ONNX operator on stage2_tensor's ops; shape arithmetic on the host), ``shapes.py`` (where
shapes are read), ``symbolic/`` (the expression engine and its solver), ``inference/`` (every
value's symbolic shape at import, the proofs a Concat needs, the plan's memory as an
expression), ``passes/`` (the compiler: folding, canonicalization, dead code, specialization,
kernel selection, memory planning), ``plan.py`` (the graph made concrete for the input shapes
fed), ``session.py`` (``InferenceSession``, onnxruntime's API); and the other way,
``export.py`` (a model built with tracegrad's nn, traced into an ONNX file).
"""
from .session import InferenceSession, NodeArg

__all__ = ["InferenceSession", "NodeArg"]
