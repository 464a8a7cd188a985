"""harness.output."""
