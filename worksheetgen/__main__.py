"""Entry point for ``python -m worksheetgen``."""

from worksheetgen.cli import main

if __name__ == "__main__":
    main()
