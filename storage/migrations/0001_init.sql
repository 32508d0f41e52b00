-- 0001: the initial schema. Timestamps are ISO 8601 UTC text ("2025-01-31T12:00:00.000000Z"),
-- always with microseconds, so text order is time order and range filters can use the indexes.
-- Applied by storage/migrate.py inside one transaction; do not add BEGIN/COMMIT here.

CREATE TABLE queries (
    query_id     TEXT PRIMARY KEY NOT NULL,
    query_text   TEXT NOT NULL,
    thread_id    TEXT,
    user_id      TEXT,
    user_context TEXT,
    status       TEXT NOT NULL DEFAULT 'PENDING'
                 CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED')),
    error        TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);

-- fail_interrupted() looks for PROCESSING queries at every start-up.
CREATE INDEX idx_queries_status ON queries (status);

CREATE TABLE responses (
    response_id          TEXT PRIMARY KEY NOT NULL,
    query_id             TEXT NOT NULL REFERENCES queries (query_id),
    thread_id            TEXT,
    status               TEXT NOT NULL,
    response_text        TEXT NOT NULL,
    sources              TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(sources)),
    confidence_score     REAL NOT NULL DEFAULT 0,
    grounding_confidence REAL NOT NULL DEFAULT 0,
    model_used           TEXT,
    created_at           TEXT NOT NULL
);

CREATE INDEX idx_responses_query_id ON responses (query_id);

CREATE TABLE turns (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id   TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT NOT NULL,
    query_id    TEXT,
    response_id TEXT,
    created_at  TEXT NOT NULL
);

CREATE INDEX idx_turns_thread_id ON turns (thread_id, id);

CREATE TABLE agent_log (
    entry_id         TEXT PRIMARY KEY NOT NULL,
    timestamp        TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    thread_id        TEXT,
    query_id         TEXT,
    query_text       TEXT,
    response_summary TEXT,
    error_details    TEXT,
    execution_time   REAL
);

-- (timestamp, entry_id) is the export's keyset: one index serves both the order and the cursor.
CREATE INDEX idx_agent_log_timestamp ON agent_log (timestamp, entry_id);
CREATE INDEX idx_agent_log_thread_id ON agent_log (thread_id);
CREATE INDEX idx_agent_log_event_type ON agent_log (event_type);

CREATE TABLE feedback (
    response_id TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    vote        INTEGER NOT NULL CHECK (vote IN (1, -1)),
    platform    TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (response_id, user_id)
);

-- export_feedback() streams by (updated_at, response_id, user_id).
CREATE INDEX idx_feedback_updated_at ON feedback (updated_at, response_id, user_id);

CREATE TABLE processed_events (
    platform    TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (platform, event_id)
);
