"""Optimizers on tensors (thesis chapter on optimizers; the tensor form of stage1's
``optim.py``), with PyTorch's names, arguments and update rules:
``import stage2_tensor.optim as optim``.

Each ``step()`` reads ``p.grad`` and changes every parameter in place under ``no_grad()``
(SGD, Adam and AdamW in one fused kernel call per parameter group, ``sgd_update`` /
``adam_update`` in backend.py, which also update the state tensors in place; RMSprop in
tensor operations):
the parameter objects keep their identity and storage, so a model and its optimizer keep
pointing at the same tensors. Per-parameter state (momentum, running averages) lives in
``optimizer.state[p]``; settings live in ``optimizer.param_groups`` (a list of dicts, so a
learning-rate scheduler can change ``lr``). ``lr_scheduler.LinearLR`` decays ``lr``.
"""
from .. import backend
from ..factories import zeros_like
from ..grad_mode import no_grad


def fused_update(kernel, params, states, *settings):
    """Run an in-place update kernel of the device once for a group of parameters: their
    gradients, and ``states``, one list per kind of state tensor (a None stays None).
    A setting that is a list holds one value per parameter. Parameters on several devices
    or of several dtypes get one call per (device, dtype). Every tensor the kernel wrote
    gets a new version, as after any in-place operation."""
    buckets = {}
    for i, p in enumerate(params):
        buckets.setdefault((p.storage.device, p.dtype), []).append(i)
    for (device, dtype), picked in buckets.items():
        if len(buckets) == 1:           # the usual case: every parameter in one call, as given
            ps, kinds, values = params, states, settings
        else:
            ps = [params[i] for i in picked]
            kinds = [[kind[i] for i in picked] for kind in states]
            values = [[s[i] for i in picked] if isinstance(s, list) else s for s in settings]
        grads = [p.grad for p in ps]
        grads = [g if g.dtype is dtype and g.storage.device == device else g.to(device=device, dtype=dtype)
                 for g in grads]
        views = [[t.as_view() if t is not None else None for t in kind] for kind in kinds]
        backend.launch(device, kernel, [p.as_view() for p in ps], [g.as_view() for g in grads],
                       *views, *values)
        for t in ps:
            t.storage.version += 1
        for kind in kinds:
            for t in kind:
                if t is not None:
                    t.storage.version += 1


class Optimizer:
    def __init__(self, params, defaults):
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]             # one group holding every parameter
        if defaults["lr"] < 0:
            raise ValueError(f"{type(self).__name__}: invalid learning rate {defaults['lr']}")
        self.defaults = defaults
        self.param_groups = []
        for group in params:
            group = {**defaults, **group, "params": list(group["params"])}
            for p in group["params"]:
                if not p.requires_grad or not p.is_leaf:
                    raise ValueError(f"{type(self).__name__} can only optimize leaf tensors "
                                     f"that require grad; got one of shape {p.shape}")
            self.param_groups.append(group)
        self.state = {}                                # tensor -> its state (keyed by identity)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a gradient (others are skipped).
        `closure`, if given, recomputes the loss (with gradients) first and is returned."""
        loss = closure() if closure is not None else None
        with no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    self.update_group(params, group)
        return loss

    def update_group(self, params, group):
        """Update every parameter of a group (those with a gradient): one at a time here;
        SGD and Adam override it with one fused kernel call for the whole group."""
        for p in params:
            self.update(p, p.grad, self.state.setdefault(p, {}), group)

    def update(self, p, g, state, group):
        raise NotImplementedError

    def state_dict(self):
        """The settings and the per-parameter state, parameters named by their position
        (0, 1, ... over all groups), as in PyTorch: save it to resume training later."""
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        groups = [{**g, "params": [index[id(p)] for p in g["params"]]} for g in self.param_groups]
        state = {index[id(p)]: {k: v.detach().clone() if hasattr(v, "detach") else v
                                for k, v in s.items()} for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore what state_dict() returned, onto this optimizer's parameters (in order)."""
        groups = state_dict["param_groups"]
        if [len(g["params"]) for g in groups] != [len(g["params"]) for g in self.param_groups]:
            raise ValueError("loaded state dict has groups of sizes "
                             f"{[len(g['params']) for g in groups]}, this optimizer "
                             f"{[len(g['params']) for g in self.param_groups]}")
        params = [p for g in self.param_groups for p in g["params"]]
        for mine, theirs in zip(self.param_groups, groups):
            mine.update({k: v for k, v in theirs.items() if k != "params"})
        self.state = {}
        for i, s in state_dict["state"].items():
            p = params[int(i)]
            self.state[p] = {k: v.to(device=p.device, dtype=p.dtype).clone()
                             if hasattr(v, "detach") else v for k, v in s.items()}


class SGD(Optimizer):
    """g += weight_decay * p; with momentum: v = momentum * v + (1 - dampening) * g (v = g
    on the first step), g = v (or g + momentum * v with nesterov); p -= lr * g."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def update_group(self, params, group):
        momentum, buffers, first_steps = group["momentum"], [], []
        for p in params:
            state = self.state.setdefault(p, {})
            first_steps.append(bool(momentum) and "momentum_buffer" not in state)
            if first_steps[-1]:
                state["momentum_buffer"] = zeros_like(p)  # the kernel sets it to g this step
            buffers.append(state["momentum_buffer"] if momentum else None)
        fused_update("sgd_update", params, [buffers], group["lr"], momentum, group["dampening"],
                     group["weight_decay"], first_steps, group["nesterov"])


class RMSprop(Optimizer):
    """s = alpha * s + (1 - alpha) * g^2; p -= lr * g / (sqrt(s) + eps): each parameter's
    step is scaled by the running size of its own gradients. ``centered`` divides by the
    running standard deviation instead; ``momentum`` smooths the scaled step."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    def update(self, p, g, state, group):
        alpha = group["alpha"]
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        if not state:
            state["square_avg"] = zeros_like(p)
            if group["momentum"]:
                state["momentum_buffer"] = zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = zeros_like(p)
        state["square_avg"].mul_(alpha).add_(g * g, alpha=1 - alpha)
        avg = state["square_avg"]
        if group["centered"]:
            state["grad_avg"].mul_(alpha).add_(g, alpha=1 - alpha)
            avg = avg - state["grad_avg"] * state["grad_avg"]
        avg = avg.sqrt() + group["eps"]
        if group["momentum"]:
            state["momentum_buffer"].mul_(group["momentum"]).add_(g / avg)
            p.add_(state["momentum_buffer"], alpha=-group["lr"])
        else:
            p.add_(g / avg, alpha=-group["lr"])


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015): m and v, running means of g and g^2, bias-corrected by
    1 - beta^t; p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
    weight_decay adds weight_decay * p to g (L2 regularisation; see AdamW)."""

    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay))

    def update_group(self, params, group):
        states = []
        for p in params:
            state = self.state.setdefault(p, {})
            if not state:
                state.update(step=0, exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
            state["step"] += 1
            states.append(state)
        (b1, b2) = group["betas"]
        fused_update("adam_update", params, [[s["exp_avg"] for s in states],
                                             [s["exp_avg_sq"] for s in states]],
                     group["lr"], b1, b2, group["eps"], group["weight_decay"], self.decoupled,
                     [s["step"] for s in states])


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019): p *= 1 - lr * weight_decay
    before the Adam step, so the decay does not pass through Adam's scaling."""

    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)


from . import lr_scheduler  # noqa: E402  (optim.lr_scheduler.LinearLR, as in PyTorch)

__all__ = ["Optimizer", "SGD", "RMSprop", "Adam", "AdamW", "lr_scheduler"]
