"""key.json and manifest.json: the contract everything after the build reads. May import: families, exact, model, errors."""
