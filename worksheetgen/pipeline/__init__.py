"""Orchestration: ``build`` (the one entry point of ``worksheetgen build``, one path for a lone
sheet and a class: pre-flight once, plan, one loop that renders each sheet and hands it to a
sink, finish), ``options`` (typed options and results), ``engine`` (the build's TeX engine,
chosen once), ``plan`` (the sheets, each by its ``model.SheetIdentity``: seed, sheet, secret,
handed to solve/ whole), ``renderer`` (the one renderer, holding the templates), ``sink`` (the
plain sinks: a lone sheet's folder, a class's streamed documents), ``stream`` (the speed
machinery's sink: forked workers, TeX fed through pipes, PDFs cut), ``sheet`` (the banks with
the build's options, each document's template context, a lone sheet's whole documents),
``output`` (staging and the atomic swap), ``check`` (``worksheetgen check``), ``pages``
(check's count of each sheet's pages).

May import: everything below it (see pyproject.toml's import contracts).
"""
