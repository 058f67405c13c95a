//! Unit tests of the in-memory sign-code index against sqlite-vec and brute force, on a migrated
//! in-memory database: the same candidates, and the index following every kind of write.

use super::codes::{CodeIndex, code_of, code_of_blob, trim_log};
use super::documents::{DocKind, Document};
use super::embedder::DIM;
use super::index::{clear, register_extension, replace_rows, to_blob, to_stored_blob};
use super::nearest::{QueryPath, VectorScope, brute_force, nearest};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> Vec<f32> {
        // Never an exact zero (the model makes none; half precision reads one as positive).
        let v: Vec<f32> = (0..DIM).map(|_| (self.next() % 2000) as f32 / 1000.0 - 0.9995).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}

fn doc(kind: DocKind, row_id: i64, field: &str, project: &str, platform: &str, created: i64) -> Document {
    Document {
        doc_id: format!("{}{field}", kind.id_prefix(row_id)),
        kind,
        row_id,
        field: field.into(),
        text: String::new(),
        project: project.into(),
        platform_source: platform.into(),
        created_at_epoch: created,
        metadata: Default::default(),
    }
}

/// `rows` rows of each kind, two documents a row, over three projects and two platforms.
fn filled(rows: i64, rng: &mut Rng) -> rusqlite::Connection {
    register_extension();
    let c = crate::store::test_conn();
    for kind in DocKind::ALL {
        for id in 1..=rows {
            let (project, platform) = (["a", "b", "c"][id as usize % 3], ["claude", "codex"][id as usize % 2]);
            let docs: Vec<_> = ["title", "narrative"]
                .iter()
                .map(|f| (doc(kind, id, f, project, platform, id * 10), rng.unit()))
                .collect();
            replace_rows(&c, kind, &[id], &docs, "m").unwrap();
        }
    }
    c
}

/// sqlite-vec's k nearest Hamming distances (its `distance` column), nearest first.
fn vec0_distances(c: &rusqlite::Connection, q: &[f32], k: usize) -> Vec<u32> {
    c.prepare("SELECT distance FROM vectors_bin WHERE embedding MATCH vec_quantize_binary(?1) AND k = ?2")
        .unwrap()
        .query_map(rusqlite::params![to_blob(q), k as i64], |r| r.get::<_, f64>(0))
        .unwrap()
        .map(|d| d.unwrap() as u32)
        .collect()
}

#[test]
fn a_blob_has_the_code_sqlite_vec_made_of_its_vector() {
    let mut rng = Rng(11);
    let mut v = rng.unit();
    v[1] = -0.0;
    v[2] = 1e-9; // below f16's range: stored as +0, still positive
    v[3] = -1e-9; // stored as −0, still negative
    let code = code_of(&v);
    assert_eq!(code[0] & 0b1110, 0b0100);
    assert_eq!(code_of_blob(&to_blob(&v)), Some(code), "single precision");
    assert_eq!(code_of_blob(&to_stored_blob(&v)), Some(code), "half precision");
    v[0] = 0.0;
    let mut code = code_of(&v);
    assert_eq!(code[0] & 1, 0, "zero is not positive");
    assert_eq!(code_of_blob(&to_blob(&v)), Some(code));
    code[0] |= 1;
    assert_eq!(
        code_of_blob(&to_stored_blob(&v)),
        Some(code),
        "an exact zero reads as +0 in half precision"
    );
    assert_eq!(code_of_blob(&[0u8; 7]), None, "not a vector");
}

#[test]
fn the_code_index_finds_the_distances_sqlite_vec_finds_in_every_scope() {
    let mut rng = Rng(5);
    let c = filled(120, &mut rng);
    let codes = CodeIndex::default();
    codes.catch_up(&c).unwrap();
    assert_eq!(codes.status().documents, 720);
    for _ in 0..20 {
        let q = rng.unit();
        for k in [1, 40, 400, 2000] {
            let mine: Vec<u32> = codes
                .search(&c, &q, &VectorScope::default(), k)
                .unwrap()
                .expect("current")
                .iter()
                .map(|x| x.hamming)
                .collect();
            assert_eq!(mine, vec0_distances(&c, &q, k), "k = {k}");
        }
    }
    let scopes = [
        VectorScope {
            kinds: vec![DocKind::Summary],
            ..Default::default()
        },
        VectorScope {
            projects: vec!["b".into(), "nowhere".into()],
            platform_source: Some("codex".into()),
            ..Default::default()
        },
        VectorScope {
            date_start: Some(300),
            date_end: Some(800),
            kinds: vec![DocKind::Observation, DocKind::Prompt],
            ..Default::default()
        },
        VectorScope {
            projects: vec!["nowhere".into()],
            ..Default::default()
        },
    ];
    for scope in &scopes {
        let q = rng.unit();
        // Every in-scope document is a candidate here, so the re-ranked answer is brute force's.
        let (found, path) = nearest(&c, Some(&codes), &q, scope, 500).unwrap();
        assert_eq!(path, QueryPath::Codes);
        let brute = brute_force(&c, &q, scope, 500).unwrap();
        let ids = |v: &[super::nearest::Neighbour]| v.iter().map(|n| n.doc_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&found), ids(&brute), "{scope:?}");
        // With fewer candidates than documents the two may pick different documents among those
        // tied at the cut's Hamming distance (the distance lists above are the same).
        let (vec0, path) = nearest(&c, None, &q, scope, 500).unwrap();
        assert_eq!(path, QueryPath::SqliteVec);
        assert_eq!(ids(&vec0), ids(&brute), "{scope:?}");
    }
}

