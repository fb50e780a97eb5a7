"""Draw and solve: the only place generators are made; answers, slips, invariants.

May import: families, attention, render, exact, and the shared modules.
"""
