-- v8 (issue 39): work state — the task an agent is on, its items and notes, per project and git
-- branch ('' outside git or on a detached HEAD). "Latest key wins": an item written again under
-- its key replaces the earlier one.
CREATE TABLE IF NOT EXISTS work_state (
    project TEXT NOT NULL,
    branch TEXT NOT NULL DEFAULT '',
    task TEXT,
    notes TEXT,
    updated_at_epoch INTEGER NOT NULL,
    PRIMARY KEY (project, branch)
);
CREATE TABLE IF NOT EXISTS work_items (
    project TEXT NOT NULL,
    branch TEXT NOT NULL DEFAULT '',
    key TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('todo', 'doing', 'done', 'blocked')),
    created_at_epoch INTEGER NOT NULL,
    updated_at_epoch INTEGER NOT NULL,
    PRIMARY KEY (project, branch, key)
);
