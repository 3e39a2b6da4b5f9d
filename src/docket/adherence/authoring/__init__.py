"""Authoring rule sets: SOP ingestion (``sop``, ``convert``), the atomizer, and stability."""
