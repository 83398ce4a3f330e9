"""The KV cache (thesis, "Training a GPT-like model", generating text): generation without
re-reading the whole context for every new token.

Without a cache, producing token n+1 runs the model over all n tokens so far, though only
the last position's logits are used: the keys and values of positions 0..n-1 are computed
again at every step. They do not change (position t attends to 0..t only, so nothing later
alters them), so each attention layer can keep them: the next step feeds the model one
token, whose query attends to the cached keys and values plus its own. Each new token then
costs one position instead of n.

Where they are kept matters too. Appending by concatenation (``cat([old_k, k])``) copies
every cached position at every step: O(n) per token, O(n^2) for a generation. Here each
layer gets a buffer (B, H, capacity, head_dim) once, the new positions are written into
their rows, and attention reads the view of the first ``length`` rows (a view: no copy;
its rows are contiguous, which is what a matmul reads). With ``capacity`` the model's
block size (generate.py passes it), the buffer is never outgrown; without one it starts at
the first positions' count and doubles when full, so the copies stay O(n) in all.

The buffers are written in place, which is for inference (under ``no_grad``, as generate.py
runs). While a graph is recorded through the cache, new positions are concatenated instead,
a differentiable operation.
"""
import stage2_tensor as tg


class KVCache:
    """Per attention layer, the keys and values (B, H, positions, head_dim) seen so far."""

    def __init__(self, capacity=None):
        if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int)
                                     or capacity < 1):
            raise ValueError(f"KVCache: capacity must be a positive int (positions) or None, got {capacity!r}")
        self.capacity = capacity
        self.entries = {}            # attention module -> [keys buffer, values buffer, length]

    def length(self, layer=None):
        """Positions cached (for ``layer``, or for every layer once a forward pass is done)."""
        if layer is None:
            layer = next(iter(self.entries), None)
        entry = self.entries.get(layer)
        return 0 if entry is None else entry[2]

    def append(self, layer, k, v):
        """Add the new positions' keys and values of ``layer`` (B, H, T, head_dim); return
        all of them, views (B, H, length, head_dim) of the layer's buffers."""
        entry = self.entries.get(layer)
        length = 0 if entry is None else entry[2]
        new = length + k.shape[2]
        if tg.is_grad_enabled() and (k.requires_grad or v.requires_grad):
            # recording a graph (a gradient through the cache): an in-place write is not
            # differentiable, a concatenation is
            if entry is not None:
                k = tg.cat([entry[0][:, :, :length], k], dim=2)
                v = tg.cat([entry[1][:, :, :length], v], dim=2)
            self.entries[layer] = [k, v, new]
            return k, v
        if entry is None or new > entry[0].shape[2]:
            entry = self.entries[layer] = self._grown(entry, k, v, new)
        keys, values = entry[0], entry[1]
        keys[:, :, length:new] = k                 # the new rows, in place
        values[:, :, length:new] = v
        entry[2] = new
        return keys[:, :, :new], values[:, :, :new]

    def _grown(self, entry, k, v, needed):
        """Buffers for at least ``needed`` positions: the capacity, else double what is
        there; the positions cached so far copied over."""
        room = max(self.capacity or 0, needed, 2 * entry[0].shape[2] if entry is not None else 0)
        B, H, _, hd = k.shape
        keys = tg.empty(B, H, room, hd, dtype=k.dtype, device=k.device)
        values = tg.empty(B, H, room, hd, dtype=v.dtype, device=v.device)
        length = 0 if entry is None else entry[2]
        if length:
            keys[:, :, :length] = entry[0][:, :, :length]
            values[:, :, :length] = entry[1][:, :, :length]
        return [keys, values, length]

    def clear(self):
        self.entries.clear()
