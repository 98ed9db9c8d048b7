"""The live explorers of the notebooks, one module per notebook (built here so tests can sweep them)."""
