-- memd team server, schema version 2 (issue 51): members cannot speak in each other's name or
-- place. An origin (the name a member's rows are shown under) and an install (the prefix of its
-- rows' global ids) belong to the role that registered them first (`memd.members`); a member
-- inserts only rows whose origin is one of its own and whose gid carries one of its own installs.
-- Optional per-project grants (`memd.grants`): a project with grants is read and written only by
-- the roles granted it (and admins); a project without is the whole team's.
CREATE TABLE IF NOT EXISTS memd.members (
  origin text PRIMARY KEY,
  install text NOT NULL UNIQUE,
  role name NOT NULL DEFAULT current_user,
  registered_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE memd.members ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS members_read ON memd.members;
CREATE POLICY members_read ON memd.members FOR SELECT TO memd_member USING (true);
DROP POLICY IF EXISTS members_register_own ON memd.members;
CREATE POLICY members_register_own ON memd.members FOR INSERT TO memd_member WITH CHECK (role = current_user);
GRANT SELECT, INSERT ON memd.members TO memd_member;

CREATE TABLE IF NOT EXISTS memd.grants (
  project text NOT NULL,
  role name NOT NULL,
  PRIMARY KEY (project, role)
);
ALTER TABLE memd.grants ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS grants_read ON memd.grants;
CREATE POLICY grants_read ON memd.grants FOR SELECT TO memd_member USING (true);
DROP POLICY IF EXISTS grants_admin ON memd.grants;
CREATE POLICY grants_admin ON memd.grants FOR ALL TO memd_member
  USING (pg_has_role(current_user, 'memd_admin', 'member'))
  WITH CHECK (pg_has_role(current_user, 'memd_admin', 'member'));
GRANT SELECT, INSERT, DELETE ON memd.grants TO memd_member;

-- Whether the current role may read and write `project`.
CREATE OR REPLACE FUNCTION memd.may_use(project text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT NOT EXISTS (SELECT 1 FROM memd.grants g WHERE g.project = may_use.project)
      OR EXISTS (SELECT 1 FROM memd.grants g WHERE g.project = may_use.project AND g.role = current_user)
      OR pg_has_role(current_user, 'memd_admin', 'member')
$$;
-- Whether `origin` and the install of `gid` are the current role's own.
CREATE OR REPLACE FUNCTION memd.own_origin(origin text, gid text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM memd.members m
                 WHERE m.origin = own_origin.origin AND m.role = current_user
                   AND starts_with(own_origin.gid, m.install || '-'))
$$;

DROP POLICY IF EXISTS members_read ON memd.rows;
CREATE POLICY members_read ON memd.rows FOR SELECT TO memd_member USING (memd.may_use(project));
DROP POLICY IF EXISTS members_insert_own ON memd.rows;
CREATE POLICY members_insert_own ON memd.rows FOR INSERT TO memd_member
  WITH CHECK (owner_role = current_user AND memd.own_origin(origin, gid) AND memd.may_use(project));
DROP POLICY IF EXISTS members_change_own ON memd.rows;
CREATE POLICY members_change_own ON memd.rows FOR UPDATE TO memd_member
  USING ((owner_role = current_user AND memd.may_use(project)) OR pg_has_role(current_user, 'memd_admin', 'member'))
  WITH CHECK ((owner_role = current_user AND memd.own_origin(origin, gid) AND memd.may_use(project))
              OR pg_has_role(current_user, 'memd_admin', 'member'));
GRANT EXECUTE ON FUNCTION memd.may_use(text), memd.own_origin(text, text) TO memd_member;
INSERT INTO memd.meta(key, value) VALUES ('schema_version', '2') ON CONFLICT (key) DO UPDATE SET value = excluded.value;
