"""Drawing and solving: the only place generators are made, exact answers, slips and invariants. May import: bank, families, render, attention, exact, model, errors."""
