#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! A set-user-ID file made inside the sandbox would work outside it (`nosuid` holds only
//! in the command's own view): a scripted model copies a shell and tries every usual
//! way to set the bits; the test reads the modes on disk.

use crate::support::bin::Sandbox;
use crate::support::hostile::{exec, mode_of, run_hostile};

#[tokio::test(flavor = "multi_thread")]
async fn a_command_cannot_leave_a_set_id_file_in_the_workspace() {
    let sb = Sandbox::new();
    let ws = sb.workspace();
    let command = "cp /bin/sh suidsh; chmod 4755 suidsh; echo chmod=$?\n\
                   cp /bin/sh sgidsh; chmod g+s sgidsh; echo chmod_g=$?\n\
                   install -m 6755 /bin/sh installed; echo install=$?\n\
                   mkdir shared; chmod 2775 shared; echo dir=$?\n\
                   chmod 755 suidsh; echo plain=$?";
    let run = run_hostile(&sb, vec![exec(command, None)], "").await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let result = run.results().join("\n");
    for name in ["suidsh", "sgidsh", "installed", "shared"] {
        let mode = mode_of(&ws.join(name));
        assert_eq!(mode & 0o6000, 0, "{name} has mode {mode:o}: {result}");
    }
    assert!(result.contains("chmod=1"), "{result}");
    // A mode without the bits is still the command's to set.
    assert_eq!(mode_of(&ws.join("suidsh")), 0o755, "{result}");
    assert!(result.contains("plain=0"), "{result}");
}
