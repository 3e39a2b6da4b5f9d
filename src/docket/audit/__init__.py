"""Audits of automatic labels, the label-quality certificate, prediction-powered intervals."""
