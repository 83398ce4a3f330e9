"""torch.backends.mps: Apple's GPU, which tracegrad does not drive."""


def is_available():
    return False


def is_built():
    return False
