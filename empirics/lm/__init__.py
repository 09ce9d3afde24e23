"""The language-model stack (paper Section 3, Appendix A): `gpt` (the model), `train` (the trainer),
`pretrain` (one LM trained on n tokens of a corpus), `checkpoint` (safetensors, never a pickle), `hf`
(to and from a transformers GPT-2 directory) and `embed` (token embeddings for the ID measurement)."""
