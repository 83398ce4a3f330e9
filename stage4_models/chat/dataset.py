"""The chatbot's conversations and how its answers are scored (thesis, "Chatbots with
domain-specific knowledge").

    python -m stage4_models.chat.dataset --out stage4_models/chat/data
                                         [--held-out 2] [--seed 0] [--repeats 6]

A conversation is turns of ``"User: <question>\\nBot: <answer>\\n"``; conversations are
separated by a blank line. A character model trained on such text answers a question when
it is given ``prompt(question)`` (``"User: <question>\\nBot:"``) and continues it until the
end of the line; ``answer_from`` cuts that continuation to the answer.

The test of the bot is generalisation: ``split`` holds back ``held_out`` paraphrases of
every fact, the model is trained on the rest (``training_text``), and ``evaluate`` asks the
held-out questions. An answer is right when it contains the fact's key (``score``), so a
fluent answer about the wrong fact, or a near miss ("17:50" for "7:50"), counts as wrong.

``write`` makes the two files shipped in ``stage4_models/chat/data``: ``train.txt`` and
``heldout.jsonl`` (one ``{"question", "fact", "key"}`` a line).
"""
import json
import random
import re
import sys
from pathlib import Path
from typing import NamedTuple

from stage2_tensor.atomic import atomic_write_text

from ..arguments import non_negative_int, output_folder, positive_int
from ..cli import Parser, dispatch
from .college import COLLEGE, FACTS

DATA = Path(__file__).with_name("data")   # the shipped train.txt and heldout.jsonl
HELD_OUT = 2
SEED = 0
REPEATS = 6              # passes over the training questions: the first as written, the
                         # others with varied wording (``vary``)
PROMPT_TEMPLATE = "User: {question}\nBot:"
# Small talk around the questions, so the model learns where a conversation starts and
# stops, and that "User:" after an answer is the next question, not more answer.
GREETINGS = ("Hello", "Hi", "Hi there", "Good morning", "Hey")
GREETING_ANSWER = f"Hello! Ask me about {COLLEGE}."
THANKS = ("Thanks", "Thank you!", "Thanks a lot", "Great, thank you", "ok thanks")
THANKS_ANSWER = "You're welcome!"
SMALL_TALK = tuple((q, GREETING_ANSWER) for q in GREETINGS) + tuple((q, THANKS_ANSWER) for q in THANKS)
MAX_TURNS = 3            # questions in one conversation
SMALL_TALK_RATE = 0.25   # chance of a greeting before, and of thanks after, a conversation


class Split(NamedTuple):
    """Lists of (question, Fact): the questions a model trains on and the ones it is tested on."""
    train: list
    heldout: list


def split(facts=FACTS, held_out=HELD_OUT, seed=SEED):
    """``held_out`` questions of every fact go to the held-out set, the others to training.
    Each fact draws from its own generator, seeded by the seed and the fact's id, so adding
    or removing a fact leaves the other facts' splits as they were."""
    train, heldout = [], []
    for fact in facts:
        if not 0 < held_out < len(fact.questions):
            raise ValueError(f"fact {fact.id!r}: cannot hold out {held_out} of {len(fact.questions)} questions")
        chosen = set(random.Random(f"{seed}:{fact.id}").sample(range(len(fact.questions)), held_out))
        for i, question in enumerate(fact.questions):
            (heldout if i in chosen else train).append((question, fact))
    return Split(train, heldout)


_split = split   # training_text's argument named ``split`` hides the function there


def format_turn(question, answer):
    """One turn of a conversation, ``"User: <question>\\nBot: <answer>\\n"``."""
    return f"{prompt(question)} {one_line(answer)}\n"


def prompt(question):
    """What the model continues: the turn up to "Bot:" (the answer's leading space is the
    model's to write, as in the training text). Every question, of the training text and
    of a user, goes through here, on one line (``one_line``)."""
    return PROMPT_TEMPLATE.format(question=one_line(question))


