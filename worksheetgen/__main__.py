"""Entry point for ``python -m worksheetgen``."""

from worksheetgen.cli import run

if __name__ == "__main__":
    run()
