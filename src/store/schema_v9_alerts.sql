-- v9 (issue 39): the alert outbox — one row per observation of an alerting type, delivered to
-- the configured webhook with retries; `meta.alerts_cursor` is the last observation id scanned.
CREATE TABLE IF NOT EXISTS alert_outbox (
    observation_id INTEGER PRIMARY KEY,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_epoch INTEGER NOT NULL,
    last_error TEXT,
    created_at_epoch INTEGER NOT NULL,
    sent_at_epoch INTEGER
);
CREATE INDEX IF NOT EXISTS alert_outbox_due ON alert_outbox(status, next_attempt_epoch);
