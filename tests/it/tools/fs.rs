#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::new_without_default,
    missing_docs
)]
//! The file tools on real files in temp dirs: workspace confinement, read/write/edit/list
//! limits and refusals, and a file tool driven by the real agent loop.

mod agent;
mod agent_hostile;
mod buffers;
mod confine;
mod edit;
mod escape;
mod image;
mod list;
mod race;
mod read;
mod write;

use claw_tui::tools::Workspace;
use claw_tui::tools::fs::{EditFileTool, ListDirTool, ReadFileTool, WriteFileTool};
use std::path::PathBuf;
use std::sync::Arc;
use tempfile::TempDir;

/// A temp dir holding a workspace `ws/` and, beside it, a file `secret.txt` outside it.
pub struct Setup {
    _dir: TempDir,
    pub outer: PathBuf,
    pub root: PathBuf,
}

impl Setup {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let outer = dir.path().canonicalize().unwrap();
        let root = outer.join("ws");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(outer.join("secret.txt"), "top secret\n").unwrap();
        Self {
            _dir: dir,
            outer,
            root,
        }
    }

    pub fn workspace(&self) -> Arc<Workspace> {
        Arc::new(Workspace::new(&self.root, false))
    }

    pub fn open_workspace(&self) -> Arc<Workspace> {
        Arc::new(Workspace::new(&self.root, true))
    }

    /// Writes `content` at `rel` inside the workspace, creating directories.
    pub fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn read(&self) -> ReadFileTool {
        ReadFileTool::new(self.workspace())
    }
    pub fn write(&self) -> WriteFileTool {
        WriteFileTool::new(self.workspace())
    }
    pub fn edit(&self) -> EditFileTool {
        EditFileTool::new(self.workspace())
    }
    pub fn list(&self) -> ListDirTool {
        ListDirTool::new(self.workspace())
    }
}

pub use crate::support::call;

pub use crate::support::names_in;
