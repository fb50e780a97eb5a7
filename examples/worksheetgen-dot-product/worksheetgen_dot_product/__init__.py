"""An example worksheetgen plugin: the ``dot-product`` question family (see README.md)."""
