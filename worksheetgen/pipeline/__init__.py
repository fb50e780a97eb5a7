"""Orchestration: ``build`` (the one entry point of ``worksheetgen build``), ``options``,
``sheet`` (the stages of one sheet), ``class_build`` (a roster or versions, streamed),
``output`` (staging and the atomic swap), ``check`` (``worksheetgen check``).

May import: everything below it (see pyproject.toml's import contracts).
"""
