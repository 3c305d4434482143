"""Aggregation of run outputs into tidy per-study tables, and one small module per figure and table."""
