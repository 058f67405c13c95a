//! A thin client of a Chroma server's HTTP API v2 (chromadb 1.x): one collection per data
//! directory, memd supplies every embedding (docs/spec/retrieval.md §8.3).

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use super::VectorError;
use super::documents::{DocKind, Document};
use super::embedder::DIM;
use super::nearest::{Neighbour, VectorScope};
use crate::config::ChromaSettings;

/// Documents per upsert call (spec: ≤ 100).
pub const UPSERT_MAX: usize = 100;
const TIMEOUT: Duration = Duration::from_secs(10);

pub struct ChromaClient {
    http: reqwest::Client,
    settings: ChromaSettings,
    /// `memd-` + the first 12 hex characters of `meta.db_id`.
    pub collection_name: String,
    db_id: String,
    /// The encoder's model name, on the collection and on every document.
    model: &'static str,
    collection_id: Mutex<Option<String>>,
}

impl std::fmt::Debug for ChromaClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChromaClient")
            .field("url", &self.settings.url)
            .field("collection", &self.collection_name)
            .finish()
    }
}

fn err(e: impl std::fmt::Display) -> VectorError {
    VectorError::Chroma(e.to_string())
}

/// The collection name of a database id.
pub fn collection_name(db_id: &str) -> String {
    let hex: String = db_id.chars().filter(char::is_ascii_hexdigit).take(12).collect();
    format!("memd-{hex}")
}

/// The `where` filter of a scope (None = no filter).
pub fn where_filter(scope: &VectorScope) -> Option<Value> {
    let mut clauses = Vec::new();
    if !scope.kinds.is_empty() {
        let types: Vec<&str> = scope.kinds.iter().map(|k| k.doc_type()).collect();
        clauses.push(json!({"doc_type": {"$in": types}}));
    }
    if !scope.projects.is_empty() {
        clauses.push(json!({"project": {"$in": scope.projects}}));
    }
    if let Some(p) = &scope.platform_source {
        clauses.push(json!({"platform_source": {"$eq": p}}));
    }
    if let Some(s) = scope.date_start {
        clauses.push(json!({"created_at_epoch": {"$gte": s}}));
    }
    if let Some(e) = scope.date_end {
        clauses.push(json!({"created_at_epoch": {"$lte": e}}));
    }
    match clauses.len() {
        0 => None,
        1 => clauses.pop(),
        _ => Some(json!({"$and": clauses})),
    }
}

fn kind_of_doc_type(t: &str) -> Option<DocKind> {
    DocKind::ALL.into_iter().find(|k| k.doc_type() == t)
}

impl ChromaClient {
    pub fn new(settings: &ChromaSettings, db_id: &str, model: &'static str) -> Self {
        Self {
            http: crate::providers::http_client(TIMEOUT),
            settings: settings.clone(),
            collection_name: collection_name(db_id),
            db_id: db_id.to_string(),
            model,
            collection_id: Mutex::new(None),
        }
    }

    /// The target name used in watermarks and `vector_sync`.
    pub fn target(&self) -> String {
        format!("chroma:{}", self.collection_name)
    }

    fn db_path(&self) -> String {
        format!(
            "{}/api/v2/tenants/{}/databases/{}",
            self.settings.url, self.settings.tenant, self.settings.database
        )
    }

