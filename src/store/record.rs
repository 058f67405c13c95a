//! The record macro: one list per kind of row, each field with its column. From it come the
//! struct (its JSON derived by serde, a field's name as written unless its attribute renames it),
//! the `SELECT` column list (`<alias>.<column>, …`) and `from_row`, which reads every column by
//! name — a column added anywhere in the list cannot shift another. Summaries and prompts
//! (`retrieval/records.rs`), work items and heads (`work_state/tables.rs`), live anchors
//! (`freshness/anchor_rows.rs`), due alerts (`alerts/outbox.rs`) and teammates' work and
//! summaries (`team/local/`) are read through it; the observation has its own list with its
//! inserts (`observation_record.rs`).

/// See the module header. `record! { #[derive(Eq)] pub struct Name, COLS = "alias" { field: Type
/// = "column", … } }`; attributes before a field go to the field (`#[serde(rename = "…")]`).
/// Without `, COLS = "alias"` no column list is made (a query that computes its columns names
/// each with `AS`).
macro_rules! record {
    (
        $(#[$meta:meta])* $vis:vis struct $name:ident {
            $(#[$fmeta0:meta])* $first:ident: $first_ty:ty = $first_col:literal
            $(, $(#[$fmeta:meta])* $field:ident: $ty:ty = $col:literal)* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
        $vis struct $name {
            $(#[$fmeta0])* pub $first: $first_ty,
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $name {
            /// A row whose columns carry the record's column names (other columns may follow).
            pub fn from_row(r: &rusqlite::Row) -> rusqlite::Result<Self> {
                Ok(Self {
                    $first: r.get($first_col)?,
                    $($field: r.get($col)?,)*
                })
            }
        }
    };
    (
        $(#[$meta:meta])* $vis:vis struct $name:ident, $cols:ident = $alias:literal {
            $(#[$fmeta0:meta])* $first:ident: $first_ty:ty = $first_col:literal
            $(, $(#[$fmeta:meta])* $field:ident: $ty:ty = $col:literal)* $(,)?
        }
    ) => {
        /// Every column of the record, for `SELECT … FROM <table> <alias>`.
        $vis const $cols: &str = concat!($alias, ".", $first_col $(, ", ", $alias, ".", $col)*);

        $crate::store::record::record! {
            $(#[$meta])* $vis struct $name {
                $(#[$fmeta0])* $first: $first_ty = $first_col
                $(, $(#[$fmeta])* $field: $ty = $col)*
            }
        }
    };
}

pub(crate) use record;

#[cfg(test)]
mod tests {
    record! {
        #[derive(Eq)]
        pub struct Pair, PAIR_COLS = "p" {
            #[serde(rename = "k")]
            key: String = "key",
            value: Option<i64> = "value",
        }
    }

    #[test]
    fn columns_rows_and_json_come_from_one_list() {
        assert_eq!(PAIR_COLS, "p.key, p.value");
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE t(value INTEGER, key TEXT); INSERT INTO t VALUES (7, 'a');")
            .unwrap();
        let got = c.query_row(&format!("SELECT {PAIR_COLS} FROM t p"), [], Pair::from_row).unwrap();
        assert_eq!(
            got,
            Pair {
                key: "a".into(),
                value: Some(7)
            }
        );
        assert_eq!(serde_json::to_value(&got).unwrap(), serde_json::json!({"k": "a", "value": 7}));
    }
}
