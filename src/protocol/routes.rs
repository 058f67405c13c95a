//! The ingest routes of the worker (docs/spec/api.md §3), named once: the router mounts them, the
//! hook posts to them and writes them into spool lines, the spool and replay read them back.

/// One of the four ingest routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IngestRoute {
    /// `POST /api/sessions/init`: a user prompt (UserPromptSubmit).
    Init,
    /// `POST /api/sessions/observations`: a tool use (PostToolUse, PostToolUseFailure).
    Observations,
    /// `POST /api/sessions/summarize`: a summary request (Stop).
    Summarize,
    /// `POST /api/sessions/complete`: the end of a session (SessionEnd).
    Complete,
}

impl IngestRoute {
    pub const ALL: [IngestRoute; 4] = [Self::Init, Self::Observations, Self::Summarize, Self::Complete];

    pub const fn path(self) -> &'static str {
        match self {
            Self::Init => "/api/sessions/init",
            Self::Observations => "/api/sessions/observations",
            Self::Summarize => "/api/sessions/summarize",
            Self::Complete => "/api/sessions/complete",
        }
    }

    /// The route of a path, as written in a spool line.
    pub fn from_path(path: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.path() == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip() {
        for r in IngestRoute::ALL {
            assert_eq!(IngestRoute::from_path(r.path()), Some(r));
        }
        assert_eq!(IngestRoute::from_path("/api/sessions/nope"), None);
    }
}
