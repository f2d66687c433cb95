"""The simulated executor: the default, for jobs whose executor is "simulated"."""

from __future__ import annotations

import random

from jobs import conf
from jobs.executors.base import ExecutionContext, Outcome
from jobs.runs import RunTicket


class SimulatedExecutor:
    """Pretends to run the command: waits a random time, then succeeds or fails at random.

    Duration is uniform in [JOBS_SIM_MIN_SECONDS, JOBS_SIM_MAX_SECONDS]; failure happens
    with probability JOBS_SIM_FAILURE_RATE. A job's own simulation settings (carried by
    its ticket) take the place of these where they are set. With JOBS_SIM_SEED set, each
    occurrence's outcome depends only on the seed and the run's identity (job, occurrence, attempt),
    not on which thread or process draws first, so a run is repeatable.
    """

    def __init__(
        self,
        *,
        min_seconds: float | None = None,
        max_seconds: float | None = None,
        failure_rate: float | None = None,
        seed: int | None = None,
    ) -> None:
        defaults = conf.simulation()
        self.min_seconds = defaults.min_seconds if min_seconds is None else min_seconds
        self.max_seconds = defaults.max_seconds if max_seconds is None else max_seconds
        self.failure_rate = defaults.failure_rate if failure_rate is None else failure_rate
        self.seed = defaults.seed if seed is None else seed
        self.defaults = conf.SimulationSettings(
            self.min_seconds, self.max_seconds, self.failure_rate, self.seed
        )
        if not 0 <= self.min_seconds <= self.max_seconds:
            raise ValueError("need 0 <= min_seconds <= max_seconds")
        if not 0 <= self.failure_rate <= 1:
            raise ValueError("failure_rate must be between 0 and 1")

    def _rng(self, ticket: RunTicket) -> random.Random | object:
        if self.seed is None:
            return random  # the module's generator is safe to share between threads
        identity = (
            f"{self.seed}:{ticket.job_key}:{ticket.scheduled_for.isoformat()}:{ticket.attempt}"
        )
        return random.Random(identity)

    def execute(self, ticket: RunTicket, context: ExecutionContext) -> Outcome:
        rng = self._rng(ticket)
        effective = self.defaults.for_job(
            ticket.sim_failure_rate, ticket.sim_min_seconds, ticket.sim_max_seconds
        )
        shortest, longest = effective.min_seconds, effective.max_seconds
        failure_rate = effective.failure_rate
        duration = shortest if longest == shortest else rng.uniform(shortest, longest)
        fails = failure_rate > 0 and rng.random() < failure_rate
        if duration > 0 and context.stop.wait(duration):
            return Outcome(
                succeeded=False,
                log=f"$ {ticket.command}\ninterrupted: {context.stop_words()}\n",
            )
        if fails:
            return Outcome(
                succeeded=False,
                log=(
                    f"$ {ticket.command}\nsimulated run took {duration:.3f} s\n"
                    f"exit status 1: simulated failure (failure rate {failure_rate:g})\n"
                ),
            )
        return Outcome(
            succeeded=True,
            log=f"$ {ticket.command}\nsimulated run took {duration:.3f} s\nexit status 0\n",
        )
