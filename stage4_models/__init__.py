"""stage4_models: MNIST and optimizers, character language models, GPT-2 and its BPE
tokenizer, a domain chatbot (thesis's final chapters). Not written yet: see the stage4 issues."""
