"""The domain chatbot (thesis, "Chatbots with domain-specific knowledge"): a small
character-level GPT is fine-tuned on conversations about a fictional Higher Technical
College, then asked questions it has not seen. One idea per file:

* ``college.py``: the facts of Northbridge Technical College, each a canonical answer, the
  key a correct answer must contain, and 10 paraphrased questions;
* ``dataset.py``: the seeded split into training and held-out questions, the conversation
  format (``User: ...\\nBot: ...``), the training text, and the scoring of answers;
* ``finetune.py``: the fine-tuning run, the pretrained ``chat-base`` GPT on that text;
* ``baseline.py``: the retrieval baseline (the nearest training question by shared words),
  which shows the paraphrases carry enough signal to generalise from;
* ``bot.py``: ``ChatBot``, the conversation as the prompt, generation stopped at the end
  of the bot's turn;
* ``figures.py``: a conversation drawn as a transcript;
* ``__main__.py``: ``python -m stage4_models.chat train | --checkpoint C [--ask Q | --evaluate]``;
* ``data/``: ``train.txt`` and ``heldout.jsonl`` as ``python -m stage4_models.chat.dataset
  --out stage4_models/chat/data`` writes them.
"""
# Nothing imported here: ``python -m stage4_models.chat.dataset`` would otherwise find its own
# module already loaded by the package (runpy's warning). Import the modules themselves.
