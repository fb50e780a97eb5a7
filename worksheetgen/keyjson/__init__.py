"""key.json and manifest.json, the contract everything after a build reads: ``write`` makes
them, ``read`` is the one strict reader of key.json (for export and grading alike: the file's
gate, the course secret, format and version, the document and its questions), with
``fields`` (its field checks, each naming the JSON path), ``answers`` (each answer by kind,
into cells with their slips) and ``records`` (the frozen records it returns); ``views`` holds
what export and grading show of those records (plain decimals, LMS points, feedback wording);
``deals`` says what one sheet printed for a slot (what an LMS must deal whole), and
docs/reference/key.schema.json describes the same contract as a JSON Schema.

May import: families, exact, and the shared modules.
"""
