"""What an instructor writes: question banks (safe YAML, schema, params) and rosters.

May import: solve, families, render, exact, and the shared modules.
"""
