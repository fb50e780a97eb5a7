"""Draw and solve: the only place generators are made; answers, slips, invariants.

A sheet's draws follow from one value, its ``model.SheetIdentity`` (seed, sheet id, course
secret): ``rng``'s generators and sheet code, ``draw.draw_variant``, ``item.make_item`` and
``item.build_sheet`` take it whole, never its parts.

May import: families, attention, render, exact, and the shared modules.
"""
