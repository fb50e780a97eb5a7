"""From solved sheets to documents: ``markup`` (escaping and safe math for LaTeX and
Markdown), ``prompts`` (the bank prompts' sandbox), ``documents`` (the Jinja2 environments,
filters and templates that render sheets and keys), ``helpers`` (what the templates call:
points in words, the carried-forward line, headings, room to work, a sheet's grid row),
``texlines`` (LaTeX lines short enough for TeX's input buffer), ``pagefit`` (how many pages
a solved sheet takes, without TeX).

May import: exact, speed, and the shared modules.
"""
