"""PyTorch's nn.DataParallel as it runs without several GPUs: the wrapped module called
as it is (tracegrad runs one device per process). The module is its ``.module``, so its
state_dict names carry the "module." prefix a DataParallel checkpoint has."""
from .modules import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: expected a Module, got {type(module).__name__}")
        self.module, self.dim = module, dim
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
