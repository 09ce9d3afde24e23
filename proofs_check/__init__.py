"""tmcheck.proofs_check: the paper's claims as executable obligations, each with a verdict and evidence."""
