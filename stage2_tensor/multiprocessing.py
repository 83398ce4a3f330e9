"""PyTorch's torch.multiprocessing: Python's multiprocessing (every name of it, Process,
Queue, Pool, set_start_method, get_context, ...), with tensors that cross to another
process as PyTorch's do: one in shared memory (``share_memory_``, ``Module.share_memory``)
as the same memory, any other as a copy (shared_memory.py). ``spawn`` starts nprocs
processes running fn(i, *args), as PyTorch's.

The hogwild example of PyTorch (several processes training one model) ports as it is,
with the model on device "cpu":

    import stage2_tensor.multiprocessing as mp
    model = Net().to("cpu")
    model.share_memory()
    processes = [mp.Process(target=train, args=(rank, model)) for rank in range(4)]
"""
import multiprocessing as _python
from multiprocessing.reduction import ForkingPickler

from .nn.modules import Parameter
from .shared_memory import reduce_for_process
from .tensor import Tensor

for _kind in (Tensor, Parameter):                  # the pickler of Process arguments and Queues
    ForkingPickler.register(_kind, reduce_for_process)


def __getattr__(name):
    """Every other name is Python's multiprocessing's."""
    return getattr(_python, name)


__all__ = ["spawn", *_python.__all__]


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run fn(i, *args) in nprocs new processes, i = 0 .. nprocs - 1, as PyTorch's
    torch.multiprocessing.spawn; with ``join``, wait for them all and raise if one failed
    (naming it and its exit code). Returns the processes when not joining."""
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"spawn: nprocs must be a positive int, got {nprocs!r}")
    context = _python.get_context(start_method)
    processes = [context.Process(target=fn, args=(i, *args), daemon=daemon) for i in range(nprocs)]
    for p in processes:
        p.start()
    if not join:
        return processes
    for p in processes:
        p.join()
    failed = [(i, p.exitcode) for i, p in enumerate(processes) if p.exitcode != 0]
    if failed:
        i, code = failed[0]
        raise RuntimeError(f"spawn: process {i} terminated with exit code {code}")
    return None
