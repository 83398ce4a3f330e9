"""L-BFGS (Nocedal 1980; Liu and Nocedal 1989), PyTorch's torch.optim.LBFGS, whose
algorithm (after minFunc) this follows step for step, so the iterates are PyTorch's.

A quasi-Newton method: each ``step(closure)`` runs up to ``max_iter`` iterations, each
moving all parameters, seen as one flat vector x, along d = -H g, where H approximates the
inverse Hessian from the last ``history_size`` pairs (s = the step taken, y = the change
of gradient it caused) by the two-loop recursion, scaled by y.s / y.y. The step length is
``lr`` (the first iteration: min(1, 1 / |g|_1) lr), or, with
``line_search_fn="strong_wolfe"``, one that satisfies the strong Wolfe conditions (a
cubic-interpolating bracket and zoom, ``strong_wolfe`` below). The closure re-evaluates
the model and its gradients, so it is called several times per step.

    optimizer = optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
    def closure():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        return loss
    optimizer.step(closure)

The vectors are tensors (on the parameters' device); the scalars of the recursion and the
line search are Python floats.
"""
import math
import numbers

from ..compiled.capture import live
from ..concat import cat
from ..grad_mode import enable_grad, no_grad
from ..tensor import Tensor
from .optimizer import Optimizer, check_number


def _dot(a, b):
    return (a * b).sum().item()


def _max_abs(v):
    return v.abs().max().item() if v.numel() else 0.0


def cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clamped to ``bounds`` (by default [x1, x2]); their midpoint where the cubic has none."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


def strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step length t along d from the point of loss f, gradient g and slope gtd = g.d
    with f(t) <= f + c1 t gtd (enough decrease) and |g(t).d| <= c2 |gtd| (the slope
    flattened): first a bracket around such a t (growing t by cubic extrapolation), then
    zooming in. ``evaluate(t)`` gives (loss, flat gradient) at x + t d. Returns (loss,
    gradient, t, evaluations)."""
    d_norm = _max_abs(d)
    f_new, g_new = evaluate(t)
    evals, gtd_new = 1, _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done, ls_iter = False, 0
    while ls_iter < max_ls:                           # bracketing
        # in this order: too little decrease, then the slope flat enough, then rising
        sufficient = not (f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev))
        if sufficient and abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, done = [t], [f_new], [g_new], True
            break
        if not sufficient or gtd_new >= 0:
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        t_next = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                   bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, _dot(g_new, d), ls_iter + 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    # zoom: shrink the bracket until a point satisfies both conditions
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1],
                              bracket_gtd[1])
        # a t too close to an end of the bracket twice in a row (or outside it) is moved to
        # a tenth of the bracket inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, _dot(g_new, d), ls_iter + 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:      # the old low becomes the high
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """PyTorch's LBFGS(params, lr=1, max_iter=20, max_eval=max_iter * 5 // 4,
    tolerance_grad=1e-7, tolerance_change=1e-9, history_size=100, line_search_fn=None):
    one parameter group; ``step(closure)`` needs the closure and returns its first loss.
    The state (the history, the last direction and step) is kept under the first
    parameter, as PyTorch does."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if max_eval is None and isinstance(max_iter, int):
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        self._params = self.param_groups[0]["params"]

    def check_settings(self, group, where):
        super().check_settings(group, where)
        for key in ("max_iter", "max_eval", "history_size"):
            value = group[key]
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{where}: invalid {key} {value!r}, expected a positive int")
        for key in ("tolerance_grad", "tolerance_change"):
            check_number(where, key, group[key])
        if group["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"{where}: line_search_fn must be None or 'strong_wolfe', got "
                             f"{group['line_search_fn']!r}")

    def add_param_group(self, param_group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # ---- the parameters as one flat vector --------------------------------------------------
    def _flat_grad(self):
        return cat([p.grad.reshape(-1) if p.grad is not None else p.new_zeros(p.numel())
                    for p in self._params])

    def _add_to_params(self, step, direction):
        """x += step * direction, parameter by parameter."""
        at = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[at:at + n].view_as(p), alpha=step)
            at += n

    def _evaluate(self, closure):
        """(loss, flat gradient) of a closure call, with gradients recorded."""
        with enable_grad():
            loss = float(closure())
        return loss, self._flat_grad()

    @live
    def step(self, closure=None):
        if not callable(closure):
            raise TypeError("LBFGS.step needs a closure that re-evaluates the model and returns "
                            "the loss (it is called several times per step)")
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            first_loss = closure()
        loss, flat_grad = float(first_loss), self._flat_grad()
        evals = 1
        state["func_evals"] += 1
        if _max_abs(flat_grad) <= tolerance_grad:
            return first_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the direction: steepest descent at first, then the two-loop recursion
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, H_diag = -flat_grad, [], [], [], 1.0
            else:
                y, s = flat_grad - prev_flat_grad, d * t
                ys = _dot(y, s)
                if ys > 1e-10:                 # curvature positive: remember the pair
                    if len(old_dirs) == history_size:       # forget the oldest pair
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)
                al = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q = q - old_dirs[i] * al[i]
                d = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = _dot(old_dirs[i], d) * ro[i]
                    d = d + old_stps[i] * (al[i] - be_i)
            prev_flat_grad, prev_loss = flat_grad, loss
            # the step length
            t = min(1.0, 1.0 / flat_grad.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:        # not a descent direction any more
                break
            if group["line_search_fn"] is not None:
                start = [p.clone() for p in self._params]

                def evaluate(step, start=start, d=d):
                    self._add_to_params(step, d)
                    out = self._evaluate(closure)
                    for p, x in zip(self._params, start):
                        p.copy_(x)
                    return out
                loss, flat_grad, t, ls_evals = strong_wolfe(evaluate, t, d, loss, flat_grad, gtd,
                                                            max_ls=max_eval - evals)
                self._add_to_params(t, d)
                optimal = _max_abs(flat_grad) <= tolerance_grad
            else:
                self._add_to_params(t, d)
                ls_evals, optimal = 0, False
                if n_iter != max_iter:         # the last iteration's loss is the next step's
                    loss, flat_grad = self._evaluate(closure)
                    ls_evals, optimal = 1, _max_abs(flat_grad) <= tolerance_grad
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == max_iter or evals >= max_eval or optimal
                    or _max_abs(d) * abs(t) <= tolerance_change or abs(loss - prev_loss) < tolerance_change):
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return first_loss

    # ---- saving and loading -----------------------------------------------------------------
    def _loaded_state(self, where, p, state, group):
        """LBFGS's state: counts, the last direction and gradient (flat tensors of every
        parameter's elements), the history (lists of them) and floats; checked as the
        update reads it."""
        if not isinstance(state, dict):
            raise TypeError(f"{where}: its state must be a dict, got {type(state).__name__}")
        known = {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "al", "H_diag",
                 "prev_flat_grad", "prev_loss"}
        unknown = sorted(set(state) - known, key=str)
        if unknown:
            raise ValueError(f"{where}: unknown state {unknown}; LBFGS keeps {sorted(known)} (is this "
                             "another optimizer's state dict?)")
        n = sum(q.numel() for q in self._params)

        def flat(key, v):
            if not isinstance(v, Tensor) or v.shape != (n,):
                raise ValueError(f"{where}: {key} must be a tensor of shape ({n},) (every "
                                 f"parameter's elements), got {getattr(v, 'shape', type(v).__name__)}")
            return v.detach().to(device=p.device, dtype=p.dtype).clone()

        def number(key, v):
            if isinstance(v, Tensor) and v.numel() == 1:
                v = v.item()
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ValueError(f"{where}: {key} must be a number, got {type(v).__name__}")
            return float(v)
        out = {}
        for key, v in state.items():
            if key in ("func_evals", "n_iter"):
                out[key] = int(number(key, v))
            elif key in ("d", "prev_flat_grad"):
                out[key] = flat(key, v)
            elif key in ("old_dirs", "old_stps", "ro", "al"):
                if not isinstance(v, list):
                    raise ValueError(f"{where}: {key} must be a list, got {type(v).__name__}")
                if key in ("old_dirs", "old_stps"):
                    out[key] = [flat(key, x) for x in v]
                else:
                    out[key] = [None if x is None else number(key, x) for x in v]
            else:
                out[key] = number(key, v)
        lengths = {len(out[k]) for k in ("old_dirs", "old_stps", "ro") if k in out}
        if len(lengths) > 1:
            raise ValueError(f"{where}: old_dirs, old_stps and ro must have one length, got {sorted(lengths)}")
        return out
