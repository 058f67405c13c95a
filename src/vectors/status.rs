//! The `vectors` and `chroma` parts of `GET /api/status` (docs/spec/api.md §6.3), plus the warnings
//! they add (no model, sqlite-vec not loaded) — each said once there.

use serde_json::{Value, json};

use crate::actors::vector_sync::VectorSyncMsg;
use crate::ingress::Services;

const RPC_MS: u64 = 2_000;

/// (`vectors`, `chroma`, warnings).
pub async fn sections(svc: &Services) -> (Value, Value, Vec<String>) {
    let mut warnings = Vec::new();
    let chroma_off = json!({"enabled": false, "state": "disabled", "lag": 0, "last_synced_at": null, "last_error": null});
    let Some(rt) = &svc.vectors else {
        return (json!({"state": "disabled", "store": null}), chroma_off, warnings);
    };
    let sync = match svc.handles.vector_sync() {
        Some(a) => ractor::call_t!(a, VectorSyncMsg::Status, RPC_MS).ok(),
        None => None,
    };
    let store = if rt.chroma.is_some() { "chroma" } else { "sqlite" };
    let mut doc = match &sync {
        Some(s) => json!(s),
        None => json!({"state": "degraded", "last_error": "the vector sync is not running"}),
    };
    doc["store"] = json!(store);
    doc["index"] = json!(if rt.extension { "sqlite-vec" } else { "brute-force" });
    if !rt.embed.model_present() {
        doc["state"] = json!("no_model");
        warnings.push(format!(
            "no embedding model in {}: keyword search only (run `memd models install`)",
            svc.settings.vectors.model_dir.display()
        ));
    } else if let Some(e) = rt.embed.load_error() {
        doc["state"] = json!("degraded");
        warnings.push(format!("embedding model failed to load: {e}"));
    }
    if !rt.extension {
        warnings.push("sqlite-vec not loaded: vector queries scan every stored vector".into());
    }
    let chroma = match (&rt.chroma, svc.handles.chroma_sync()) {
        (Some(_), Some(a)) => ractor::call_t!(a, crate::actors::chroma_sync::ChromaSyncMsg::Status, RPC_MS)
            .map(|s| json!(s))
            .unwrap_or_else(|_| json!({"enabled": true, "state": "degraded", "last_error": "status timed out"})),
        (Some(_), None) => json!({"enabled": true, "state": "degraded", "last_error": "the chroma sync is not running"}),
        _ => chroma_off,
    };
    (doc, chroma, warnings)
}
