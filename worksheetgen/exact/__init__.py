"""Exact numbers, half-up rounding and SymPy-free printing. May import: model, errors."""
