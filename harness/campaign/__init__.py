"""harness.campaign."""
