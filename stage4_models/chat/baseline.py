"""A retrieval baseline for the chatbot (thesis, "Chatbots with domain-specific knowledge"):
answer a question with the canonical answer of the training question it shares the most
words with.

It has no model at all, so it measures the data, not a learner: if word overlap already
finds the right fact for most held-out paraphrases, the paraphrases carry enough signal
for a model to generalise from the training questions to them. It is also the number a
fine-tuned model's held-out accuracy can be compared with.

Shared words are counted by weight, not one each: a word weighs log(F / f), F the facts
and f those whose training questions use it. A word every fact's questions use ("what",
"school") weighs nothing, and a topic word of one fact ("mascot") the most, so the topic
decides rather than the filler ("What does the X course cover?" asked of two subjects).
"""
import math
import re

# Function words and filler verbs ("get", "need") every kind of question is full of. The
# question words (what, when, where, who, how) stay: "where is the library" and "when is
# the library open" differ by them.
STOPWORDS = frozenset("""a an the is are am was be do does did i im me my you your we our us
    it its to of in on at for by with from and or this that there here can could should would
    will must have has please any some if so about tell know get go need want""".split())


def words(text):
    """The content words of ``text``: lowercase, "'s" dropped ("what's" is "what"), hyphens
    and other apostrophes too ("Wi-Fi" is "wifi", "can't" is "cant"), stop words left out,
    a plural's final "s" cut ("labs" is "lab")."""
    text = re.sub(r"[-']", "", re.sub(r"'s\b", "", text.lower()))
    found = set()
    for word in re.findall(r"[a-z0-9]+", text):
        if word not in STOPWORDS:
            found.add(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return found


def weights(train):
    """word -> log(F / f) over the (question, Fact) pairs of ``train`` (F facts, f of them
    using the word in a training question)."""
    used = {}
    for question, fact in train:
        used.setdefault(fact.id, set()).update(words(question))
    counts = {}
    for found in used.values():
        for word in found:
            counts[word] = counts.get(word, 0) + 1
    return {word: math.log(len(used) / n) for word, n in counts.items()}


def nearest(question, train, weight=None):
    """The (question, Fact) of ``train`` whose shared words with ``question`` weigh the
    most (``weight``: ``weights(train)`` unless given); a tie goes to the shorter training
    question (more of it matched), then the earlier one."""
    weight = weights(train) if weight is None else weight
    asked = words(question)

    def overlap(pair):
        theirs = words(pair[0])
        return sum(weight.get(w, 0.0) for w in asked & theirs), -len(theirs)
    return max(train, key=overlap)


def retrieval_answer_fn(train):
    """question -> the canonical answer of its nearest training question."""
    weight = weights(train)
    return lambda question: nearest(question, train, weight)[1].answer