def one_line(text):
    """``text``'s lines joined by spaces. A turn is one line, so a line break in a question
    would end the User's line, and what the user typed after it ("Bot: ...") would read as
    the Bot's turn. The breaks are str.splitlines's: \\n, \\r and the rarer ones (\\v, \\f,
    \\x1c-\\x1e, \\x85, \\u2028, \\u2029), which other programs may show as new lines."""
    return " ".join(text.splitlines())


def answer_from(generated):
    """The answer in a model's continuation of ``prompt(question)``: the text up to the end
    of the turn (the first newline, which is also where a following "User:" turn starts),
    stripped. A generation that still holds the prompt ("User: ...\\nBot: ...") is cut
    after its first "Bot:"."""
    if generated.startswith("User:") and "\nBot:" in generated:
        generated = generated.split("\nBot:", 1)[1]
    return generated.split("\n", 1)[0].strip()


def topic_words(fact, questions):
    """The words (lower case) of at least half of ``questions`` about ``fact``: the ones
    that say what is asked ("library", "open"), which ``vary`` never drops."""
    counts = {}
    for q in questions:
        for w in set(re.findall(r"[\w'@.-]+", q.lower())):
            counts[w] = counts.get(w, 0) + 1
    return {w for w, n in counts.items() if 2 * n >= len(questions)}


def vary(question, keep, rng):
    """The question reworded by chance, one of: a word (not a topic word in ``keep``)
    dropped, all lower case without the question mark, or the topic words alone ("library
    open?"), as terse users type. Without this a model learns each training question's
    exact characters, and a paraphrase it has never seen is a string it cannot place; with
    it, the words that carry the topic are what stays constant, and what it learns to read."""
    words = question.rstrip("?").split()
    kind = rng.randrange(3)
    if kind == 0:
        droppable = [i for i, w in enumerate(words) if w.lower().strip(",.'") not in keep]
        if droppable and len(words) > 2:
            del words[rng.choice(droppable)]
        return " ".join(words) + "?"
    if kind == 1:
        return " ".join(words).lower()
    topic = [w for w in words if w.lower().strip(",.") in keep]
    return " ".join(topic or words) + "?"


def _conversations(pairs, rng):
    """The (question, answer) pairs in order, grouped into conversations of 1 to MAX_TURNS
    turns about different facts, some opened by a greeting and some closed by thanks."""
    blocks, i = [], 0
    while i < len(pairs):
        turns, seen = [], set()
        for question, fact in pairs[i:i + rng.randint(1, MAX_TURNS)]:
            if fact.id in seen:           # one question per fact in a conversation
                break
            seen.add(fact.id)
            turns.append(format_turn(question, fact.answer))
        i += len(turns)
        if rng.random() < SMALL_TALK_RATE:
            turns.insert(0, format_turn(rng.choice(GREETINGS), GREETING_ANSWER))
        if rng.random() < SMALL_TALK_RATE:
            turns.append(format_turn(rng.choice(THANKS), THANKS_ANSWER))
        blocks.append("".join(turns))
    return blocks


def _handbook(facts, rng):
    """One plain-text paragraph per topic, the canonical answers in a random order: the
    facts stated as text, as in the thesis's fine-tuning on summaries of teaching material."""
    topics = {}
    for fact in facts:
        topics.setdefault(fact.topic, []).append(fact.answer)
    blocks = []
    for topic, sentences in topics.items():
        sentences = sentences[:]
        rng.shuffle(sentences)
        blocks.append(f"{COLLEGE} handbook: {topic}\n" + "".join(s + "\n" for s in sentences))
    return blocks


