"""What an instructor writes: question banks (safe line-numbered YAML, schema, params) and class rosters, read and checked. May import: families, render, exact, model, errors."""
