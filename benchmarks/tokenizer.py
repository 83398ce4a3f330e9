"""GPT-2 tokenizer throughput: stage4_models.tokenizer (pure Python and the ``regex``
package) against tiktoken (OpenAI's, Rust), both built from the same gpt2/encoder.json
and vocab.bpe, encoding tiny-shakespeare in the same process. Goal: at least a
quarter of tiktoken's single-threaded ``encode_ordinary`` throughput.

    python benchmarks/tokenizer.py [--runs 7] [--file TEXT]

Each run encodes the whole file with each tokenizer and checks the ids are identical.
"cold" starts from an empty piece cache every run (what the first encode of a text
costs), "warm" keeps the cache of the run before (the same text again: the regex pass
and one lookup per piece). The pre-tokenizer's regex pass alone is timed too: it is the
floor of the pure-Python encoder. Prints MB/s per run, the medians, and the median of
each run's ratio ours / tiktoken.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from stage4_models import data  # noqa: E402
from stage4_models.tokenizer import GPT2Tokenizer  # noqa: E402
from stage4_models.tokenizer.gpt2 import FILES  # noqa: E402
from stage4_models.tokenizer.pretokenize import pretokenize  # noqa: E402
from stage4_models.tokens import SHAKESPEARE  # noqa: E402

try:
    import tiktoken
    import tiktoken.load
except ImportError:
    tiktoken = None

# tiktoken_ext.openai_public's gpt2 pattern
TIKTOKEN_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""


def tiktoken_gpt2(encoder_json, vocab_bpe):
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(vocab_bpe_file=str(vocab_bpe),
                                                          encoder_json_file=str(encoder_json))
    return tiktoken.Encoding("gpt2-local", pat_str=TIKTOKEN_PATTERN, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256}, explicit_n_vocab=50257)


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--file", default=None, help="text to encode (default: tiny-shakespeare)")
    args = parser.parse_args()
    path = Path(args.file) if args.file else data.fetch([SHAKESPEARE])[0]
    text = path.read_text(encoding="utf-8")
    mb = len(text.encode("utf-8")) / 1e6
    files = data.fetch(FILES)
    tok = GPT2Tokenizer.from_files(*files)
    oracle = tiktoken_gpt2(*files) if tiktoken else None
    print(f"{path.name}: {mb:.2f} MB; tiktoken {tiktoken.__version__ if tiktoken else 'not installed'} "
          f"(encode_ordinary, one thread)")
    rates = {"regex pass": [], "ours cold": [], "ours warm": [], "tiktoken": []}
    ratios = []
    for run in range(args.runs):
        _, t_regex = timed(pretokenize, text)
        tok._cache.clear()
        ids, t_cold = timed(tok.encode, text)
        again, t_warm = timed(tok.encode, text)
        assert again == ids
        line = f"  run {run + 1}: regex pass {mb / t_regex:5.2f}  ours cold {mb / t_cold:5.2f}  warm {mb / t_warm:5.2f}"
        rates["regex pass"].append(mb / t_regex)
        rates["ours cold"].append(mb / t_cold)
        rates["ours warm"].append(mb / t_warm)
        if oracle:
            theirs, t_tik = timed(oracle.encode_ordinary, text)
            if theirs != ids:
                sys.exit("the ids differ from tiktoken's: the comparison is void")
            rates["tiktoken"].append(mb / t_tik)
            ratios.append(t_tik / t_cold)
            line += f"  tiktoken {mb / t_tik:5.2f} MB/s  ratio {ratios[-1]:.2f}"
        print(line, flush=True)
    print("medians (MB/s): " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in rates.items() if v))
    if ratios:
        warm = statistics.median(r / c for r, c in zip(rates["ours warm"], rates["tiktoken"]))
        print(f"ours / tiktoken: cold {statistics.median(ratios):.2f}, warm {warm:.2f} (goal: at least 0.25); "
              f"{len(ids):,} tokens, identical")


if __name__ == "__main__":
    main()
