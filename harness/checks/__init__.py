"""harness.checks."""
