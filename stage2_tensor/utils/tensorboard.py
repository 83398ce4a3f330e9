"""PyTorch's torch.utils.tensorboard: ``SummaryWriter``, which writes the event files
TensorBoard shows (``tensorboard --logdir runs``).

tracegrad writes no event files of its own. This module is tensorboardX's SummaryWriter
(``pip install tensorboardX``: PyTorch's writer, without PyTorch or TensorFlow), its
``add_*`` methods given tracegrad's tensors as numpy arrays or numbers; without
tensorboardX, importing it raises an ImportError that says how to install it, or how to log
without TensorBoard, as PyTorch's does without tensorboard. ``add_graph`` traces a model
with PyTorch's JIT, which tracegrad lacks: it says to draw tracegrad's graph instead.

    from stage2_tensor.utils.tensorboard import SummaryWriter
    writer = SummaryWriter("runs/mlp")
    writer.add_scalar("loss", loss, step)
"""
import functools

from ..tensor import Tensor

try:
    import tensorboardX
except ImportError as error:
    raise ImportError(
        "stage2_tensor.utils.tensorboard (torch.utils.tensorboard) writes TensorBoard's event "
        "files with the tensorboardX package, which is not installed: pip install tensorboardX "
        "(and pip install tensorboard to view them: tensorboard --logdir runs). Without "
        "TensorBoard, log the numbers yourself: print(f'{step} {loss.item():.4f}') or a row per "
        "step with Python's csv module") from error


def _plain(value):
    """A tensor as what tensorboardX reads: a number (one element) or a numpy array."""
    if isinstance(value, Tensor):
        value = value.detach().cpu()
        return value.item() if value.ndim == 0 else value.numpy()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _converting(method):
    @functools.wraps(method)
    def add(self, *args, **kwargs):
        return method(self, *map(_plain, args), **{k: _plain(v) for k, v in kwargs.items()})
    return add


class SummaryWriter(tensorboardX.SummaryWriter):
    """tensorboardX's SummaryWriter (PyTorch's arguments and methods) reading tracegrad's
    tensors."""

    def add_graph(self, model, input_to_model=None, verbose=False, **kwargs):
        raise NotImplementedError("SummaryWriter.add_graph traces the model with PyTorch's JIT, "
                                  "which tracegrad lacks; draw tracegrad's graph of a result "
                                  "instead: stage2_tensor.viz.draw(loss)")


for _name, _method in vars(tensorboardX.SummaryWriter).items():
    if _name.startswith("add_") and _name != "add_graph" and callable(_method):
        setattr(SummaryWriter, _name, _converting(_method))

__all__ = ["SummaryWriter"]
