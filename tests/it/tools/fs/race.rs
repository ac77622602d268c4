//! The check-then-open race: a thread keeps swapping a directory of the workspace with
//! a symlink to a directory outside (`renameat2(RENAME_EXCHANGE)`, one atomic syscall,
//! as a background process started by `exec` could) while file tool calls run in
//! parallel. Nothing may land outside, no outside content may come back, and every
//! write reported as done must be inside.

use super::{Setup, call, names_in};
use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Swaps at least this many times while the calls run.
const MIN_SWAPS: usize = 300;
/// Calls of each kind each worker makes at least.
const MIN_CALLS: usize = 40;
const WORKERS: usize = 4;

const OUTSIDE_PROBE: &str = "probe\nsecret outside\n";

/// What one worker saw.
#[derive(Default)]
struct Seen {
    written: Vec<String>,
    edits: usize,
    refused: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn swapping_a_directory_for_a_symlink_never_lets_a_call_out() {
    let s = Arc::new(Setup::new());
    let outside = s.outer.join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("probe.txt"), OUTSIDE_PROBE).unwrap();
    std::fs::write(outside.join("outside-only.txt"), "x").unwrap();
    s.file("d/probe.txt", "probe\n");
    std::os::unix::fs::symlink(&outside, s.root.join("s")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (d, l) = (s.root.join("d"), s.root.join("s"));
        let (stop, swaps) = (stop.clone(), swaps.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat2(AT_FDCWD, &d, AT_FDCWD, &l, RenameFlags::RENAME_EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let (s, swaps) = (s.clone(), swaps.clone());
        workers.push(tokio::spawn(async move {
            let mut seen = Seen::default();
            let mut i = 0;
            while i < MIN_CALLS || swaps.load(Ordering::Relaxed) < MIN_SWAPS {
                let name = format!("w{w}-{i}.txt");
                let nested = format!("sub{w}-{i}/n.txt");
                for path in [format!("d/{name}"), format!("d/{nested}")] {
                    let r = call(&s.write(), json!({"path": path, "content": path})).await;
                    if r.is_error {
                        // Refused, by the text check or by the kernel at the open, or
                        // failed on what the swap left in its way; never done outside.
                        assert!(
                            r.content.starts_with("Access denied")
                                || r.content.starts_with("Error")
                                || r.content.starts_with("Cannot"),
                            "{}",
                            r.content
                        );
                        seen.refused += 1;
                    } else {
                        seen.written.push(path.trim_start_matches("d/").to_owned());
                    }
                }
                let r = call(
                    &s.edit(),
                    json!({"path": "d/probe.txt", "old_text": "probe", "new_text": "probe!"}),
                )
                .await;
                if r.is_error {
                    seen.refused += 1;
                } else {
                    seen.edits += 1;
                }
                let r = call(&s.read(), json!({"path": "d/probe.txt"})).await;
                assert!(!r.content.contains("secret outside"), "{}", r.content);
                let r = call(&s.list(), json!({"path": "d", "depth": 2})).await;
                assert!(!r.content.contains("outside-only"), "{}", r.content);
                i += 1;
            }
            seen
        }));
    }
    let mut all = Seen::default();
    for worker in workers {
        let seen = worker.await.unwrap();
        all.written.extend(seen.written);
        all.edits += seen.edits;
        all.refused += seen.refused;
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    println!(
        "{swaps} swaps; {} writes and {} edits done, {} calls refused",
        all.written.len(),
        all.edits,
        all.refused
    );
    assert!(swaps >= MIN_SWAPS);

    // Nothing changed outside.
    assert_eq!(names_in(&outside), ["outside-only.txt", "probe.txt"]);
    assert_eq!(
        std::fs::read_to_string(outside.join("probe.txt")).unwrap(),
        OUTSIDE_PROBE
    );
    // Every write reported as done is in the real directory, wherever it is now.
    let real = ["d", "s"]
        .into_iter()
        .map(|n| s.root.join(n))
        .find(|p| std::fs::symlink_metadata(p).unwrap().is_dir())
        .unwrap();
    for rel in &all.written {
        assert_eq!(
            std::fs::read_to_string(real.join(rel)).unwrap(),
            format!("d/{rel}"),
            "{rel} was reported written but is not inside"
        );
    }
    let probe = std::fs::read_to_string(real.join("probe.txt")).unwrap();
    assert!(probe.starts_with("probe"), "{probe}");
    assert_eq!(probe.contains('!'), all.edits > 0, "{probe}");
}
