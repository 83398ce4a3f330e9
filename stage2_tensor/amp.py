"""Loss scaling for low-precision training, PyTorch's ``torch.amp.GradScaler`` (chapter 12,
"Half precision"). A float16 gradient smaller than about 6e-8 rounds to zero; multiplying
the loss by a large ``scale`` before backward lifts the gradients into float16's range, and
dividing them by it before the step puts them back. A step whose gradients overflowed
(inf or NaN) is skipped and the scale halved; after ``growth_interval`` good steps it doubles.

    scaler = GradScaler(enabled=(dtype == "float16"))
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)            # optional: before clipping the true gradients
    scaler.step(optimizer)
    scaler.update()

With ``enabled=False`` every method passes through (scale returns the loss itself, step
just steps), so one loop serves every precision. As PyTorch, a scaler for device "cuda"
where that device cannot run warns and disables itself.
"""
import math
import warnings

from . import backend, grad_mode


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if not init_scale > 0 or not growth_factor > 1.0 or not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: expects init_scale > 0, growth_factor > 1 and 0 < backoff_factor "
                             f"< 1, got {init_scale}, {growth_factor} and {backoff_factor}")
        if isinstance(growth_interval, bool) or not isinstance(growth_interval, int) or growth_interval < 1:
            raise ValueError(f"GradScaler: growth_interval must be a positive int, got {growth_interval!r}")
        if enabled and str(device).startswith("cuda") and not backend.available("cuda"):
            warnings.warn("GradScaler is enabled, but CUDA is not available. Disabling.", stacklevel=2)
            enabled = False
        self.device, self._enabled = device, bool(enabled)
        self._scale, self._growth_factor, self._backoff_factor = float(init_scale), growth_factor, backoff_factor
        self._growth_interval, self._growth_tracker = growth_interval, 0
        self._unscaled = {}                 # id(optimizer) -> whether its gradients overflowed

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """outputs (a tensor, or a list/tuple of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer):
        """Divide optimizer's gradients by the scale, in place, and note whether any is inf or
        NaN. Once per optimizer between two update()s."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        found_inf = False
        inverse = 1.0 / self._scale
        with grad_mode.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inverse)
                    # inf * 0 and NaN * 0 are NaN, and NaN != 0: one test for both
                    found_inf = found_inf or bool((p.grad * 0 != 0).any().item())
        self._unscaled[id(optimizer)] = found_inf

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(), unless its gradients overflowed (then nothing: None). Unscales
        first unless unscale_ was called."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._unscaled[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Next iteration's scale: new_scale when given, else backed off after an overflow,
        grown after growth_interval steps without one."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        elif any(self._unscaled.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        if not math.isfinite(self._scale) or self._scale <= 0:
            raise RuntimeError(f"GradScaler: the scale became {self._scale}")
        self._unscaled = {}

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state):
        if not self._enabled:
            return
        if not state:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a "
                               "disabled instance of GradScaler.")
        self._scale, self._growth_factor = float(state["scale"]), state["growth_factor"]
        self._backoff_factor, self._growth_interval = state["backoff_factor"], state["growth_interval"]
        self._growth_tracker = state["_growth_tracker"]
