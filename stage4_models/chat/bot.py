"""The chatbot (thesis, "Chatbots"): a language model continuing a conversation.

A conversation is text in the format the model was fine-tuned on,

    User: When does the library open?
    Bot: The library opens at 7:30 on weekdays.

so answering is generation: the conversation so far, then "User: <question>\\nBot:", and
the model writes the Bot's turn. A language model does not know it is one side of a
conversation and would happily write the next "User:" turn too, so generation stops at
the newline that ends the Bot's line. Earlier turns stay in the prompt (as far as the
block size allows: the oldest are dropped first), so the bot sees the conversation, not
only the last question.
"""
from dataclasses import dataclass, field

import stage2_tensor as tg

from . import dataset


@dataclass
class ChatBot:
    model: object                      # a GPT
    tokenizer: object                  # the one it was trained with (characters)
    max_answer: int = 160              # tokens; a runaway answer is cut here
    history: list = field(default_factory=list)    # earlier (question, answer) turns

    def prompt(self, question):
        """The text the model continues: earlier turns, then the question and "Bot:"."""
        turns = "".join(dataset.format_turn(q, a) for q, a in self.history)
        return turns + dataset.prompt(question)

    def ask(self, question, greedy=True, temperature=0.8, seed=None, remember=True):
        """The bot's answer to ``question`` (greedy: the most likely answer, the same every time)."""
        ids = self.tokenizer.encode(self.prompt(question))
        # Keep room for the answer: the model reads at most block_size tokens.
        keep = max(self.model.config.block_size - self.max_answer // 2, 1)
        ids = ids[-keep:]
        device = self.model.transformer.wte.weight.device
        out = self.model.generate(tg.tensor([ids], device=device), self.max_answer, greedy=greedy,
                                  temperature=temperature, seed=seed,
                                  stop=self.tokenizer.encode("\n")[0])
        answer = dataset.answer_from(self.tokenizer.decode(out.tolist()[0][len(ids):]))
        if remember:
            self.history.append((question, answer))
        return answer

    def reset(self):
        self.history.clear()
