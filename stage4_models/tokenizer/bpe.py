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
recomputes the two pairs next to it. Each merge still scans the list, so a piece of n
bytes costs up to n^2: a piece longer than ``LONG`` bytes (a run of letters with no
space, megabytes of spaces) is merged with a heap (``_bpe_heap``, n log n), a window of
a few hundred bytes at a time (``_bpe_windows``: linear, and the result unchanged).
"""
import heapq
from array import array

NO_MERGE = float("inf")
LONG = 256        # pieces longer than this (in bytes) are merged window by window
WINDOW = 512      # bytes merged at a time: room for a few of GPT-2's longest tokens (128)
MARGIN = 64       # the window's tail, whose tokens are redone with the bytes that follow
MEMO_LIMIT = 16   # windows remembered within a piece (a run of one letter repeats one)


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
        return _bpe_windows(symbols, ranks)
    return _bpe_list(symbols, ranks)


def _bpe_list(symbols, ranks):
    """``bpe`` with the rank of every adjacent pair in a list (fast for a word)."""
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


def _bpe_windows(symbols, ranks, window=WINDOW, margin=MARGIN):
    """``bpe`` for long pieces in linear time: merged ``window`` bytes at a time.

    Why the result is unchanged: call two adjacent tokens *stable* when BPE of their
    concatenation gives them back, unmerged. In BPE's output every adjacent pair is
    stable, and conversely tokens whose adjacent pairs are all stable are the BPE of
    their text: until some merge first crosses a seam, the bytes of the two tokens
    beside it merge in the same order as in the BPE of those two tokens alone, which
    would then cross the seam too. So windows are merged on their own, the tokens in
    the last ``margin`` bytes of each are left for the next window to redo with what
    follows, and each seam between two windows' tokens is checked to be stable. A seam
    fails only when a merge reaches back further than the margin; then the whole piece
    goes to the heap. A run of one letter or of spaces is the same window again and
    again, merged once (``memo``)."""
    n, out, start = len(symbols), [], 0
    memo, stable = {}, {}
    while True:
        text = symbols[start:start + window]
        merged = memo.get(text)
        if merged is None:
            tokens = _bpe_heap(text, ranks)
            keep, kept = 1, len(tokens[0])            # always at least one token
            while keep < len(tokens) and kept + len(tokens[keep]) <= len(text) - margin:
                kept += len(tokens[keep])
                keep += 1
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            merged = memo[text] = (tokens, keep, kept)
        tokens, keep, kept = merged
        if out:
            seam = (out[-1], tokens[0])
            ok = stable.get(seam)
            if ok is None:
                ok = stable[seam] = _bpe_list(seam[0] + seam[1], ranks) == list(seam)
            if not ok:
                return _bpe_heap(symbols, ranks)
        if start + len(text) == n:                    # the last window: all its tokens
            out += tokens
            return out
        out += tokens[:keep]
        start += kept


def _bpe_heap(symbols, ranks):
    """``bpe`` with a heap: the same merges in the same order, O(n log n) for any piece.

    A symbol is known by where it starts; ``nxt[i]`` is where the next one starts, so
    symbol i is ``symbols[i:nxt[i]]``, and the pair at i is ``symbols[i:nxt[nxt[i]]]``
    (``nxt[i]`` is 0 once i has been merged into the symbol on its left). The heap holds
    rank * n + start for each candidate pair, so its top is the best pair and, among
    equals, the leftmost. An entry goes stale when a neighbour merges; it is still good
    exactly when the pair now at its start has the same rank (makes the same symbol)."""
    n = len(symbols)
    get = ranks.get
    nxt = array("q", range(1, n + 1))          # n: no next symbol
    prv = array("q", range(-1, n - 1))         # -1: no previous symbol
    heap = [r * n + i for i in range(n - 1) if (r := get(symbols[i:i + 2])) is not None]
    heapq.heapify(heap)
    while heap:
        rank, i = divmod(heapq.heappop(heap), n)
        j = nxt[i]
        if j <= i or j >= n:
            continue                           # i was merged away, or has no right neighbour
        k = nxt[j]
        if get(symbols[i:k]) != rank:
            continue                           # stale: the pair at i changed
        nxt[i], nxt[j] = k, 0                  # symbols i and j become one
        if k < n:
            prv[k] = i
            if (r := get(symbols[i:nxt[k]])) is not None:
                heapq.heappush(heap, r * n + i)
        h = prv[i]
        if h >= 0 and (r := get(symbols[h:k])) is not None:
            heapq.heappush(heap, r * n + h)
    out, i = [], 0
    while i < n:
        out.append(symbols[i:nxt[i]])
        i = nxt[i]
    return out
