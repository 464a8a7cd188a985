"""harness.devices."""
