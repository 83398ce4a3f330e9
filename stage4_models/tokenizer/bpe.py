"""Byte-pair merging of one piece (thesis, "Tokenization": the ``bpe`` function).

A piece starts as its bytes, one symbol each (in GPT-2's byte characters, so "Hello"
is H e l l o). Then, over and over, the adjacent pair whose merge ranks best (lowest)
is joined into one symbol, until no adjacent pair can be merged. The ranks are
``ranks[symbol]``: 0..255 for the bytes, then 256 + i for the symbol that line i of
vocab.bpe creates. So early lines are the most frequent pairs of the training corpus,
and they are applied first.

A pair is ranked by the symbol it makes (``ranks.get(left + right)``), as tiktoken does,
rather than by looking the pair up among the merge lines. The two agree except when a
symbol can be made from two different splits ("ab"+"c" and "a"+"bc"); ranking by the
symbol accepts both, and it is what makes us byte-identical to tiktoken. When two pairs
rank the same, the leftmost is merged first.

``merge_steps`` is the plain loop, step by step, for reading; ``bpe`` gives the same
result faster: it keeps every adjacent pair's rank in a list and after a merge only
recomputes the two pairs next to it, and for long pieces it uses a heap so that a
run of 100,000 characters costs n log n rather than n^2.
"""
import heapq

NO_MERGE = float("inf")
LONG = 256        # pieces longer than this (in bytes) go to the heap version


def merge_steps(symbols, ranks):
    """Yield the piece after each merge, starting with its bytes: a list of symbols each
    time, with the pair that was merged and its rank (None, None for the start)."""
    parts = list(symbols)
    yield parts, None, None
    while len(parts) > 1:
        pair_ranks = [ranks.get(a + b, NO_MERGE) for a, b in zip(parts, parts[1:])]
        best = min(pair_ranks)
        if best == NO_MERGE:
            return
        i = pair_ranks.index(best)                  # the leftmost of the best pairs
        pair = (parts[i], parts[i + 1])
        parts = parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2:]
        yield parts, pair, best


def bpe(symbols, ranks):
    """The list of symbols ``symbols`` (a string of GPT-2 byte characters) merges into."""
    if len(symbols) > LONG:
        return _bpe_heap(symbols, ranks)
    parts = list(symbols)
    get = ranks.get
    pair_ranks = [get(a + b, NO_MERGE) for a, b in zip(parts, parts[1:])]
    while pair_ranks:
        best = min(pair_ranks)
        if best == NO_MERGE:
            break
        i = pair_ranks.index(best)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
        del pair_ranks[i]
        # Only the pairs touching the new symbol changed.
        if i > 0:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], NO_MERGE)
        if i < len(pair_ranks):
            pair_ranks[i] = get(parts[i] + parts[i + 1], NO_MERGE)
    return parts


def _bpe_heap(symbols, ranks):
    """``bpe`` for long pieces: the same merges in the same order, O(n log n).

    Symbols live in a linked list indexed by their start position, which never changes
    when a symbol grows to the right; the heap holds (rank, start) of candidate pairs, so
    its top is the best pair and, among equals, the leftmost. Entries go stale when a
    neighbour merges; one is still good exactly when the pair now at ``start`` makes the
    same symbol, i.e. has the same rank."""
    n = len(symbols)
    part = list(symbols)                 # part[start]: the symbol starting there ("" once merged away)
    nxt = list(range(1, n + 1))          # start of the next symbol (n: none)
    prv = list(range(-1, n - 1))         # start of the previous symbol (-1: none)
    get = ranks.get
    heap = [(r, i) for i in range(n - 1) if (r := get(part[i] + part[i + 1])) is not None]
    heapq.heapify(heap)
    while heap:
        rank, i = heapq.heappop(heap)
        j = nxt[i] if part[i] else n
        if j >= n or get(part[i] + part[j]) != rank:
            continue                     # stale: i was merged away or its pair changed
        part[i] += part[j]
        part[j] = ""
        nxt[i] = k = nxt[j]
        if k < n:
            prv[k] = i
            if (r := get(part[i] + part[k])) is not None:
                heapq.heappush(heap, (r, i))
        h = prv[i]
        if h >= 0 and (r := get(part[h] + part[i])) is not None:
            heapq.heappush(heap, (r, h))
    return [p for p in part if p]
