"""The fused optimizer updates of the native backends, "cpu" and "cuda" alike (chapter on
native kernels): one kernel call updates a whole parameter group in place (csrc/optim.c,
cuda/optim.cu).

NativeBackend (native_backend.py) mixes in GroupUpdates and provides ``_dense_or_null(view,
dtype)`` (a pointer to the view's elements, its own memory when it is dense, else a
contiguous copy; NULL for None), ``_run_update(name, dtype, sizes, arrays, settings)`` (the
kernel call, through the device's ``_call``) and ``_on_python``; each device adds ``write``.
Both updates check first that every list has one entry per parameter, each of its
parameter's shape (their declarations, stage2_tensor/kernels/updates.py): the kernels walk each parameter's element count through
all of them.
"""
from stage2_tensor import dtypes
from stage2_tensor.backend import View
from stage2_tensor.kernels import check
from stage2_tensor.strides import make_strides, numel


class GroupUpdates:
    def _update_in_place(self, name, groups, *settings):
        """Run optimizer kernel ``name`` once for a whole parameter group. ``groups`` holds,
        per array the kernel takes (parameters, gradients, then state), a list of views, one
        per parameter (a state list may hold None: no buffer). A view that is not dense is
        updated in a copy, written back afterwards (gradients, groups[1], are only read)."""
        if not groups[0]:
            return None
        dtype = groups[0][0].dtype
        if dtype not in (dtypes.float32, dtypes.float64):
            return self._on_python(name, (*groups, *settings), dtype)
        arrays = [[self._dense_or_null(v, dtype) for v in views] for views in groups]
        sizes = [numel(v.shape) for v in groups[0]]
        self._run_update(name, dtype, sizes, arrays, settings)
        for views, pointers in zip(groups[:1] + groups[2:], arrays[:1] + arrays[2:]):
            for v, a in zip(views, pointers):
                if v is not None and a != v.buffer + v.offset:      # updated in a copy
                    self.write(v, View(a, v.shape, make_strides(v.shape), 0, dtype))

    def sgd_update(self, params, grads, velocities, lr, momentum, dampening, weight_decay,
                   first_steps, nesterov):
        check("sgd_update", params, grads, velocities, lr, momentum, dampening, weight_decay,
                             first_steps, nesterov)
        self._update_in_place("sgd_update", (params, grads, velocities), lr, momentum, dampening,
                              weight_decay, [int(f) for f in first_steps], int(nesterov))

    def adam_update(self, params, grads, ms, vs, lr, beta1, beta2, eps, weight_decay, decoupled, steps):
        check("adam_update", params, grads, ms, vs, lr, beta1, beta2, eps, weight_decay, decoupled, steps)
        self._update_in_place("adam_update", (params, grads, ms, vs), lr, beta1, beta2, eps,
                              weight_decay, int(decoupled), list(steps))