    async fn send(&self, method: reqwest::Method, url: String, body: Option<Value>) -> Result<Value, VectorError> {
        let mut req = self.http.request(method, &url);
        if let Some(t) = &self.settings.token {
            req = req.header("x-chroma-token", t.expose());
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.map_err(|e| err(format!("unreachable: {}", e.without_url())))?;
        let status = resp.status();
        let text = resp.text().await.map_err(err)?;
        if !status.is_success() {
            let snippet: String = text.chars().take(300).collect();
            return Err(err(format!("http {}: {snippet}", status.as_u16())));
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn heartbeat(&self) -> Result<(), VectorError> {
        self.send(reqwest::Method::GET, format!("{}/api/v2/heartbeat", self.settings.url), None)
            .await
            .map(|_| ())
    }

    /// Get-or-creates the collection; one made for another model or dimension is deleted and
    /// rebuilt. Returns (id, rebuilt) — rebuilt means a full resync is needed.
    pub async fn ensure_collection(&self) -> Result<(String, bool), VectorError> {
        if let Some(id) = self.collection_id.lock().map_err(err)?.clone() {
            return Ok((id, false));
        }
        let metadata = json!({"hnsw:space": "cosine", "memd_db_id": self.db_id, "memd_embedding_model": self.model, "memd_dim": DIM});
        let create = json!({"name": self.collection_name, "get_or_create": true, "metadata": metadata});
        let url = format!("{}/collections", self.db_path());
        let mut got = self.send(reqwest::Method::POST, url.clone(), Some(create.clone())).await?;
        let mut rebuilt = false;
        let meta = &got["metadata"];
        if meta["memd_embedding_model"] != json!(self.model) || meta["memd_dim"] != json!(DIM) {
            let id = got["id"].as_str().unwrap_or_default().to_string();
            tracing::warn!(collection = %self.collection_name, "chroma collection of another model; rebuilding it");
            self.send(
                reqwest::Method::DELETE,
                format!("{}/collections/{}", self.db_path(), self.collection_name),
                None,
            )
            .await
            .or_else(|_| Ok::<_, VectorError>(Value::Null))?;
            let _ = id;
            got = self.send(reqwest::Method::POST, url, Some(create)).await?;
            rebuilt = true;
        }
        let id = got["id"]
            .as_str()
            .ok_or_else(|| err("collection answer without an id"))?
            .to_string();
        *self.collection_id.lock().map_err(err)? = Some(id.clone());
        Ok((id, rebuilt))
    }

    /// Forgets the cached collection id (after an error the collection may have been removed).
    pub fn forget_collection(&self) {
        if let Ok(mut g) = self.collection_id.lock() {
            *g = None;
        }
    }

    async fn collection_url(&self, op: &str) -> Result<String, VectorError> {
        let (id, _) = self.ensure_collection().await?;
        Ok(format!("{}/collections/{id}/{op}", self.db_path()))
    }

    /// Upserts documents with their vectors, [`UPSERT_MAX`] per call.
    pub async fn upsert(&self, docs: &[(Document, Vec<f32>)]) -> Result<(), VectorError> {
        let url = self.collection_url("upsert").await?;
        for chunk in docs.chunks(UPSERT_MAX) {
            let body = json!({
                "ids": chunk.iter().map(|(d, _)| &d.doc_id).collect::<Vec<_>>(),
                "embeddings": chunk.iter().map(|(_, v)| v).collect::<Vec<_>>(),
                "documents": chunk.iter().map(|(d, _)| &d.text).collect::<Vec<_>>(),
                "metadatas": chunk.iter().map(|(d, _)| {
                    let mut m = d.metadata.clone();
                    m.insert("embedding_model".into(), json!(self.model));
                    m
                }).collect::<Vec<_>>(),
            });
            self.send(reqwest::Method::POST, url.clone(), Some(body)).await?;
        }
        Ok(())
    }

    /// Deletes every document of the given rows (by `doc_type` and `sqlite_id`).
    pub async fn delete_rows(&self, kind: DocKind, row_ids: &[i64]) -> Result<(), VectorError> {
        if row_ids.is_empty() {
            return Ok(());
        }
        let url = self.collection_url("delete").await?;
        let body = json!({"where": {"$and": [{"doc_type": {"$eq": kind.doc_type()}}, {"sqlite_id": {"$in": row_ids}}]}});
        self.send(reqwest::Method::POST, url, Some(body)).await.map(|_| ())
    }

    /// The `limit` nearest documents within `scope`.
    pub async fn nearest(&self, query: &[f32], scope: &VectorScope, limit: usize) -> Result<Vec<Neighbour>, VectorError> {
        let url = self.collection_url("query").await?;
        let mut body = json!({"query_embeddings": [query], "n_results": limit, "include": ["metadatas", "distances"]});
        if let Some(w) = where_filter(scope) {
            body["where"] = w;
        }
        let got = self.send(reqwest::Method::POST, url, Some(body)).await?;
        let ids = got["ids"][0].as_array().cloned().unwrap_or_default();
        let metas = got["metadatas"][0].as_array().cloned().unwrap_or_default();
        let dists = got["distances"][0].as_array().cloned().unwrap_or_default();
        let mut out = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let m = metas.get(i).cloned().unwrap_or(Value::Null);
            let (Some(doc_id), Some(kind), Some(row_id)) = (
                id.as_str(),
                m["doc_type"].as_str().and_then(kind_of_doc_type),
                m["sqlite_id"].as_i64(),
            ) else {
                continue;
            };
            let distance = dists.get(i).and_then(Value::as_f64).unwrap_or(1.0) as f32;
            out.push(Neighbour {
                doc_id: doc_id.to_string(),
                kind,
                row_id,
                distance,
            });
        }
        Ok(out)
    }

    /// Every document id in the collection (tests and diagnostics; pages of 1,000).
    pub async fn all_ids(&self) -> Result<Vec<String>, VectorError> {
        let url = self.collection_url("get").await?;
        let mut out = Vec::new();
        loop {
            let body = json!({"limit": 1000, "offset": out.len(), "include": []});
            let got = self.send(reqwest::Method::POST, url.clone(), Some(body)).await?;
            let page: Vec<String> = got["ids"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
                .unwrap_or_default();
            let n = page.len();
            out.extend(page);
            if n < 1000 {
                return Ok(out);
            }
        }
    }
}
