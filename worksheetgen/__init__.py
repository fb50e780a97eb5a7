"""worksheetgen: randomized self-attention worksheets with exact answer keys.

The Python API is :mod:`worksheetgen.api` (``build``, ``check``, ``grade``, ``scan``,
``export``): ``from worksheetgen.api import build``. It is not re-exported here because
``worksheetgen.scan`` and ``worksheetgen.export`` are the packages that do the work.
"""

__version__ = "0.1.0"