#[test]
fn the_code_index_follows_replacements_deletes_and_clears() {
    let mut rng = Rng(9);
    let c = filled(10, &mut rng);
    let codes = CodeIndex::default();
    assert!(!codes.built() && codes.claim_build() && !codes.claim_build(), "one builder");
    codes.catch_up(&c).unwrap();
    assert!(codes.built());
    let target = rng.unit();
    let first = |codes: &CodeIndex| nearest(&c, Some(codes), &target, &VectorScope::default(), 1).unwrap().0;
    // A re-embedded row: its new vector is found, its old ones are gone.
    let new = vec![(doc(DocKind::Observation, 3, "narrative", "a", "claude", 30), target.clone())];
    replace_rows(&c, DocKind::Observation, &[3], &new, "m").unwrap();
    assert_eq!(first(&codes)[0].doc_id, "obs_3_narrative");
    assert!(first(&codes)[0].distance.abs() < 1e-3);
    assert_eq!(codes.status().documents, 59);
    // Deleted by another statement (the forget triggers delete from `vectors` the same way).
    c.execute("DELETE FROM vectors WHERE doc_kind = 'observation' AND row_id = 3", [])
        .unwrap();
    assert_ne!(first(&codes)[0].doc_id, "obs_3_narrative");
    assert_eq!(codes.status().documents, 58);
    clear(&c).unwrap();
    assert!(first(&codes).is_empty());
    assert_eq!(codes.status().documents, 0);
    replace_rows(
        &c,
        DocKind::Prompt,
        &[1],
        &[(doc(DocKind::Prompt, 1, "", "a", "", 1), target.clone())],
        "m",
    )
    .unwrap();
    assert_eq!(first(&codes)[0].doc_id, "prompt_1");
    // An id that does not begin with its row's prefix (memd makes none) is still found by name.
    let mut odd = doc(DocKind::Observation, 4, "", "a", "claude", 40);
    odd.doc_id = "imported-4".into();
    replace_rows(&c, DocKind::Observation, &[4], &[(odd, target.clone())], "m").unwrap();
    let both = nearest(&c, Some(&codes), &target, &VectorScope::default(), 2).unwrap().0;
    let mut ids: Vec<&str> = both.iter().map(|n| n.doc_id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["imported-4", "prompt_1"]);
}

#[test]
fn an_index_behind_the_trimmed_log_rebuilds_and_agrees() {
    let mut rng = Rng(3);
    let c = filled(10, &mut rng);
    let codes = CodeIndex::default();
    codes.catch_up(&c).unwrap();
    let before = codes.status().applied_seq;
    for id in 1..=5 {
        replace_rows(
            &c,
            DocKind::Summary,
            &[id],
            &[(doc(DocKind::Summary, id, "learned", "b", "claude", 5), rng.unit())],
            "m",
        )
        .unwrap();
    }
    assert!(trim_log(&c, 0).unwrap() > 0);
    assert_eq!(
        c.query_row("SELECT count(*) FROM vectors_log", [], |r| r.get::<_, i64>(0)).unwrap(),
        0
    );
    let q = rng.unit();
    let (found, _) = nearest(&c, Some(&codes), &q, &VectorScope::default(), 500).unwrap();
    assert!(codes.status().applied_seq > before);
    assert_eq!(codes.status().documents, 55);
    let brute = brute_force(&c, &q, &VectorScope::default(), 500).unwrap();
    assert_eq!(found, brute);
}

#[test]
fn the_same_text_twice_ranks_the_prompt_then_the_newest_row_by_every_path() {
    let mut rng = Rng(21);
    let c = filled(3, &mut rng);
    let same = rng.unit();
    for (kind, id) in [
        (DocKind::Summary, 2),
        (DocKind::Observation, 1),
        (DocKind::Observation, 3),
        (DocKind::Prompt, 2),
    ] {
        replace_rows(&c, kind, &[id], &[(doc(kind, id, "", "a", "claude", id), same.clone())], "m").unwrap();
    }
    let codes = CodeIndex::default();
    codes.catch_up(&c).unwrap();
    let scope = VectorScope::default();
    let order = |n: Vec<super::nearest::Neighbour>| n.into_iter().take(4).map(|n| n.doc_id).collect::<Vec<_>>();
    let want = ["prompt_2", "obs_3_", "obs_1_", "summary_2_"];
    assert_eq!(order(nearest(&c, Some(&codes), &same, &scope, 4).unwrap().0), want);
    assert_eq!(order(nearest(&c, None, &same, &scope, 4).unwrap().0), want);
    assert_eq!(order(brute_force(&c, &same, &scope, 4).unwrap()), want);
}

#[test]
fn a_large_index_behind_the_trimmed_log_rebuilds_on_its_own_while_sqlite_vec_answers() {
    let mut rng = Rng(4);
    let c = filled(10, &mut rng);
    let codes = CodeIndex::rebuilding_inline_below(50);
    codes.catch_up(&c).unwrap();
    let row = [(doc(DocKind::Summary, 1, "learned", "b", "claude", 5), rng.unit())];
    replace_rows(&c, DocKind::Summary, &[1], &row, "m").unwrap();
    trim_log(&c, 0).unwrap();
    let q = row[0].1.clone();
    let (found, path) = nearest(&c, Some(&codes), &q, &VectorScope::default(), 5).unwrap();
    assert_eq!(path, QueryPath::SqliteVec, "no rebuild of 60 documents inside the query");
    assert_eq!(found[0].doc_id, "summary_1_learned");
    assert!(!codes.built() && codes.claim_build(), "the next query starts the rebuild");
    codes.catch_up(&c).unwrap();
    let (found, path) = nearest(&c, Some(&codes), &q, &VectorScope::default(), 5).unwrap();
    assert_eq!((path, found[0].doc_id.as_str()), (QueryPath::Codes, "summary_1_learned"));
    assert_eq!(codes.status().documents, 59);
}
