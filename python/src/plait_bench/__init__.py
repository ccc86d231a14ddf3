"""plait-bench: the Plait study tool."""
__version__ = "0.1.0"
