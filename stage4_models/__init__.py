"""stage4_models: MNIST and optimizers, character language models, GPT-2 and its BPE
tokenizer, a domain chatbot (thesis's final chapters). So far: ``gpt`` (the GPT model,
GPT-2's architecture and parameter names); the rest: see the stage4 issues."""
