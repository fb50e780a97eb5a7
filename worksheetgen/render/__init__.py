"""Markup and escaping, the prompt sandbox, and the Jinja2 documents.

May import: exact, speed, and the shared modules.
"""
