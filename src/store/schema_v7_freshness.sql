-- v7: memory that stays current (issue 38).
-- Code anchors: when an observation's session worked inside a git work tree, each file it names
-- is anchored to the commit that was HEAD (`head_commit`), the file's blob id there (`head_blob`,
-- NULL when the file was not committed) and the blob id of the content on disk when the anchor was
-- taken (`content_blob`, hashed as git hashes a blob; NULL when the file was gone). The file is
-- changed by a later commit when HEAD's blob is neither of the two (src/freshness/staleness.rs).
CREATE TABLE observation_anchors (
  observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  repo_root TEXT NOT NULL,
  path TEXT NOT NULL,
  head_commit TEXT,
  head_blob TEXT,
  content_blob TEXT,
  PRIMARY KEY (observation_id, path)
) WITHOUT ROWID;
CREATE INDEX observation_anchors_root ON observation_anchors(repo_root, path);

-- Observations waiting for their anchors (taken off the hook's and the observer's paths).
CREATE TABLE anchor_queue (observation_id INTEGER PRIMARY KEY, queued_at_epoch INTEGER NOT NULL);
CREATE TRIGGER observations_anchor_queue AFTER INSERT ON observations
  WHEN NEW.origin IN ('observer', 'extractive')
BEGIN
  INSERT OR IGNORE INTO anchor_queue(observation_id, queued_at_epoch) VALUES (NEW.id, NEW.created_at_epoch);
END;
CREATE TRIGGER observations_anchor_unqueue AFTER DELETE ON observations
BEGIN
  DELETE FROM anchor_queue WHERE observation_id = OLD.id;
END;

-- The HEAD each work tree was last checked at: an unmoved HEAD needs no check.
CREATE TABLE anchor_roots (
  repo_root TEXT PRIMARY KEY,
  checked_head TEXT,
  checked_at_epoch INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
-- Which work trees a project's anchors lie in (what SessionStart checks for a project).
CREATE TABLE anchor_root_projects (
  project TEXT NOT NULL,
  repo_root TEXT NOT NULL,
  PRIMARY KEY (project, repo_root)
) WITHOUT ROWID;

-- Staleness: the commit that changed (or deleted) a file the observation is about, that file and
-- the commit's time. Supersession: the observation that replaces this one and why
-- (`explicit`, `same title`, `same subject`, `duplicate`, `resolved`, `llm`).
ALTER TABLE observations ADD COLUMN stale_commit TEXT;
ALTER TABLE observations ADD COLUMN stale_file TEXT;
ALTER TABLE observations ADD COLUMN stale_at_epoch INTEGER;
ALTER TABLE observations ADD COLUMN superseded_by INTEGER REFERENCES observations(id) ON DELETE SET NULL;
ALTER TABLE observations ADD COLUMN supersede_reason TEXT;
CREATE INDEX observations_superseded_by ON observations(superseded_by) WHERE superseded_by IS NOT NULL;

-- Two live observations on the same file or topic whose claims disagree, for a person to resolve
-- (`keep` one: the other is superseded; `both`; `forget` one).
CREATE TABLE contradictions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  older_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  newer_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  reason TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  resolved_at_epoch INTEGER,
  resolution TEXT,
  UNIQUE (older_id, newer_id)
);
CREATE INDEX contradictions_open ON contradictions(resolved_at_epoch, id);

-- Every change a consolidation pass made: what, why, before and after (JSON).
CREATE TABLE consolidation_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  at_epoch INTEGER NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('merge','absolute_date','fold_chain')),
  observation_id INTEGER,
  other_id INTEGER,
  reason TEXT NOT NULL,
  before TEXT,
  after TEXT
);
CREATE INDEX consolidation_log_time ON consolidation_log(at_epoch DESC, id DESC);
