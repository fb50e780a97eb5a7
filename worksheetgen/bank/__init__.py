"""What an instructor writes: question banks and class rosters, read and checked.

``yamldoc`` parses YAML safely with the line of every value, ``schema`` checks the sheet and
question fields into records, ``load`` finds bank files and puts the bank together, ``roster``
reads class rosters.

May import: solve, families, render, exact, and the shared modules.
"""
