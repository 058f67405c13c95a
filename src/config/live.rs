//! A value the worker can swap while it runs (SIGHUP reloads): readers take a cheap `Arc`
//! snapshot, a reload replaces it whole, so nobody ever sees half of an old and half of a new value.

use std::sync::{Arc, RwLock};

pub struct Live<T>(RwLock<Arc<T>>);

impl<T> Live<T> {
    pub fn new(value: T) -> Self {
        Self(RwLock::new(Arc::new(value)))
    }

    /// The current value.
    pub fn get(&self) -> Arc<T> {
        match self.0.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn set(&self, value: T) {
        let mut g = match self.0.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        *g = Arc::new(value);
    }
}

impl<T: Default> Default for Live<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Live<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_outlives_the_swap() {
        let live = Live::new(1);
        let before = live.get();
        live.set(2);
        assert_eq!((*before, *live.get()), (1, 2));
    }
}
