"""Orchestration: options, one sheet, a class, checks over many seeds, output staging. May import everything below it."""
