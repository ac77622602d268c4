//! One memory budget for every image decode of the process.
//!
//! A small file can declare a huge picture: a 380 KB PNG of zeros decodes to 400 MB of
//! pixels. Each decode first reserves what it will hold (the pixels, plus the scaled
//! copy and its encoding) from one budget shared by all threads: a decode that alone
//! would exceed it is refused before any pixel is decoded, and decodes that fit one at
//! a time but not together (parallel `read_file` calls, several images in one MCP
//! result) wait for each other instead of adding up.

use std::sync::{Condvar, Mutex, PoisonError};

/// The most memory all image decodes together may hold at once.
pub const DECODE_BUDGET_BYTES: u64 = 256 * 1024 * 1024;

/// The bytes reserved now, and the signal that some were given back.
struct Budget {
    used: Mutex<u64>,
    freed: Condvar,
}

static BUDGET: Budget = Budget {
    used: Mutex::new(0),
    freed: Condvar::new(),
};

/// Memory held for one decode; given back when dropped.
#[derive(Debug)]
pub struct Reservation {
    bytes: u64,
}

impl Reservation {
    /// How many bytes this decode may hold.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// A decode needs more than the whole budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "decoding it would take {} MB, more than the {} MB claw-tui gives image decoding",
    .needed.div_ceil(1024 * 1024),
    DECODE_BUDGET_BYTES / (1024 * 1024)
)]
pub struct OverBudget {
    /// What the decode would need.
    pub needed: u64,
}

/// Reserves `bytes` for a decode, waiting while other decodes hold too much of the
/// budget; refused at once when `bytes` alone is more than the budget.
pub fn reserve(bytes: u64) -> Result<Reservation, OverBudget> {
    if bytes > DECODE_BUDGET_BYTES {
        return Err(OverBudget { needed: bytes });
    }
    // A panic elsewhere while holding the lock leaves a plain number behind: still valid.
    let mut used = BUDGET.used.lock().unwrap_or_else(PoisonError::into_inner);
    while *used + bytes > DECODE_BUDGET_BYTES {
        used = BUDGET
            .freed
            .wait(used)
            .unwrap_or_else(PoisonError::into_inner);
    }
    *used += bytes;
    Ok(Reservation { bytes })
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut used = BUDGET.used.lock().unwrap_or_else(PoisonError::into_inner);
        *used = used.saturating_sub(self.bytes);
        BUDGET.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn more_than_the_budget_is_refused_and_parallel_decodes_never_add_up_past_it() {
        let err = reserve(DECODE_BUDGET_BYTES + 1).unwrap_err();
        assert!(err.to_string().contains("more than the 256 MB"), "{err}");
        let held = Arc::new(AtomicU64::new(0));
        let most = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (held, most) = (held.clone(), most.clone());
                std::thread::spawn(move || {
                    let reservation = reserve(DECODE_BUDGET_BYTES / 2).unwrap();
                    let now =
                        held.fetch_add(reservation.bytes(), Ordering::SeqCst) + reservation.bytes();
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    held.fetch_sub(reservation.bytes(), Ordering::SeqCst);
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= DECODE_BUDGET_BYTES);
    }
}
