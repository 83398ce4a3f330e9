"""The memory plan: the buffers a captured call made and dropped, packed into fewer blocks
that the plan owns and reuses at every replay.

Eagerly, each kernel's output is a new buffer, freed when the last tensor viewing it goes;
the caching allocator (csrc/alloc.c) makes that cheap, but a step still touches as much
fresh memory as it has intermediates. A plan knows every buffer's whole life: the first
launch that writes it and the last that reads it. Two buffers whose lives do not overlap
can be one block. So each buffer the trace saw made (and not kept after the call: those
are fresh at each replay) gets a block, found in launch order: the smallest free block
that holds it, else a new one; a block is free again once the launch after its buffer's
last use starts. This is a register allocator's linear scan, over bytes.

A block serves one buffer at a time from its start (no packing several into one), so it
keeps the allocator's alignment. Buffers that hold constants (a table of strides made with
its values, an array from outside the call) are not moved.
"""
import bisect

from .steps import Launch


def lifetimes(steps, values):
    """{value: (first step, last step)} over the launches that pass it, for ``values``."""
    spans = {}
    for i, step in enumerate(steps):
        for v in step.buffer_values() if isinstance(step, Launch) else ():
            if v in values:
                first, _ = spans.get(v, (i, i))
                spans[v] = (first, i)
    return spans


def pack(spans, sizes):
    """{value: block number} and the blocks' sizes in bytes: linear scan, best fit."""
    order = sorted(spans, key=lambda v: spans[v])
    blocks, free, active, where = [], [], [], {}       # free: sorted (size, block)
    for v in order:
        first, last = spans[v]
        while active and active[0][0] < first:          # lives that ended before this one starts
            _, block = active.pop(0)
            bisect.insort(free, (blocks[block], block))
        i = bisect.bisect_left(free, (sizes[v], -1))
        if i < len(free):
            _, block = free.pop(i)
        else:
            block = len(blocks)
            blocks.append(sizes[v])
        where[v] = block
        bisect.insort(active, (last, block))
    return where, blocks
