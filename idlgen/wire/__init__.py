"""Wire-format runtimes imported by generated code."""
