"""Benchmarks against the anchors (scikit-dimension, dadapy, published fits); results in results/*.json."""
