-- 0003: the process that owns each query, so start-up recovery fails only the queries whose
-- owner is gone (storage/recovery.py), never those of a batch another ragbot is still answering.
-- owner_started is the process's start time from /proc, telling a recycled pid from the owner.
-- Applied by storage/migrate.py inside one transaction; do not add BEGIN/COMMIT here.

ALTER TABLE queries ADD COLUMN owner_pid INTEGER;
ALTER TABLE queries ADD COLUMN owner_started TEXT;
