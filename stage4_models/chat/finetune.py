"""The chatbot's fine-tuning run (thesis, "Chatbots with domain-specific knowledge"): the
``chat-base`` model (gpt/training.py: a character GPT with a block of 256, pretrained on
Shakespeare) trained again on the shipped conversations, data/train.txt. Only the bot's
lines and the handbook are scored, and windows begin at turns (``conversations``); the
learning rate warms up over 100 steps to 3e-3 and decays by a cosine over 4,000 steps.
"""
from ..gpt.training import TrainConfig, overridden
from .dataset import DATA

CONFIG = TrainConfig(name="chat", block_size=256, batch=8, steps=4000, lr=3e-3, warmup=100,
                     eval_interval=250, final_eval_batches=50, data=str(DATA / "train.txt"),
                     init_from="runs/chat-base/checkpoint.tg", conversations=True)


def config(**overrides):
    """CONFIG with the fields in ``overrides`` (those not None) replaced."""
    return overridden(CONFIG, **overrides)
