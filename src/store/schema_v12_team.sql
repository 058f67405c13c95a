-- v12 (issue 40): team memory. `team_rows` maps global ids to local observations or summaries
-- (`mine` = pushed from here; else pulled), `team_tombstones` holds forgets waiting to reach the
-- server; forgetting a shared row queues its tombstone (triggers), a row pulled as deleted is
-- removed here; an edit of a pushed observation is marked to be sent again (trigger), and a pulled
-- row whose sequence moved replaces the local copy's text.
CREATE TABLE IF NOT EXISTS team_rows (
  gid TEXT PRIMARY KEY,
  observation_id INTEGER,
  summary_id INTEGER,
  origin TEXT NOT NULL,
  -- Local edits of a pushed observation not sent yet (a counter: an edit during a send is kept).
  edited INTEGER NOT NULL DEFAULT 0,
  -- A work state's version (its updated_at_epoch) pushed from here.
  version INTEGER,
  mine INTEGER NOT NULL,
  seq INTEGER,
  at_epoch INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS team_rows_observation ON team_rows(observation_id);
CREATE INDEX IF NOT EXISTS team_rows_summary ON team_rows(summary_id) WHERE summary_id IS NOT NULL;
-- Teammates' work states as last pulled (one per origin, project and branch).
CREATE TABLE IF NOT EXISTS team_work_state (
  gid TEXT PRIMARY KEY,
  origin TEXT NOT NULL,
  project TEXT NOT NULL,
  branch TEXT NOT NULL,
  body TEXT NOT NULL,
  seq INTEGER NOT NULL,
  updated_at_epoch INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS team_tombstones (
  gid TEXT PRIMARY KEY,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'refused')),
  at_epoch INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS team_forget BEFORE DELETE ON observations BEGIN
  INSERT OR IGNORE INTO team_tombstones(gid, at_epoch)
    SELECT gid, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM team_rows WHERE observation_id = OLD.id;
  UPDATE team_rows SET observation_id = NULL WHERE observation_id = OLD.id;
END;
CREATE TRIGGER IF NOT EXISTS team_forget_summary BEFORE DELETE ON session_summaries BEGIN
  INSERT OR IGNORE INTO team_tombstones(gid, at_epoch)
    SELECT gid, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM team_rows WHERE summary_id = OLD.id;
  UPDATE team_rows SET summary_id = NULL WHERE summary_id = OLD.id;
END;
CREATE TRIGGER IF NOT EXISTS team_edit AFTER UPDATE OF title, subtitle, narrative, facts, concepts, files_read, files_modified
  ON observations BEGIN
  UPDATE team_rows SET edited = edited + 1 WHERE observation_id = NEW.id AND mine = 1;
END;
