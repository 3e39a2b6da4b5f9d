"""The installed docket version, stored with every judgment."""

__version__ = "0.1.0"
