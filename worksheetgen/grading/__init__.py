"""Grading responses against key.json: scores, carried-forward credit, diagnoses.

May import: keyjson, bank, families, attention, render, exact, and the shared modules.
"""
