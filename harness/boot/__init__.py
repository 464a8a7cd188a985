"""harness.boot."""
