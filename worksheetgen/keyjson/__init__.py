"""key.json and manifest.json, the contract everything after a build reads: ``write`` makes
them, ``read`` is the one strict reader of key.json (for export and grading alike),
``deals`` says what one sheet printed for a slot (what an LMS must deal whole), and
docs/reference/key.schema.json describes the same contract as a JSON Schema.

May import: families, exact, and the shared modules.
"""
