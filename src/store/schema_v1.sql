-- memd schema version 1 (docs/spec/storage.md §3–§4). Append-only: later changes are new migrations.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  content_session_id TEXT NOT NULL,
  memory_session_id TEXT NOT NULL UNIQUE,
  platform_source TEXT NOT NULL DEFAULT 'claude',
  project TEXT NOT NULL,
  project_root TEXT,
  user_prompt TEXT,
  custom_title TEXT,
  transcript_path TEXT,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','completing','completed','failed')),
  completed_reason TEXT,
  failure_reason TEXT,
  prompt_counter INTEGER NOT NULL DEFAULT 0,
  origin TEXT NOT NULL DEFAULT 'hook' CHECK (origin IN ('hook','api','manual','import')),
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  last_event_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  UNIQUE (platform_source, content_session_id)
);
CREATE INDEX sdk_sessions_project ON sdk_sessions(project, started_at_epoch DESC);
CREATE INDEX sdk_sessions_status ON sdk_sessions(status);
CREATE INDEX sdk_sessions_last_event ON sdk_sessions(last_event_epoch);

CREATE TABLE user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER NOT NULL REFERENCES sdk_sessions(id) ON DELETE CASCADE,
  content_session_id TEXT NOT NULL,
  platform_source TEXT NOT NULL,
  project TEXT NOT NULL,
  prompt_number INTEGER NOT NULL,
  prompt_text TEXT NOT NULL,
  is_private INTEGER NOT NULL DEFAULT 0 CHECK (is_private IN (0,1)),
  prompt_id TEXT,
  cwd TEXT,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  UNIQUE (session_db_id, prompt_number)
);
CREATE INDEX user_prompts_session_time ON user_prompts(session_db_id, created_at_epoch);
CREATE INDEX user_prompts_project ON user_prompts(project, platform_source, created_at_epoch DESC);
CREATE INDEX user_prompts_time ON user_prompts(created_at_epoch DESC);

CREATE TABLE tool_uses (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER NOT NULL REFERENCES sdk_sessions(id) ON DELETE CASCADE,
  content_session_id TEXT NOT NULL,
  platform_source TEXT NOT NULL,
  project TEXT NOT NULL,
  prompt_number INTEGER NOT NULL,
  prompt_id TEXT,
  tool_use_id TEXT,
  tool_name TEXT NOT NULL,
  tool_input TEXT NOT NULL,
  tool_response TEXT NOT NULL,
  is_error INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0,1)),
  cwd TEXT,
  agent_id TEXT,
  agent_type TEXT,
  duration_ms INTEGER,
  input_chars INTEGER NOT NULL,
  response_chars INTEGER NOT NULL,
  truncated INTEGER NOT NULL DEFAULT 0,
  images_stripped INTEGER NOT NULL DEFAULT 0,
  redactions INTEGER NOT NULL DEFAULT 0,
  occurred_at_epoch INTEGER NOT NULL,
  created_at_epoch INTEGER NOT NULL
);
CREATE UNIQUE INDEX tool_uses_tool_use_id ON tool_uses(session_db_id, tool_use_id) WHERE tool_use_id IS NOT NULL;
CREATE INDEX tool_uses_time ON tool_uses(created_at_epoch);
CREATE INDEX tool_uses_session_prompt ON tool_uses(session_db_id, prompt_number);

