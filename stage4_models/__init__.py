"""stage4_models: MNIST and optimizers, character language models, GPT-2 and its BPE
tokenizer, a domain chatbot (thesis's final chapters):

* ``mnist``: the thesis's "final test" and its optimizer table;
* ``names``: the bigram and MLP language models on names;
* ``tokenizer``: GPT-2's byte-level BPE, and ``tokens``: token files for training;
* ``gpt``: GPT-2's architecture trained, sampled (KV cache) and loaded from Hugging Face;
* ``chat``: the college chatbot, its data, fine-tuning recipe and evaluation;
* ``training``: what every trainer uses (the device, mini-batches, the progress bar, the
  logs and summary a run writes), and ``checkpoint``: checkpoints written and read back;
* ``data``: finding the datasets ($TRACEGRAD_DATA, the cache, a checked download);
* ``arguments``: the checked types of the command lines' arguments, and ``cli``: what
  every command line does after parsing.
"""
