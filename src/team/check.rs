//! What `memd doctor` asks the team server (issue 40) beyond the worker's own schema check
//! (`server::check_schema`): the rights of the role memd connects as — a member of `memd_member` that can
//! read and write `memd.rows`, on a table with row-level security that the role does not bypass
//! (an owner or superuser connection would let this machine forget anyone's rows).

use tokio_postgres::Client;

use super::TeamError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rights {
    pub role: String,
    pub member: bool,
    pub can_read: bool,
    pub can_write: bool,
    pub row_security: bool,
    /// Superuser, `BYPASSRLS` or the table's owner: row-level security does not apply.
    pub bypasses: bool,
}

pub async fn rights(client: &Client) -> Result<Rights, TeamError> {
    let row = client
        .query_one(
            "SELECT current_user::text,
                    pg_has_role(current_user, 'memd_member', 'member') AS member,
                    has_table_privilege('memd.rows', 'SELECT') AS can_read,
                    has_table_privilege('memd.rows', 'INSERT') AND has_table_privilege('memd.rows', 'UPDATE') AS can_write,
                    c.relrowsecurity AS row_security,
                    r.rolsuper OR r.rolbypassrls OR pg_has_role(current_user, c.relowner, 'member') AS bypasses
             FROM pg_class c, pg_roles r
             WHERE c.oid = 'memd.rows'::regclass AND r.rolname = current_user",
            &[],
        )
        .await?;
    Ok(Rights {
        role: row.get(0),
        member: row.get("member"),
        can_read: row.get("can_read"),
        can_write: row.get("can_write"),
        row_security: row.get("row_security"),
        bypasses: row.get("bypasses"),
    })
}

impl Rights {
    /// None when the role is fit to sync; else what is wrong and the fix.
    pub fn problem(&self) -> Option<String> {
        let role = &self.role;
        if !self.member || !self.can_read || !self.can_write {
            return Some(format!(
                "role {role} cannot read and write memd.rows: the team's admin runs `GRANT memd_member TO {role}`"
            ));
        }
        if !self.row_security {
            return Some("row-level security is off on memd.rows: run `memd team init <owner URL>` again".into());
        }
        if self.bypasses {
            return Some(format!(
                "role {role} owns memd.rows or is a superuser, so row-level security does not bind it: \
                 connect as a member role (CREATE ROLE … LOGIN; GRANT memd_member TO …)"
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit() -> Rights {
        Rights {
            role: "alice".into(),
            member: true,
            can_read: true,
            can_write: true,
            row_security: true,
            bypasses: false,
        }
    }

    #[test]
    fn a_member_is_fit_and_an_owner_or_outsider_is_told_the_fix() {
        assert_eq!(fit().problem(), None);
        let outsider = Rights { member: false, ..fit() };
        assert!(outsider.problem().unwrap().contains("GRANT memd_member TO alice"));
        let owner = Rights { bypasses: true, ..fit() };
        assert!(owner.problem().unwrap().contains("row-level security does not bind it"));
        let off = Rights {
            row_security: false,
            ..fit()
        };
        assert!(off.problem().unwrap().contains("memd team init"));
    }
}
