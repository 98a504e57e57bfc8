"""Java semantics that Connect users see in their data and configs, in one place."""
