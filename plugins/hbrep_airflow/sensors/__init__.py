"""Sensors over ReplicationHook: they wait for a state of the source cluster (deferrable, with a trigger)."""
