"""The store's operations, one module per area (claims, lifecycle, queues, dispatch,
reaping, alerts, retention, chains, timeline); `jobs.sql.base.Operations` combines them.
"""
