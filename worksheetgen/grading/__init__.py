"""Grading responses against key.json: scores, carried-forward credit, diagnoses, reports, templates. May import: keyjson, bank, attention, render, exact, files, errors."""
