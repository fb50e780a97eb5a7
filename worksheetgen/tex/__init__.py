"""TeX engines, runs, cached formats and PDF cutting. May import: speed, errors."""
