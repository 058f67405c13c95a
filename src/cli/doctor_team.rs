//! `memd doctor`'s team lines (issue 40): with `MEMD_TEAM_DATABASE_URL` set, is the server
//! reachable, is its schema one this memd can use, and may the role memd connects as sync — a
//! `memd_member` that row-level security binds. No team setting: one note, no connection.

use std::time::Duration;

use super::doctor::{Report, Verdict};
use crate::config::Settings;
use crate::team::{TeamError, check};

pub fn team(r: &mut Report, settings: &Settings) {
    let Some(t) = &settings.team else {
        r.line(
            Verdict::Note,
            "team",
            "off (no MEMD_TEAM_DATABASE_URL): memory stays on this machine",
        );
        return;
    };
    let projects = match t.projects.is_empty() {
        true => "no project shared yet (`memd team share <project>`)".to_string(),
        false => format!("sharing {}", t.projects.join(", ")),
    };
    r.line(Verdict::Note, "team", format!("as {}, {projects}", t.origin));
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return r.line(Verdict::Fail, "team server", format!("no runtime: {e}")),
    };
    rt.block_on(async {
        let connect = crate::team::server::connect(t.url.expose(), t.ca_file.as_deref());
        let client = match tokio::time::timeout(Duration::from_secs(12), connect).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return r.line(Verdict::Fail, "team server", format!("{e} (memory keeps working locally)")),
            Err(_) => return r.line(Verdict::Fail, "team server", "no answer in 12 s (memory keeps working locally)"),
        };
        r.line(Verdict::Ok, "team server", "reachable");
        match crate::team::server::check_schema(&client).await {
            Ok(found) => r.line(Verdict::Ok, "team schema", format!("version {found}")),
            Err(TeamError::NoSchema) => r.line(Verdict::Fail, "team schema", "none: run `memd team init <owner URL>` once"),
            Err(TeamError::NewerSchema { found, known }) => r.line(
                Verdict::Fail,
                "team schema",
                format!("version {found}, newer than this memd knows ({known}): upgrade memd"),
            ),
            Err(e @ TeamError::NotMember(_)) => return r.line(Verdict::Fail, "team role", e),
            Err(e) => return r.line(Verdict::Fail, "team schema", e),
        }
        match check::rights(&client).await {
            Ok(rights) => match rights.problem() {
                None => r.line(
                    Verdict::Ok,
                    "team role",
                    format!("{} is a memd_member bound by row-level security", rights.role),
                ),
                Some(p) => r.line(Verdict::Fail, "team role", p),
            },
            Err(e) => r.line(Verdict::Fail, "team role", e),
        }
    });
}
