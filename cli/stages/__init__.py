"""The stages of `tmcheck demo`, one module each, in story order (see tmcheck.cli.demo.STAGES)."""
