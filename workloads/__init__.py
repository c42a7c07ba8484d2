"""Workloads: the jobs Signoff runs that stop for a human's sign-off."""
