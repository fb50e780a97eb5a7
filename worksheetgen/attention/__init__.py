"""The attention calculation, exact and in floats, and the note's named slips.

May import: exact, model, errors, language (to mark the slips' words for the catalog).
"""
