"""The synthetic manifold regression where d and β are known (Section 2.2, eq. 3-4): `problem` (the
data, target and baselines) and `model` (the paper's regression transformer, Definition 1, in torch)."""
