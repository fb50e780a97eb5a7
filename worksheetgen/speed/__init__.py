"""Speed machinery the domain does not know about: process tuning, forked workers, the on-disk cache. May import nothing else of worksheetgen."""
