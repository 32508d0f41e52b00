-- 0002: when each state was entered. One row per state entered by a question (machine 'query':
-- PENDING, PROCESSING, COMPLETED, FAILED) and by its response (machine 'response': PROCESSING,
-- COMPLETED, ERROR), oldest first by id. ``ragbot logs show`` reads it into the question's timeline.
-- Applied by storage/migrate.py inside one transaction; do not add BEGIN/COMMIT here.

CREATE TABLE status_history (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    query_id   TEXT NOT NULL REFERENCES queries (query_id) ON DELETE CASCADE,
    machine    TEXT NOT NULL,
    status     TEXT NOT NULL,
    entered_at TEXT NOT NULL,
    error      TEXT,
    CHECK ((machine = 'query' AND status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'))
        OR (machine = 'response' AND status IN ('PROCESSING', 'COMPLETED', 'ERROR')))
);

CREATE INDEX idx_status_history_query_id ON status_history (query_id, id);

-- The response's final state, beside its status.
ALTER TABLE responses ADD COLUMN state TEXT NOT NULL DEFAULT 'COMPLETED'
    CHECK (state IN ('COMPLETED', 'ERROR'));

UPDATE responses SET state = 'ERROR' WHERE status = 'retrieval_failed';

-- Questions asked before this migration: what is known is when they were created (PENDING)
-- and when they last changed (their current status); the steps between were not recorded.
INSERT INTO status_history (query_id, machine, status, entered_at, error)
    SELECT query_id, 'query', 'PENDING', created_at, NULL FROM queries;

INSERT INTO status_history (query_id, machine, status, entered_at, error)
    SELECT query_id, 'query', status, updated_at, error FROM queries WHERE status <> 'PENDING';
