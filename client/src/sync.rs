//! The client's locks: std's `Mutex` and `RwLock`, with parking_lot's way of locking (a guard,
//! not a `Result`).
//!
//! A lock is never poisoned here, as parking_lot's are not: a panic while one is held leaves
//! the data as that code left it, and later locks take it as it is rather than failing.
//!
//! Why not parking_lot itself: in a browser (`wasm32-unknown-unknown`, one thread) std's locks
//! are a flag each, where parking_lot brings its parking table, its word lock and smallvec
//! (2.9 KB of the browser client's wasm, gzipped); natively std's locks are futex-based, as
//! parking_lot's are.

use std::sync::{PoisonError, TryLockError};

pub(crate) use std::sync::RwLockWriteGuard;
use std::sync::{MutexGuard, RwLockReadGuard};

/// A mutual exclusion lock, never poisoned (the module's docs).
#[derive(Debug, Default)]
pub(crate) struct Mutex<T: ?Sized>(std::sync::Mutex<T>);

impl<T> Mutex<T> {
    /// A lock holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self(std::sync::Mutex::new(value))
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Waits for the lock and holds it until the guard drops.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lock if it is free now, else `None`.
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.0.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }
}

/// A readers-writer lock, never poisoned (the module's docs).
#[derive(Debug, Default)]
pub(crate) struct RwLock<T: ?Sized>(std::sync::RwLock<T>);

impl<T> RwLock<T> {
    /// A lock holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self(std::sync::RwLock::new(value))
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Shared access, until the guard drops.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, T> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Exclusive access, until the guard drops.
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A panic while the lock is held does not make later locks fail (std's would return
    /// `Err` from then on).
    #[test]
    fn a_panic_while_locked_does_not_poison() {
        let mutex = Arc::new(Mutex::new(1));
        let rwlock = Arc::new(RwLock::new(1));
        let (m, r) = (mutex.clone(), rwlock.clone());
        let panicked = std::thread::spawn(move || {
            let _mutex = m.lock();
            let _rwlock = r.write();
            panic!("while locked");
        })
        .join();
        assert!(panicked.is_err());
        *mutex.lock() += 1;
        *rwlock.write() += 1;
        assert_eq!(*mutex.try_lock().expect("free"), 2);
        assert_eq!(*rwlock.read(), 2);
    }

    #[test]
    fn try_lock_fails_while_held() {
        let mutex = Mutex::new(());
        let _held = mutex.lock();
        assert!(mutex.try_lock().is_none());
    }
}
