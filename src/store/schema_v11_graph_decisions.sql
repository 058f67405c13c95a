-- v11 (issue 41): decisions join the graph (`decision —decided→ file`). SQLite cannot widen a
-- CHECK in place, and the graph is derived data: its tables are made again and the start-up
-- backfill draws the graph of every stored observation anew (decisions included).
DROP TABLE IF EXISTS relation_evidence;
DROP TABLE IF EXISTS relations;
DROP TABLE IF EXISTS entity_aliases;
DROP TABLE IF EXISTS entities;
CREATE TABLE IF NOT EXISTS entities (
  id INTEGER PRIMARY KEY,
  project TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('file', 'symbol', 'concept', 'command', 'error', 'dependency', 'decision')),
  name TEXT NOT NULL,
  first_seen_epoch INTEGER NOT NULL,
  UNIQUE (project, kind, name)
);
CREATE TABLE IF NOT EXISTS entity_aliases (
  alias TEXT NOT NULL,
  entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  PRIMARY KEY (alias, entity_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases(entity_id);
CREATE TABLE IF NOT EXISTS relations (
  id INTEGER PRIMARY KEY,
  src INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  dst INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('modified_with', 'fixes', 'fails_with', 'defines', 'tests', 'depends_on', 'decided', 'mentions')),
  UNIQUE (src, dst, kind)
);
CREATE INDEX IF NOT EXISTS relations_dst ON relations(dst);
CREATE TABLE IF NOT EXISTS relation_evidence (
  relation_id INTEGER NOT NULL REFERENCES relations(id) ON DELETE CASCADE,
  observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  PRIMARY KEY (relation_id, observation_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS relation_evidence_observation ON relation_evidence(observation_id);
DELETE FROM meta WHERE key = 'graph_backfill_cursor';
INSERT INTO meta(key, value) SELECT 'graph_backfill_until', CAST(coalesce(max(id), 0) AS TEXT) FROM observations
  WHERE true ON CONFLICT(key) DO UPDATE SET value = excluded.value;
