# The ID of your model's embeddings: hidden states of a GPT, then two estimators on the same points.
# With a trained checkpoint, `tmcheck embed CHECKPOINT --layer L --output embeddings.npy` writes the
# points instead (a tmcheck run directory or a local transformers model); here a small GPT of tmcheck's,
# seeded, stands in for yours, so the example runs in seconds with nothing to download.
python - <<'PY'
import numpy as np
import torch

from tmcheck.empirics.lm.gpt import GPT, GPTConfig

torch.manual_seed(0)
model = GPT(GPTConfig(vocab_size=256, block_size=64, n_layer=2, n_head=2, n_embd=64)).eval()
tokens = torch.randint(0, 256, (40, 64))  # (B, T): 40 documents of 64 tokens
with torch.no_grad():
    H = model.hidden_states(tokens, layer=2)  # (B, T, C): the last block, after the final LayerNorm
np.save("embeddings.npy", H.reshape(-1, 64).numpy())  # (2560, 64): one point per token
print("points:", H.reshape(-1, 64).shape)
PY
tmcheck id estimate embeddings.npy --estimator mle --bootstrap 100
tmcheck id estimate embeddings.npy --estimator twonn --bootstrap 100
