"""TeX engines and runs, cached formats, and cutting PDFs apart.

May import: speed, and the shared modules.
"""
