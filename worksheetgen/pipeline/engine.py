"""The TeX engine of a build, chosen once before any sheet is drawn (``build_engine``): the
forced one, else the one the roster's and the banks' texts need; a forced pdfLaTeX that
cannot print them is refused, and the engine must be installed when PDFs are built.
"""

from __future__ import annotations

from worksheetgen.model import Bank
from worksheetgen.pipeline.options import BuildOptions, engine_refusal
from worksheetgen.pipeline.plan import ClassPlan, texts_of_bank


def build_engine(options: BuildOptions, plan: ClassPlan, bank: Bank) -> str:
    """The TeX engine of a class's documents, chosen (or refused, or found missing) before
    any sheet is drawn: the forced one, else by the roster's and the banks' texts."""
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
