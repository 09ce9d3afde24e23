"""tmcheck.theory: the paper's network class (Definitions 1-7) and every construction built from it."""
