"""Speed machinery the domain never sees: process tuning, forked workers, the cache.

May import: errors and files only.
"""
