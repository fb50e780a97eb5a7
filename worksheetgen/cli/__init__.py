"""The command line: parse options, call the library, print. Nothing else lives here.

Heavy modules (NumPy, SymPy) are imported inside the commands, so ``--help`` stays fast.

One module per command (or pair of commands); the group and what they share are in
:mod:`worksheetgen.cli.app`. Importing this package registers every command.

May import: every package below it (pipeline, cliparams, scan, report, grading, export,
keyjson and the shared modules), NumPy- and SymPy-loading ones only inside a command.
"""

from worksheetgen.cli import build, check, course, export, grade, scan  # noqa: F401  (registers the commands)
from worksheetgen.cli.app import main, run

__all__ = ["main", "run"]
