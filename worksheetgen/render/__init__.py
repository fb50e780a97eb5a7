"""Markup, escaping, the prompt sandbox and the Jinja2 documents. May import: exact, speed, model, errors, resources."""
