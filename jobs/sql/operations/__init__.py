"""The store's operations, one module per area (claims, lifecycle, queues, dispatch,
reaping, processes, alerts, retention, chains, timeline); `jobs.sql.base.Operations`
combines them.
"""
