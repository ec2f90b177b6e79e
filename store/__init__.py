"""Persistence: MongoDB (motor), Redis sessions, object storage and safe archive handling."""
