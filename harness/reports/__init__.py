"""harness.reports."""
