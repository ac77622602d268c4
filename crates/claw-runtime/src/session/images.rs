//! The images of sessions, each stored once by its content hash in `images/` beside the
//! session files: a session line names an image by hash, and a history replayed on every
//! request (or forked into another session) never copies the bytes again.

use crate::agent::{ImageData, Message};
use sha2::{Digest, Sha256};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The directory holding the images of the sessions beside `session_file`.
pub fn store_dir(session_file: &Path) -> PathBuf {
    session_file
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("images")
}

/// The file an image is stored in.
fn stored_path(dir: &Path, image: &ImageData) -> Option<PathBuf> {
    // Only a real hash names a file: a line edited by hand cannot point elsewhere.
    let hash = &image.sha256;
    let hex = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then(|| dir.join(format!("{hash}.{}", image.extension())))
}

/// The images a message carries.
fn images_of(message: &Message) -> &[ImageData] {
    match message {
        Message::User(user) => &user.images,
        Message::ToolResult(result) => &result.images,
        _ => &[],
    }
}

fn images_of_mut(message: &mut Message) -> &mut [ImageData] {
    match message {
        Message::User(user) => &mut user.images,
        Message::ToolResult(result) => &mut result.images,
        _ => &mut [],
    }
}

/// Stores the images of `message` that the store does not have yet (written to a
/// temporary file and renamed, so a crash never leaves half an image under its name).
pub fn save(session_file: &Path, message: &Message) -> io::Result<()> {
    let images = images_of(message);
    if images.iter().all(|i| !i.is_loaded()) {
        return Ok(());
    }
    let parent = session_file.parent().unwrap_or_else(|| Path::new("."));
    let dir = store_dir(session_file);
    crate::private_fs::create_dir(parent, &dir)?;
    for image in images.iter().filter(|i| i.is_loaded()) {
        let Some(path) = stored_path(&dir, image) else {
            continue;
        };
        if path.exists() {
            continue;
        }
        let mut file = tempfile::NamedTempFile::new_in(&dir)?;
        file.write_all(&image.data)?;
        file.as_file().sync_data()?;
        match file.persist_noclobber(&path) {
            Ok(_) => {}
            // Another process stored the same image meanwhile.
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e.error),
        }
    }
    Ok(())
}

/// Puts the stored bytes back into the images of `messages`; an image missing from the
/// store, or whose bytes no longer match its hash, stays empty (the request then says
/// so to the model) and is named in the returned warnings.
pub fn restore(session_file: &Path, messages: &mut [Message]) -> Vec<String> {
    let dir = store_dir(session_file);
    let mut warnings = Vec::new();
    for image in messages.iter_mut().flat_map(images_of_mut) {
        let Some(path) = stored_path(&dir, image) else {
            warnings.push(format!(
                "image {} has no valid hash in {}",
                image.name,
                session_file.display()
            ));
            continue;
        };
        match std::fs::read(&path) {
            Ok(bytes) if hex(&Sha256::digest(&bytes)) == image.sha256 => {
                image.data = bytes.into();
            }
            Ok(_) => warnings.push(format!(
                "the stored copy of image {} ({}) is damaged and was not used",
                image.name,
                path.display()
            )),
            Err(e) => warnings.push(format!(
                "the stored copy of image {} ({}) cannot be read: {e}",
                image.name,
                path.display()
            )),
        }
    }
    warnings
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