CREATE TABLE pending_messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_db_id INTEGER NOT NULL REFERENCES sdk_sessions(id) ON DELETE CASCADE,
  content_session_id TEXT NOT NULL,
  message_type TEXT NOT NULL CHECK (message_type IN ('observation','summarize')),
  tool_use_row_id INTEGER REFERENCES tool_uses(id),
  tool_use_id TEXT,
  prompt_number INTEGER NOT NULL DEFAULT 0,
  project TEXT,
  cwd TEXT,
  agent_id TEXT,
  agent_type TEXT,
  last_assistant_message TEXT,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','processing','failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  next_attempt_epoch INTEGER NOT NULL DEFAULT 0,
  created_at_epoch INTEGER NOT NULL,
  claimed_at_epoch INTEGER,
  failed_at_epoch INTEGER
);
CREATE UNIQUE INDEX pending_tool_use_id ON pending_messages(session_db_id, tool_use_id) WHERE tool_use_id IS NOT NULL;
CREATE UNIQUE INDEX pending_one_summarize ON pending_messages(session_db_id) WHERE message_type = 'summarize' AND status = 'pending';
CREATE INDEX pending_session_status ON pending_messages(session_db_id, status, id);
CREATE INDEX pending_status_due ON pending_messages(status, next_attempt_epoch);

CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE,
  project TEXT NOT NULL,
  merged_into_project TEXT,
  platform_source TEXT NOT NULL,
  type TEXT NOT NULL,
  title TEXT,
  subtitle TEXT,
  narrative TEXT,
  facts TEXT NOT NULL DEFAULT '[]',
  concepts TEXT NOT NULL DEFAULT '[]',
  files_read TEXT NOT NULL DEFAULT '[]',
  files_modified TEXT NOT NULL DEFAULT '[]',
  prompt_number INTEGER,
  discovery_tokens INTEGER NOT NULL DEFAULT 0,
  content_hash TEXT NOT NULL,
  origin TEXT NOT NULL CHECK (origin IN ('observer','extractive','manual','import')),
  generated_by_model TEXT,
  agent_id TEXT,
  agent_type TEXT,
  metadata TEXT,
  occurrence_count INTEGER NOT NULL DEFAULT 1,
  reinforcement_dates TEXT NOT NULL DEFAULT '[]',
  last_reinforced_epoch INTEGER,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  UNIQUE (memory_session_id, content_hash)
);
CREATE INDEX observations_project ON observations(project, platform_source, created_at_epoch DESC);
CREATE INDEX observations_merged ON observations(merged_into_project, created_at_epoch DESC) WHERE merged_into_project IS NOT NULL;
CREATE INDEX observations_time ON observations(created_at_epoch DESC);
CREATE INDEX observations_type ON observations(type);

CREATE TABLE observation_sources (
  observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  tool_use_row_id INTEGER NOT NULL REFERENCES tool_uses(id) ON DELETE CASCADE,
  PRIMARY KEY (observation_id, tool_use_row_id)
) WITHOUT ROWID;
CREATE INDEX observation_sources_tool_use ON observation_sources(tool_use_row_id);

CREATE TABLE observation_files (
  path TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('read','modified')),
  observation_id INTEGER NOT NULL REFERENCES observations(id) ON DELETE CASCADE,
  PRIMARY KEY (path, kind, observation_id)
) WITHOUT ROWID;
CREATE INDEX observation_files_obs ON observation_files(observation_id);

CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_session_id TEXT NOT NULL REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE,
  project TEXT NOT NULL,
  platform_source TEXT NOT NULL,
  merged_into_project TEXT,
  request TEXT, investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT, notes TEXT,
  files_read TEXT NOT NULL DEFAULT '[]',
  files_edited TEXT NOT NULL DEFAULT '[]',
  prompt_number INTEGER,
  discovery_tokens INTEGER NOT NULL DEFAULT 0,
  origin TEXT,
  generated_by_model TEXT,
  created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  UNIQUE (memory_session_id, prompt_number)
);
CREATE INDEX session_summaries_project ON session_summaries(project, platform_source, created_at_epoch DESC);
CREATE INDEX session_summaries_time ON session_summaries(created_at_epoch DESC);

CREATE TABLE token_usage (
  day TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
  calls INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0, reasks INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  budget_tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, provider, model)
) WITHOUT ROWID;

