"""Annotation backend: login, sessions, current user and user administration."""
