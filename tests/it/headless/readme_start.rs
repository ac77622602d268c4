//! The README's first sections as a new user meets them: how to install comes first,
//! then what to try, and the commands it shows work as written.

use crate::support::bin::{Sandbox, run};
use crate::support::readme;

#[test]
fn the_readme_starts_with_install_then_try_it_and_its_commands_work_as_written() {
    let sections = readme::sections();
    assert_eq!(
        sections.get(..2),
        Some(["Install".to_owned(), "Try it".to_owned()].as_slice()),
        "{sections:?}"
    );
    let install = readme::block("sh", "cargo install");
    assert!(
        install.contains("cargo install --locked --path ."),
        "{install}"
    );
    // The version line says what `--version` prints.
    let sb = Sandbox::new();
    let mut cmd = sb.command();
    cmd.arg("--version");
    let (code, version, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let promised = install
        .lines()
        .find_map(|l| l.split_once("# claw-tui ").map(|(_, said)| said.to_owned()))
        .expect("the install block shows what --version prints");
    let version_number = promised.split_whitespace().next().unwrap();
    assert!(
        version.starts_with(&format!("claw-tui {version_number} (")),
        "README: {promised}; binary: {version}"
    );

    // Try it: the one-answer command, run as the README writes it, lists the workspace
    // on the offline demo model (no key set: the sandbox has none).
    let try_it = readme::block("sh", "claw-tui -p");
    let line = try_it
        .lines()
        .find(|l| l.starts_with("claw-tui -p"))
        .unwrap();
    let command = line.split('#').next().unwrap().trim();
    assert_eq!(command, r#"claw-tui -p "list files""#);
    std::fs::write(sb.workspace().join("notes.txt"), "hello").unwrap();
    let mut cmd = sb.command();
    cmd.args(["-p", "list files"]);
    let (code, out, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(out.contains("notes.txt"), "{out}");
    // And the two commands a fresh machine needs are still there.
    let two = readme::block("sh", "cargo run --release");
    assert!(two.contains("cargo test"), "{two}");
}
