"""What will run: the schedule preview of one job and the Upcoming timeline of
all jobs. Reads the models and the vendor layer; never writes.
"""
