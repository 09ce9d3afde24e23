"""Utilities every part of tmcheck shares (atomic file writes)."""
