"""The Huey glue: the tasks that execute handed-out runs, the hand-off that sends them,
and Huey's messages as JSON.

Imported only where Huey is configured: JobsConfig.ready() imports jobs.huey.tasks when
"huey.contrib.djhuey" is installed (so that `run_huey` knows the tasks), and
`runscheduler` the hand-off when REDIS_URL is set. A project without Huey never imports
huey, nor redis-py, which huey's storage brings in (the `huey` extra installs both).
"""
