"""``torch.compile`` as a training script calls it: ``model = torch.compile(model)``.
Tracegrad compiles differently: a tensor on device "cpu:lazy" records its operations and
compiles the graph to fused C kernels when a value is read (stage 3's lazy device, the
compiler chapter), whatever the module. So compile returns what it is given, unchanged,
and the script runs as written; to compile, move the model and data to "cpu:lazy".
"""


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,  # noqa: A001
            options=None, disable=False):
    """model itself; without a model (``@torch.compile(mode=...)``), a decorator that returns
    what it decorates."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise TypeError(f"compile: expected a Module or a function, got {type(model).__name__}")
    return model
