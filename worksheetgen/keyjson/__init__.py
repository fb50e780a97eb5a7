"""key.json and manifest.json: the contract everything after a build reads.

May import: families, exact, and the shared modules.
"""