CREATE TABLE vector_watermarks (
  target TEXT NOT NULL,
  doc_kind TEXT NOT NULL CHECK (doc_kind IN ('observation','summary','prompt')),
  last_row_id INTEGER NOT NULL,
  updated_at_epoch INTEGER NOT NULL,
  PRIMARY KEY (target, doc_kind)
);
CREATE TABLE vector_sync (
  target TEXT NOT NULL,
  doc_kind TEXT NOT NULL,
  row_id INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending','failed','delete_pending')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  updated_at_epoch INTEGER NOT NULL,
  PRIMARY KEY (target, doc_kind, row_id)
) WITHOUT ROWID;
CREATE INDEX vector_sync_state ON vector_sync(target, state);
CREATE TABLE vectors (
  doc_id TEXT PRIMARY KEY,
  doc_kind TEXT NOT NULL,
  row_id INTEGER NOT NULL,
  field TEXT NOT NULL,
  project TEXT NOT NULL,
  platform_source TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL,
  model TEXT NOT NULL,
  dim INTEGER NOT NULL,
  embedding BLOB NOT NULL
) WITHOUT ROWID;
CREATE INDEX vectors_row ON vectors(doc_kind, row_id);
CREATE INDEX vectors_project ON vectors(project);

CREATE TABLE ingest_events (
  event_id TEXT PRIMARY KEY,
  route TEXT NOT NULL,
  session_db_id INTEGER,
  prompt_number INTEGER,
  created_at_epoch INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX ingest_events_time ON ingest_events(created_at_epoch);

CREATE TABLE tombstones (
  memory_session_id TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  observation_id INTEGER NOT NULL,
  reason TEXT,
  deleted_at_epoch INTEGER NOT NULL,
  PRIMARY KEY (memory_session_id, content_hash)
) WITHOUT ROWID;

CREATE TABLE import_map (
  source TEXT NOT NULL, kind TEXT NOT NULL, source_id INTEGER NOT NULL, target_id INTEGER,
  PRIMARY KEY (source, kind, source_id)
) WITHOUT ROWID;

-- Full-text search: unicode61 for words, trigram for substrings in every script (§4).
CREATE VIRTUAL TABLE observations_fts USING fts5(title, subtitle, narrative, facts, concepts, content='observations', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE observations_tri USING fts5(title, subtitle, narrative, facts, concepts, content='observations', content_rowid='id', tokenize='trigram case_sensitive 0');
CREATE VIRTUAL TABLE session_summaries_fts USING fts5(request, investigated, learned, completed, next_steps, notes, content='session_summaries', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE session_summaries_tri USING fts5(request, investigated, learned, completed, next_steps, notes, content='session_summaries', content_rowid='id', tokenize='trigram case_sensitive 0');
CREATE VIRTUAL TABLE user_prompts_fts USING fts5(prompt_text, content='user_prompts', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE user_prompts_tri USING fts5(prompt_text, content='user_prompts', content_rowid='id', tokenize='trigram case_sensitive 0');

-- Triggers (§4.3)
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts) VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
  INSERT INTO observations_tri(rowid, title, subtitle, narrative, facts, concepts) VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
  INSERT INTO observations_tri(observations_tri, rowid, title, subtitle, narrative, facts, concepts) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
END;
CREATE TRIGGER observations_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
  INSERT INTO observations_tri(observations_tri, rowid, title, subtitle, narrative, facts, concepts) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts) VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
  INSERT INTO observations_tri(rowid, title, subtitle, narrative, facts, concepts) VALUES (new.id, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
END;
CREATE TRIGGER session_summaries_ai AFTER INSERT ON session_summaries BEGIN
  INSERT INTO session_summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
  INSERT INTO session_summaries_tri(rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
END;
CREATE TRIGGER session_summaries_ad AFTER DELETE ON session_summaries BEGIN
  INSERT INTO session_summaries_fts(session_summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
  INSERT INTO session_summaries_tri(session_summaries_tri, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
END;
CREATE TRIGGER session_summaries_au AFTER UPDATE OF request, investigated, learned, completed, next_steps, notes ON session_summaries BEGIN
  INSERT INTO session_summaries_fts(session_summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
  INSERT INTO session_summaries_tri(session_summaries_tri, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
  INSERT INTO session_summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
  INSERT INTO session_summaries_tri(rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
END;
CREATE TRIGGER user_prompts_ai AFTER INSERT ON user_prompts BEGIN
  INSERT INTO user_prompts_fts(rowid, prompt_text) VALUES (new.id, new.prompt_text);
  INSERT INTO user_prompts_tri(rowid, prompt_text) VALUES (new.id, new.prompt_text);
END;
CREATE TRIGGER user_prompts_ad AFTER DELETE ON user_prompts BEGIN
  INSERT INTO user_prompts_fts(user_prompts_fts, rowid, prompt_text) VALUES ('delete', old.id, old.prompt_text);
  INSERT INTO user_prompts_tri(user_prompts_tri, rowid, prompt_text) VALUES ('delete', old.id, old.prompt_text);
END;
CREATE TRIGGER user_prompts_au AFTER UPDATE OF prompt_text ON user_prompts BEGIN
  INSERT INTO user_prompts_fts(user_prompts_fts, rowid, prompt_text) VALUES ('delete', old.id, old.prompt_text);
  INSERT INTO user_prompts_tri(user_prompts_tri, rowid, prompt_text) VALUES ('delete', old.id, old.prompt_text);
  INSERT INTO user_prompts_fts(rowid, prompt_text) VALUES (new.id, new.prompt_text);
  INSERT INTO user_prompts_tri(rowid, prompt_text) VALUES (new.id, new.prompt_text);
END;
CREATE TRIGGER observations_files_ai AFTER INSERT ON observations BEGIN
  INSERT OR IGNORE INTO observation_files(path, kind, observation_id)
    SELECT value, 'read', new.id FROM json_each(new.files_read) WHERE type = 'text';
  INSERT OR IGNORE INTO observation_files(path, kind, observation_id)
    SELECT value, 'modified', new.id FROM json_each(new.files_modified) WHERE type = 'text';
END;
CREATE TRIGGER observations_vec_ad AFTER DELETE ON observations BEGIN
  DELETE FROM vectors WHERE doc_kind = 'observation' AND row_id = old.id;
  INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch)
    SELECT value, 'observation', old.id, 'delete_pending', 0, CAST(unixepoch('subsec') * 1000 AS INTEGER)
    FROM meta WHERE key = 'vector_target' AND value LIKE 'chroma:%';
END;
CREATE TRIGGER session_summaries_vec_ad AFTER DELETE ON session_summaries BEGIN
  DELETE FROM vectors WHERE doc_kind = 'summary' AND row_id = old.id;
  INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch)
    SELECT value, 'summary', old.id, 'delete_pending', 0, CAST(unixepoch('subsec') * 1000 AS INTEGER)
    FROM meta WHERE key = 'vector_target' AND value LIKE 'chroma:%';
END;
CREATE TRIGGER user_prompts_vec_ad AFTER DELETE ON user_prompts BEGIN
  DELETE FROM vectors WHERE doc_kind = 'prompt' AND row_id = old.id;
  INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch)
    SELECT value, 'prompt', old.id, 'delete_pending', 0, CAST(unixepoch('subsec') * 1000 AS INTEGER)
    FROM meta WHERE key = 'vector_target' AND value LIKE 'chroma:%';
END;
CREATE TRIGGER session_summaries_vec_au AFTER UPDATE OF request, investigated, learned, completed, next_steps, notes ON session_summaries BEGIN
  DELETE FROM vectors WHERE doc_kind = 'summary' AND row_id = new.id;
  INSERT OR REPLACE INTO vector_sync(target, doc_kind, row_id, state, attempts, updated_at_epoch)
    SELECT value, 'summary', new.id, 'pending', 0, CAST(unixepoch('subsec') * 1000 AS INTEGER)
    FROM meta WHERE key = 'vector_target';
END;
