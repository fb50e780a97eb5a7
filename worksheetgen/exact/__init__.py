"""Exact numbers, half-up rounding and printing them without SymPy.

May import: model and errors only.
"""
