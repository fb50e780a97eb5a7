"""The attention calculation (exact and float) and the named slips of the note. May import: exact, model, errors."""
