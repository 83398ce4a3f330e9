"""``tg.compile(model)``: PyTorch's OptimizedModule, the model behind a compiled call.

The model is its child ``_orig_mod``, so ``state_dict`` names carry the prefix
``_orig_mod.`` as PyTorch's do (nanoGPT strips it when it loads), ``parameters()``,
``train()`` and ``to()`` reach the model, and any other attribute is the model's.
"""
from ..nn.modules import Module


class OptimizedModule(Module):
    def __init__(self, model, compiled):
        super().__init__()
        self._orig_mod = model
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):                    # only for names the wrapper lacks
        if name in ("_orig_mod", "_compiled"):
            raise AttributeError(name)
        return getattr(self._orig_mod, name)
