"""The MLP language model of Bengio et al. (2003), as the thesis builds it ("Language
Modelling using Neural Networks"):

    tokens (N, block_size) -> Embedding(|V|, embedding_size) -> (N, block_size, embedding_size)
    -> flattened (N, block_size * embedding_size) -> Linear -> tanh -> Linear -> logits (N, |V|)

The embedding is a table of one learned vector per token; looking up the context's
tokens and laying their vectors side by side gives a fixed-size input however rich the
vocabulary. The logits stay unnormalised: cross-entropy takes them directly, and sampling
applies a softmax.

Parameters: |V| E (embedding) + (B E + 1) H (first layer) + (H + 1) |V| (second layer).
With |V| = 27 and B = 3, the thesis's 10,643 parameters come out for E = 8 and H = 200:
216 + 5,000 + 5,427. (E = 16, H = 134 also gives 10,643; 200 hidden units is the usual
choice for this model.)

The n-gram table this replaces would need |V|^(B+1) = 27^4 = 531,441 entries for the same
context.
"""
import stage2_tensor.nn as nn

# The thesis's sizes (BLOCK_SIZE, EMBEDDING_SIZE, N_HIDDEN), giving its 10,643 parameters.
BLOCK_SIZE, EMBEDDING_SIZE, HIDDEN = 3, 8, 200


class MLPLanguageModel(nn.Module):
    def __init__(self, vocab_size, block_size=BLOCK_SIZE, embedding_size=EMBEDDING_SIZE,
                 hidden=HIDDEN, device=None):
        super().__init__()
        self.block_size = block_size
        self.embedding = nn.Embedding(vocab_size, embedding_size, device=device)
        self.fc1 = nn.Linear(block_size * embedding_size, hidden, device=device)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(hidden, vocab_size, device=device)

    def forward(self, tokens):
        """(N, block_size) int64 token ids -> (N, |V|) logits for the next token."""
        if tokens.ndim != 2 or tokens.shape[1] != self.block_size:
            raise ValueError(f"the model reads windows of shape (N, {self.block_size}), "
                             f"got {tokens.shape}")
        embedded = self.embedding(tokens)                        # (N, block_size, E)
        flat = embedded.reshape(tokens.shape[0], -1)             # (N, block_size * E)
        return self.fc2(self.act(self.fc1(flat)))


def parameter_count(vocab_size, block_size=BLOCK_SIZE, embedding_size=EMBEDDING_SIZE, hidden=HIDDEN):
    """The formula above: |V| E + (B E + 1) H + (H + 1) |V|."""
    return (vocab_size * embedding_size + (block_size * embedding_size + 1) * hidden
            + (hidden + 1) * vocab_size)
