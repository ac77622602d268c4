//! The loading of the images a message mentions (blocking I/O, off the UI thread); the
//! mentions themselves are found by the model (`tui/attach.rs`).

use crate::agent::ImageData;
use crate::images;
use crate::tui::attach::AttachError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a mentioned path is: `~/` is the home directory, a relative path starts at the
/// workspace.
pub fn resolve(workspace: &Path, path: &str) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    workspace.join(path)
}

/// Reads, checks and scales each image (blocking I/O); the first failure says which
/// file and why.
pub fn load_all(workspace: &Path, paths: &[String]) -> Result<Vec<ImageData>, AttachError> {
    paths
        .iter()
        .map(|path| {
            images::load_file(&resolve(workspace, path), path).map_err(|e| AttachError {
                path: path.clone(),
                source: Arc::new(e),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::images::ImageError;

    #[test]
    fn an_image_that_cannot_be_read_names_the_mention_and_the_cause() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.png"), "not an image").unwrap();
        let paths = ["notes.png".to_owned()];
        let error = load_all(dir.path(), &paths).unwrap_err();
        assert_eq!(error.path, "notes.png");
        assert!(
            matches!(*error.source, ImageError::NotAnImage { .. }),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with("Cannot attach @notes.png: notes.png is not a PNG"),
            "{error}"
        );
        assert!(error.to_string().ends_with('.'), "{error}");
        let missing = load_all(dir.path(), &["gone.png".to_owned()]).unwrap_err();
        assert!(
            matches!(*missing.source, ImageError::Read { .. }),
            "{missing:?}"
        );
    }
}
