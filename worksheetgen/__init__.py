"""worksheetgen: randomized self-attention worksheets with exact answer keys."""

__version__ = "0.1.0"
