//! The workspace files listed for `@path` completion are read like `list_dir` reads
//! them: a `.gitignore` that is a link to `/dev/zero` or a FIFO is not read (the
//! listing neither hangs nor grows without bound), and a symlinked directory leading out
//! of the workspace is listed, never entered.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use claw_tui::tui::host::history::list_files;
use std::os::unix::fs::symlink;

#[test]
fn planted_rule_files_and_links_out_do_not_reach_the_listing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("src/deep")).unwrap();
    std::fs::create_dir_all(root.join("outside/secrets")).unwrap();
    std::fs::write(root.join("outside/secrets/key.pem"), "KEY").unwrap();
    std::fs::write(ws.join("src/main.rs"), "").unwrap();
    std::fs::write(ws.join("src/deep/.gitignore"), "*.log\n").unwrap();
    std::fs::write(ws.join("src/deep/build.log"), "").unwrap();
    symlink("/dev/zero", ws.join(".gitignore")).unwrap();
    nix::unistd::mkfifo(&ws.join(".ignore"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    symlink(root.join("outside"), ws.join("linked")).unwrap();
    assert_eq!(
        list_files(&ws),
        ["linked", "src/", "src/deep/", "src/main.rs"]
    );
}
