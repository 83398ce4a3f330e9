"""The KV cache (thesis, "Training a GPT-like model", generating text): generation without
re-reading the whole context for every new token.

Without a cache, producing token n+1 runs the model over all n tokens so far, though only
the last position's logits are used: the keys and values of positions 0..n-1 are computed
again at every step. They do not change (position t attends to 0..t only, so nothing later
alters them), so each attention layer can keep them: the next step feeds the model one
token, whose query attends to the cached keys and values plus its own. Each new token then
costs one position instead of n.
"""
import stage2_tensor as tg


class KVCache:
    """Per attention layer, the keys and values (B, H, positions, head_dim) seen so far."""

    def __init__(self):
        self.entries = {}                        # attention module -> (keys, values)

    def length(self, layer=None):
        """Positions cached (for ``layer``, or for every layer once a forward pass is done)."""
        if layer is None:
            layer = next(iter(self.entries), None)
        entry = self.entries.get(layer)
        return 0 if entry is None else entry[0].shape[2]

    def append(self, layer, k, v):
        """Add the new positions' keys and values of ``layer``; return all of them."""
        if layer in self.entries:
            old_k, old_v = self.entries[layer]
            k, v = tg.cat([old_k, k], dim=2), tg.cat([old_v, v], dim=2)
        self.entries[layer] = (k, v)
        return k, v

    def clear(self):
        self.entries.clear()
