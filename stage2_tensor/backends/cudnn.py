"""torch.backends.cudnn's switches, kept and changing nothing (backends/__init__.py)."""
allow_tf32 = True
benchmark = False
deterministic = False
enabled = True


def is_available():
    """False: tracegrad does not use cuDNN."""
    return False


def version():
    return None
