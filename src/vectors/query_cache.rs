//! The vectors of recent search queries: an agent asks the same or a few queries again and again
//! (search, then timeline, then search with a filter), and embedding one costs 15–50 ms here. A
//! small first-in-first-out cache keyed by the exact text; vectors are immutable for one model.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Queries remembered.
pub const CAPACITY: usize = 256;

#[derive(Debug, Default)]
pub struct QueryCache {
    vectors: HashMap<String, Arc<Vec<f32>>>,
    order: VecDeque<String>,
}

impl QueryCache {
    pub fn get(&self, text: &str) -> Option<Arc<Vec<f32>>> {
        self.vectors.get(text).cloned()
    }

    /// Remembers `text`'s vector, forgetting the oldest query past [`CAPACITY`].
    pub fn put(&mut self, text: &str, v: Arc<Vec<f32>>) {
        if self.vectors.insert(text.to_owned(), v).is_none() {
            self.order.push_back(text.to_owned());
        }
        while self.order.len() > CAPACITY {
            if let Some(old) = self.order.pop_front() {
                self.vectors.remove(&old);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_query_goes_first_and_a_repeat_is_not_counted_twice() {
        let mut c = QueryCache::default();
        for i in 0..CAPACITY + 10 {
            c.put(&format!("q{i}"), Arc::new(vec![i as f32]));
        }
        c.put("q20", Arc::new(vec![0.5]));
        assert_eq!(c.len(), CAPACITY);
        assert!(c.get("q9").is_none());
        assert_eq!(c.get("q10").unwrap()[0], 10.0);
        assert_eq!(c.get("q20").unwrap()[0], 0.5);
    }
}
