-- v13 (issue 53): memory at the point of action, and what the agent used of what memd showed it.
-- `action_failures`: per project, the last failure of each check command (by its normalised key,
-- `action/normalize.rs`), whether it is still open (not passed since), and the files whose edits
-- made it pass the last time it went from failing to passing (`fix_files`, a JSON list of
-- [file, tool_uses.id]). `suspects`: the files this session edited before the failure.
CREATE TABLE IF NOT EXISTS action_failures (
  project TEXT NOT NULL,
  command_key TEXT NOT NULL,
  command TEXT NOT NULL,
  failed_session TEXT NOT NULL,
  failed_at_epoch INTEGER NOT NULL,
  failure_line TEXT,
  tool_use_row_id INTEGER,
  open INTEGER NOT NULL,
  suspects TEXT NOT NULL DEFAULT '[]',
  fix_files TEXT NOT NULL DEFAULT '[]',
  passed_at_epoch INTEGER,
  PRIMARY KEY (project, command_key)
) WITHOUT ROWID;
-- Successful edits of the last day per project: the candidates for what fixed a failure.
CREATE TABLE IF NOT EXISTS action_edits (
  id INTEGER PRIMARY KEY,
  project TEXT NOT NULL,
  session TEXT NOT NULL,
  file TEXT NOT NULL,
  tool_use_row_id INTEGER NOT NULL,
  at_epoch INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS action_edits_at ON action_edits(project, at_epoch);
-- What memd knows about editing a file: an edit of it that failed (`edit_failed`, resolved by a
-- later successful edit), or a change to it followed by a failing check that later passed
-- (`broke_check`).
CREATE TABLE IF NOT EXISTS action_file_notes (
  project TEXT NOT NULL,
  file TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('edit_failed', 'broke_check')),
  session TEXT NOT NULL,
  at_epoch INTEGER NOT NULL,
  line TEXT,
  command TEXT,
  fix_files TEXT NOT NULL DEFAULT '[]',
  resolved INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (project, file, kind)
) WITHOUT ROWID;
-- Each item memd put into a session's context: SessionStart index rows (`index`), per-prompt
-- context (`prompt`), file context (`file`), action warnings (`action`, `item` = the command key
-- or file; `files`, a JSON list, the files the warning named when it was shown). `delivered`/`used`
-- stay NULL until the session's transcript is read.
CREATE TABLE IF NOT EXISTS injections (
  id INTEGER PRIMARY KEY,
  content_session_id TEXT NOT NULL,
  project TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('index', 'prompt', 'file', 'action')),
  observation_id INTEGER,
  item TEXT,
  files TEXT,
  at_epoch INTEGER NOT NULL,
  delivered INTEGER,
  used INTEGER
);
CREATE INDEX IF NOT EXISTS injections_session ON injections(content_session_id, source, item);
-- Forgetting a record forgets that it was shown; retention drops old rows.
CREATE INDEX IF NOT EXISTS injections_observation ON injections(observation_id) WHERE observation_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS injections_at ON injections(at_epoch);
-- The running totals status and stats show (kept by the writer, never counted from `injections`).
CREATE TABLE IF NOT EXISTS memory_use (
  project TEXT NOT NULL,
  source TEXT NOT NULL,
  injected INTEGER NOT NULL DEFAULT 0,
  delivered INTEGER NOT NULL DEFAULT 0,
  used INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (project, source)
) WITHOUT ROWID;
-- Per record: how often it was injected, delivered (seen in a transcript), used, and when last
-- used (SessionStart's index prefers used records and drops one delivered often and never used:
-- a host whose transcript memd cannot read delivers nothing, so drops nothing).
CREATE TABLE IF NOT EXISTS record_use (
  observation_id INTEGER PRIMARY KEY REFERENCES observations(id) ON DELETE CASCADE,
  injected INTEGER NOT NULL DEFAULT 0,
  delivered INTEGER NOT NULL DEFAULT 0,
  used INTEGER NOT NULL DEFAULT 0,
  last_used_epoch INTEGER
);
CREATE INDEX IF NOT EXISTS record_use_last_used ON record_use(last_used_epoch) WHERE used > 0;
-- The use check finds a session's transcript by its host's session id.
CREATE INDEX IF NOT EXISTS sdk_sessions_content_session ON sdk_sessions(content_session_id);
