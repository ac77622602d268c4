//! Making a locked session file safe to append to: a torn last line (the process
//! stopped, or the disk filled, while it was written) is cut off after its bytes are
//! kept in the `.damaged` side file, so no new line is ever appended after a fragment.
//! A last line that is a whole record and lacks only its newline gets the newline.

use super::file::{damaged_path, open_side_append};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// What repairing found.
#[derive(Debug, Default)]
pub(super) struct Repair {
    /// The file's length once it ends with a whole line (what the writer appends after).
    pub len: u64,
    /// The fragment could be neither cut nor ended: the writer must start a new line.
    pub needs_newline: bool,
    /// What to tell the user.
    pub note: Option<String>,
}

/// Cuts a torn last line off `file` (locked, at `path`), keeping its bytes in the
/// `.damaged` file first. When they cannot be kept (a full disk), the fragment stays
/// and is ended with a newline instead: it becomes a damaged line the loader skips. A
/// last line that `whole` takes for a complete record only gets its newline.
pub(super) fn repair_tail(
    file: &mut File,
    path: &Path,
    whole: fn(&[u8]) -> bool,
) -> std::io::Result<Repair> {
    let len = file.seek(SeekFrom::End(0))?;
    let cut = match last_line_start(file, len)? {
        None => {
            return Ok(Repair {
                len,
                ..Repair::default()
            });
        }
        Some(cut) => cut,
    };
    let fragment = len - cut;
    if ends_a_whole_record(file, cut, fragment, whole)? {
        // Only its newline is missing: the record stays, ended like any other.
        file.write_all(b"\n")?;
        tracing::info!(
            "{}: the last record had no newline; it was added",
            path.display()
        );
        return Ok(Repair {
            len: len + 1,
            ..Repair::default()
        });
    }
    let side = damaged_path(path);
    let kept = keep_fragment(file, cut, fragment, path, &side);
    let shown = path.display();
    match kept {
        Ok(()) => {
            file.set_len(cut)?;
            Ok(Repair {
                len: cut,
                needs_newline: false,
                note: Some(format!(
                    "{shown}: the last line was incomplete (claw-tui stopped while writing it); \
                     it was cut off and its {fragment} bytes kept beside it in {}",
                    file_name(&side)
                )),
            })
        }
        Err(e) => {
            let ended = file.write_all(b"\n").is_ok();
            Ok(Repair {
                len: if ended { len + 1 } else { len },
                needs_newline: !ended,
                note: Some(format!(
                    "{shown}: the last line was incomplete (claw-tui stopped while writing it) \
                     and its {fragment} bytes cannot be copied to {} ({e}); it stays in the \
                     file as a damaged line",
                    file_name(&side)
                )),
            })
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Where the torn last line starts, or `None` when the file ends with a newline (or is
/// empty). Reads backwards from the end in blocks.
fn last_line_start(file: &mut File, len: u64) -> std::io::Result<Option<u64>> {
    const BLOCK: u64 = 1 << 16;
    let mut end = len;
    let mut block = Vec::new();
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        block.resize(usize::try_from(end - start).unwrap_or(0), 0);
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block)?;
        if end == len && block.last() == Some(&b'\n') {
            return Ok(None);
        }
        if let Some(i) = block.iter().rposition(|b| *b == b'\n') {
            return Ok(Some(start + i as u64 + 1));
        }
        end = start;
    }
    Ok((len > 0).then_some(0))
}

/// Whether the `bytes` from `start` to the end of `file` are one whole record.
fn ends_a_whole_record(
    file: &mut File,
    start: u64,
    bytes: u64,
    whole: fn(&[u8]) -> bool,
) -> std::io::Result<bool> {
    let mut fragment = Vec::with_capacity(usize::try_from(bytes).unwrap_or(0));
    file.seek(SeekFrom::Start(start))?;
    Read::by_ref(file).take(bytes).read_to_end(&mut fragment)?;
    Ok(whole(&fragment))
}

/// Whether `line` is one whole JSON value: a record of a log beside the session (a
/// prefix of a JSON object never parses).
pub(super) fn is_json_value(line: &[u8]) -> bool {
    let text = line.trim_ascii();
    !text.is_empty() && serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok()
}

fn keep_fragment(
    file: &mut File,
    cut: u64,
    bytes: u64,
    path: &Path,
    side: &Path,
) -> std::io::Result<()> {
    let mut out = open_side_append(side)?;
    let when = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ");
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    writeln!(
        out,
        "# {bytes} bytes cut from the end of {name} at byte {cut}, {when}:"
    )?;
    file.seek(SeekFrom::Start(cut))?;
    let copied = std::io::copy(&mut Read::by_ref(file).take(bytes), &mut out)?;
    if copied != bytes {
        return Err(std::io::Error::other(
            "the file changed while it was copied",
        ));
    }
    out.write_all(b"\n")?;
    out.sync_data()
}
