"""Bookkeeping of attempts per account."""

import time

FAILURE_LIMIT = 5
COOLDOWN_SECONDS = 900


class AttemptTracker:
    def __init__(self):
        self.failures = {}
        self.blocked_until = {}

    def record_failure(self, account_id):
        count = self.failures.get(account_id, 0) + 1
        self.failures[account_id] = count
        if count >= FAILURE_LIMIT:
            self.blocked_until[account_id] = time.time() + COOLDOWN_SECONDS

    def is_blocked(self, account_id):
        return self.blocked_until.get(account_id, 0) > time.time()
