//! [`Later`]: a value one task of [`super::with_early_helper`] computes and others wait
//! for.

use super::spin_until;
use std::sync::OnceLock;

/// A value one task of [`super::with_early_helper`] computes and tasks queued after it wait
/// for. Each thread takes the queue's tasks in order, but for those of
/// [`super::Tasks::push_when`], whose results no task waits for: so when a task starts, every
/// task queued before it that computes a value waited for has started on some thread,
/// and waiting only for those never deadlocks.
pub struct Later<T>(OnceLock<Option<T>>);

impl<T> Default for Later<T> {
    fn default() -> Self {
        Later(OnceLock::new())
    }
}

impl<T> Later<T> {
    /// Computes the value with `f`, once; its waiters get `None` if `f` panics (the
    /// panic itself reaches the caller of [`super::with_early_helper`]).
    pub fn compute(&self, f: impl FnOnce() -> T) {
        /// Sets `None` unless the value was set: waiters never wait for a panic.
        struct NoneOnUnwind<'c, T>(&'c OnceLock<Option<T>>);
        impl<T> Drop for NoneOnUnwind<'_, T> {
            fn drop(&mut self) {
                let _ = self.0.set(None);
            }
        }
        let guard = NoneOnUnwind(&self.0);
        let _ = self.0.set(Some(f()));
        drop(guard);
    }

    /// The value, once [`Later::compute`] has returned (`None` if it panicked).
    /// Spins for up to 1 ms before it sleeps (`spin_until`).
    pub fn wait(&self) -> Option<&T> {
        spin_until(|| self.0.get().is_some());
        self.0.wait().as_ref()
    }

    /// Whether [`Later::compute`] has returned (or panicked): [`Later::wait`] would
    /// not wait.
    pub fn is_ready(&self) -> bool {
        self.0.get().is_some()
    }

    /// The value, if it was computed.
    pub fn into_inner(self) -> Option<T> {
        self.0.into_inner().flatten()
    }
}
