"""harness.kernel."""
