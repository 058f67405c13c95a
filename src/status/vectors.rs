//! The `vectors` and `chroma` parts of the status document (docs/spec/api.md §6.3), plus the
//! warnings they add (no model, sqlite-vec not loaded) — each said once there.

use crate::actors::chroma_sync::{ChromaSyncMsg, ChromaSyncStatus};
use crate::actors::vector_sync::{VectorSyncMsg, VectorSyncStatus};
use crate::worker::Services;

const RPC_MS: u64 = 2_000;

fn degraded(detail: &str) -> ChromaSyncStatus {
    ChromaSyncStatus {
        enabled: true,
        state: "degraded".into(),
        last_error: Some(detail.into()),
        ..Default::default()
    }
}

/// (`vectors`, `chroma`, warnings).
pub async fn sections(svc: &Services) -> (VectorSyncStatus, ChromaSyncStatus, Vec<String>) {
    let mut warnings = Vec::new();
    let chroma_off = ChromaSyncStatus {
        enabled: false,
        state: "disabled".into(),
        ..Default::default()
    };
    let Some(rt) = &svc.vectors else {
        let off = VectorSyncStatus {
            state: "disabled".into(),
            ..Default::default()
        };
        return (off, chroma_off, warnings);
    };
    let sync = match svc.handles.vector_sync() {
        Some(a) => ractor::call_t!(a, VectorSyncMsg::Status, RPC_MS).ok(),
        None => None,
    };
    let mut doc = sync.unwrap_or_else(|| VectorSyncStatus {
        state: "degraded".into(),
        last_error: Some("the vector sync is not running".into()),
        ..Default::default()
    });
    doc.store = Some(if rt.chroma.is_some() { "chroma" } else { "sqlite" }.into());
    // The code index answers once the first query has built it; sqlite-vec (or a scan) before.
    doc.index = Some(
        if rt.codes.built() {
            "sign-codes"
        } else if rt.extension {
            "sqlite-vec"
        } else {
            "brute-force"
        }
        .into(),
    );
    if !rt.embed.model_present() {
        doc.state = "no_model".into();
        warnings.push(format!(
            "no embedding model in {}: keyword search only (run `memd models install`)",
            svc.settings.get().vectors.model_dir.display()
        ));
    } else if let Some(e) = rt.embed.load_error() {
        doc.state = "degraded".into();
        warnings.push(format!("embedding model failed to load: {e}"));
    }
    if !rt.extension {
        warnings.push("sqlite-vec not loaded: vector queries scan every stored vector".into());
    }
    let chroma = match (&rt.chroma, svc.handles.chroma_sync()) {
        (Some(_), Some(a)) => ractor::call_t!(a, ChromaSyncMsg::Status, RPC_MS).unwrap_or_else(|_| degraded("status timed out")),
        (Some(_), None) => degraded("the chroma sync is not running"),
        _ => chroma_off,
    };
    (doc, chroma, warnings)
}