def training_text(facts=FACTS, split=None, seed=SEED, repeats=REPEATS, handbook=True):
    """The training corpus: every training question with its fact's canonical answer,
    ``repeats`` times, each time in a new order and new conversations, with the handbook
    paragraphs among them; the first time as written, then reworded (``vary``; a rewording
    that happens to be a held-out question is left as written). ``split`` defaults to
    ``split(facts, seed=seed)``."""
    if split is None:
        split = _split(facts, seed=seed)
    rng = random.Random(seed)
    heldout = {q for q, _ in split.heldout}
    asked = {}
    for question, fact in split.train:
        asked.setdefault(fact.id, []).append(question)
    keep = {fact.id: topic_words(fact, qs) for fact, qs in
            ((f, asked[f.id]) for f in facts if f.id in asked)}
    blocks = []
    for r in range(repeats):
        pairs = split.train[:]
        if r:
            reworded = [(vary(q, keep[f.id], rng), q, f) for q, f in pairs]
            pairs = [(v if v not in heldout else q, f) for v, q, f in reworded]
        rng.shuffle(pairs)
        round_ = _conversations(pairs, rng) + (_handbook(facts, rng) if handbook else [])
        rng.shuffle(round_)
        blocks += round_
    return "\n".join(blocks)


def heldout_rows(split):
    """The held-out questions as the dicts of heldout.jsonl: question, fact (its id), key."""
    return [{"question": q, "fact": fact.id, "key": fact.key} for q, fact in split.heldout]


def write(folder, facts=FACTS, held_out=HELD_OUT, seed=SEED, repeats=REPEATS):
    """Write train.txt and heldout.jsonl into ``folder``, each atomically (a kill leaves a
    file as it was or whole and new); returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    parts = split(facts, held_out, seed)
    train, heldout = folder / "train.txt", folder / "heldout.jsonl"
    # written as bytes, "\n" on every platform: the shipped files are the same bytes anywhere
    atomic_write_text(train, training_text(facts, parts, seed, repeats), encoding="ascii")
    atomic_write_text(heldout, "".join(json.dumps(row) + "\n" for row in heldout_rows(parts)), encoding="ascii")
    return train, heldout


def read_heldout(path):
    with open(path, encoding="ascii") as f:
        return [json.loads(line) for line in f if line.strip()]


def _normal(text):
    return " ".join(text.split()).lower()


def score(answer, fact):
    """Whether ``answer`` contains the key of ``fact`` (a Fact or the key itself), ignoring
    case and runs of whitespace. A key's leading or trailing digit must not continue a
    number in the answer: "17:50" does not contain the time "7:50", nor "May 50" "May 5"."""
    key = _normal(getattr(fact, "key", fact))
    pattern = ((r"(?<!\d)" if key[:1].isdigit() else "") + re.escape(key)
               + (r"(?!\d)" if key[-1:].isdigit() else ""))
    return re.search(pattern, _normal(answer)) is not None


def evaluate(answer_fn, heldout):
    """Ask ``answer_fn`` (question -> answer string) every held-out question (rows of
    heldout.jsonl). Returns (accuracy, rows): each row the question, its fact and key, the
    answer and whether it is correct."""
    rows = []
    for row in heldout:
        answer = answer_fn(row["question"])
        rows.append({**row, "answer": answer, "correct": score(answer, row["key"])})
    return sum(r["correct"] for r in rows) / max(len(rows), 1), rows


def main(argv=None):
    parser = Parser(prog="python -m stage4_models.chat.dataset",
                                     description="write the chatbot's train.txt and heldout.jsonl")
    parser.add_argument("--out", type=output_folder, required=True, help="folder to write into")
    parser.add_argument("--held-out", type=positive_int, default=HELD_OUT, help="questions held out per fact")
    parser.add_argument("--seed", type=non_negative_int, default=SEED)
    parser.add_argument("--repeats", type=positive_int, default=REPEATS, help="passes over the training questions")
    args = parser.parse_args(argv)
    args.command = "write"
    return dispatch(args, {"write": run_write})


def run_write(args):
    for path in write(args.out, held_out=args.held_out, seed=args.seed, repeats=args.repeats):
        print(f"{path}: {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
