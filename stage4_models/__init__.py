"""stage4_models: MNIST and optimizers, character language models, GPT-2 and its BPE
tokenizer, a domain chatbot (thesis's final chapters). So far:

* ``mnist``: the thesis's "final test" and its optimizer table;
* ``names``: the bigram and MLP language models on names;
* ``tokenizer``: GPT-2's byte-level BPE, and ``tokens``: token files for training;
* ``gpt``: the GPT model, GPT-2's architecture and parameter names;
* ``data``: finding the datasets ($TRACEGRAD_DATA, the cache, a checked download), and
  ``cli``: what every command line does after parsing.
"""
