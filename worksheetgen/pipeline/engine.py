"""The TeX engine of a build, for a lone sheet and a class alike (a class of one).

Chosen once before any sheet is drawn (``build_engine``): the forced one, else the one the
roster's and the banks' texts need; a forced pdfLaTeX that cannot print them is refused, and
the engine must be installed when PDFs are built. Once a document is rendered, the engine it
is compiled with follows by the one rule of ``document_engine``: the forced one, else the one
its own text needs (a class's documents streamed to TeX with the first choice are compiled
again where that differs).
"""

from __future__ import annotations

from pathlib import Path

from worksheetgen.model import Bank
from worksheetgen.pipeline.options import BuildOptions, engine_refusal
from worksheetgen.pipeline.plan import ClassPlan, texts_of_bank


def build_engine(options: BuildOptions, plan: ClassPlan, bank: Bank) -> str:
    """The TeX engine of a build's documents (a lone sheet's too), chosen (or refused, or
    found missing) before any sheet is drawn: the forced one, else by the roster's and the
    banks' texts."""
    # TeX machinery only when PDFs are built
    from worksheetgen.tex import engines as texchars

    names = [t for e in plan.entries for t in (e.label, e.id)]
    texts = names + texts_of_bank(bank)
    engine = texchars.choose_engine(texts)
    forced = None if options.engine == "auto" else options.engine
    if forced == texchars.PDFLATEX and engine != forced and options.pdf:
        where = "the roster" if texchars.choose_engine(names) != forced else "the banks"
        raise engine_refusal(texchars.unprintable_sample("".join(texts)), where)
    engine = forced or engine
    if options.pdf:  # say so before doing any work
        # TeX machinery only when PDFs are built
        from worksheetgen.tex.run import require_engine

        if forced is not None:
            require_engine(engine, f" (engine = {engine})")
        elif engine == texchars.LUALATEX:
            sample = texchars.unprintable_sample("".join(texts))
            require_engine(engine, f" (needed to print letters such as {sample})")
        else:
            require_engine()
    return engine


def document_engine(name: str, unicode: bool, forced: str | None, text: str | Path) -> str:
    """The engine a rendered document ``name`` is compiled with: the forced one, else the one
    its text needs (``unicode``: it has letters pdfLaTeX cannot print); a forced pdfLaTeX
    for such a text is refused with a few of them (``text``: the document's text, or the
    file that holds it, read only then)."""
    # tex's table of letters, loaded only once a build has rendered a document
    from worksheetgen.tex.engines import LUALATEX, PDFLATEX, unprintable_sample

    if forced == PDFLATEX and unicode:
        if isinstance(text, Path):
            text = text.read_text("utf-8")
        raise engine_refusal(unprintable_sample(text), name)
    return forced or (LUALATEX if unicode else PDFLATEX)
