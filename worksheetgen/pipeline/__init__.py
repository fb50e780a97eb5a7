"""Orchestration: options, one sheet, a class, checks over many seeds.

May import: everything below it (see pyproject.toml's import contracts).
"""
