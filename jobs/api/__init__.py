"""The JSON API under /api/v1/ (Django REST framework), its schema and its docs.

Thin like the other entry points: validation is Job.full_clean(), actions are engine
calls. docs/api.md has curl examples.
"""
