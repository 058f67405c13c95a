-- memd team server, schema version 1 (docs/spec/team.md). Run once by `memd team init` with the
-- owner's connection; every statement is idempotent. Members are PostgreSQL roles granted
-- `memd_member`; a row belongs to the role that pushed it (`owner_role`), enforced by row-level
-- security: members read every row, insert only their own, and tombstone or edit only their own
-- (or any, with `memd_admin`).
CREATE SCHEMA IF NOT EXISTS memd;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memd_member') THEN CREATE ROLE memd_member NOLOGIN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memd_admin') THEN CREATE ROLE memd_admin NOLOGIN; END IF;
END $$;
CREATE TABLE IF NOT EXISTS memd.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE SEQUENCE IF NOT EXISTS memd.row_seq;
CREATE TABLE IF NOT EXISTS memd.rows (
  gid text PRIMARY KEY,
  seq bigint NOT NULL UNIQUE DEFAULT nextval('memd.row_seq'),
  kind text NOT NULL CHECK (kind IN ('observation', 'summary', 'memory', 'work_state')),
  project text NOT NULL,
  origin text NOT NULL,
  owner_role name NOT NULL DEFAULT current_user,
  provenance text NOT NULL,
  content_hash text NOT NULL,
  body jsonb NOT NULL,
  created_at_epoch bigint NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  pushed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS rows_project_seq ON memd.rows (project, seq);
ALTER TABLE memd.rows ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS members_read ON memd.rows;
CREATE POLICY members_read ON memd.rows FOR SELECT TO memd_member USING (true);
DROP POLICY IF EXISTS members_insert_own ON memd.rows;
CREATE POLICY members_insert_own ON memd.rows FOR INSERT TO memd_member WITH CHECK (owner_role = current_user);
DROP POLICY IF EXISTS members_change_own ON memd.rows;
CREATE POLICY members_change_own ON memd.rows FOR UPDATE TO memd_member
  USING (owner_role = current_user OR pg_has_role(current_user, 'memd_admin', 'member'))
  WITH CHECK (owner_role = current_user OR pg_has_role(current_user, 'memd_admin', 'member'));
GRANT USAGE ON SCHEMA memd TO memd_member;
GRANT SELECT ON memd.meta TO memd_member;
GRANT SELECT, INSERT, UPDATE ON memd.rows TO memd_member;
GRANT USAGE, SELECT ON SEQUENCE memd.row_seq TO memd_member;
INSERT INTO memd.meta(key, value) VALUES ('schema_version', '1') ON CONFLICT (key) DO UPDATE SET value = excluded.value;
