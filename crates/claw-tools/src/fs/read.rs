//! `read_file`: a window of a text file, capped in lines and bytes.

use super::{
    Buffers, EditorBuffers, MAX_READ_BYTES, MAX_READ_LINES, io_failure, located_then,
    open_nonblocking,
};
use crate::Workspace;
use crate::args;
use crate::workspace::{Access, Located};
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::LazyLock;
use tokio_util::sync::CancellationToken;

/// How much of the file start is inspected to tell text from binary.
const SNIFF_BYTES: usize = 8 * 1024;

/// Reads text files inside the workspace.
pub struct ReadFileTool {
    workspace: Arc<Workspace>,
    buffers: Buffers,
}

impl ReadFileTool {
    /// The tool over `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self {
            workspace,
            buffers: None,
        }
    }

    /// The same tool, reading a text file's text from an editor's `buffers` (when
    /// given), unsaved changes included; images and binary files are still read from
    /// the disk.
    pub fn with_buffers(mut self, buffers: Buffers) -> Self {
        self.buffers = buffers;
        self
    }
}

/// The arguments of `read_file`.
#[derive(Deserialize, JsonSchema)]
pub struct ReadFileArgs {
    /// File to read
    path: String,
    /// First line to read (1-based, default 1)
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// Most lines to read (at most 2000)
    #[schemars(range(min = 1))]
    limit: Option<u64>,
    /// Prefix each line with its number (default false)
    #[serde(default)]
    line_numbers: bool,
}

/// What one call asks for.
struct Request {
    shown: String,
    offset: usize,
    limit: Option<usize>,
    line_numbers: bool,
}

/// Why output stopped before the end of the file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The caller's `limit`.
    Limit,
    /// The 2,000-line cap.
    Lines,
    /// The 50 KB cap.
    Bytes,
    /// One line alone exceeds 50 KB and was cut.
    LongLine,
}

#[async_trait]
impl TypedTool for ReadFileTool {
    type Args = ReadFileArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "read_file",
                "Read file",
                "Read a text file, or look at an image (PNG, JPEG, GIF, WebP: returned as an image). \
         Relative paths start at the workspace. Output is capped at 2000 lines or 50 KB; a \
         note at the end says how to continue with `offset` (1-based line number). Use \
         `limit` to read fewer lines, `line_numbers` to prefix each line with its number. \
         Other binary files are refused.",
                args::schema::<ReadFileArgs>(),
            ).read_only()
        });
        &SPEC
    }

    async fn run(
        &self,
        _call_id: &str,
        args: ReadFileArgs,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let request = Request::from(args);
        let shown = request.shown.clone();
        let buffers = self.buffers.clone();
        located_then(&self.workspace, &shown, Access::Read, move |located| {
            read(&located, &request, &cancel, &buffers)
        })
        .await
    }
}

impl From<ReadFileArgs> for Request {
    fn from(args: ReadFileArgs) -> Self {
        let lines = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Request {
            shown: args.path,
            // `parse` refuses 0 (the schema's minimum); 1-based lines start at 1 regardless.
            offset: lines(args.offset.unwrap_or(1).max(1)),
            limit: args.limit.map(lines),
            line_numbers: args.line_numbers,
        }
    }
}

fn read(
    located: &Located,
    req: &Request,
    cancel: &CancellationToken,
    buffers: &Buffers,
) -> ToolResult {
    // The editor only while nothing the model started can swap a link in meanwhile.
    let editor = super::buffers::editor_now(buffers, located);
    let buffers = editor.as_ref().map(super::buffers::Editor::buffers);
    let shown = req.shown.as_str();
    // Opened first and then looked at, so what is checked is what gets read.
    let opened = open_nonblocking(located.dir(), located.rel())
        .and_then(|file| file.metadata().map(|meta| (file, meta)));
    let (file, meta) = match opened {
        Ok(opened) => opened,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return ToolResult::error(format!(
                "Error: File not found: {shown}. Check the path; list_dir shows what exists."
            ));
        }
        Err(e) => return ToolResult::error(io_failure("read", shown, located, &e)),
    };
    if meta.is_dir() {
        return ToolResult::error(format!(
            "Error: {shown} is a directory, not a file. Use list_dir to see what it contains."
        ));
    }
    if !meta.is_file() {
        // Reading a pipe or device could block or never end.
        return ToolResult::error(format!(
            "Error: {shown} is not a regular file (a device, pipe or socket); read_file only \
             reads files."
        ));
    }
    let reader = BufReader::with_capacity(64 * 1024, file);
    let read = match buffers {
        Some(buffers) => read_buffer(reader, buffers, located.path(), req, meta.len(), cancel),
        None => read_window(reader, located.path(), req, meta.len(), cancel),
    };
    match read {
        Ok(result) => result,
        Err(e) => ToolResult::error(io_failure("read", shown, located, &e)),
    }
}

/// The window of the editor's text of a file that is text on the disk (an image or a
/// binary file is read from `reader`, the disk's, as without an editor).
fn read_buffer(
    mut reader: BufReader<File>,
    buffers: &dyn EditorBuffers,
    path: &Path,
    req: &Request,
    size: u64,
    cancel: &CancellationToken,
) -> io::Result<ToolResult> {
    let sample = reader.fill_buf()?;
    let text = crate::images::sniff(sample).is_none()
        && binary_kind(&sample[..sample.len().min(SNIFF_BYTES)]).is_none();
    if !text {
        return read_window(reader, path, req, size, cancel);
    }
    let text = buffers.read(path)?.into_bytes();
    let size = text.len() as u64;
    read_window(
        BufReader::new(io::Cursor::new(text)),
        path,
        req,
        size,
        cancel,
    )
}

/// An image file: its bytes (read through the handle already open beneath the
/// workspace), scaled down if needed, returned as an image the model sees. A model that
/// takes no images gets a note instead when the request is made.
fn read_image(mut reader: impl Read, shown: &str, size: u64) -> io::Result<ToolResult> {
    if size > crate::images::MAX_FILE_BYTES {
        return Ok(ToolResult::error(format!(
            "Error: {shown} is an image of {}, larger than the {} read_file takes as an image.",
            claw_text::byte_size(size),
            claw_text::byte_size(crate::images::MAX_FILE_BYTES)
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    reader.read_to_end(&mut bytes)?;
    // Enough to name the format in an error, kept before the bytes move to the decoder.
    let bytes_head = bytes[..bytes.len().min(16)].to_vec();
    let name = Path::new(shown)
        .file_name()
        .map_or_else(|| shown.to_owned(), |n| n.to_string_lossy().into_owned());
    match crate::images::from_bytes(&name, bytes) {
        Ok(image) => Ok(ToolResult::text(format!(
            "Image {shown} ({}, {}×{}, {}) follows.",
            image.mime,
            image.width,
            image.height,
            claw_text::byte_size(image.size)
        ))
        .with_images(vec![image])),
        Err(crate::images::ImageError::Decode { detail, .. }) => {
            let kind = binary_kind(&bytes_head).unwrap_or_else(|| "image".to_owned());
            Ok(ToolResult::error(format!(
                "Error: {shown} is a damaged {kind} ({}) that cannot be shown: {detail}.",
                claw_text::byte_size(size)
            )))
        }
        Err(e) => Ok(ToolResult::error(format!("Error: {e}."))),
    }
}

fn read_window<R: Read>(
    mut reader: BufReader<R>,
    path: &Path,
    req: &Request,
    size: u64,
    cancel: &CancellationToken,
) -> io::Result<ToolResult> {
    let shown = req.shown.as_str();
    let sample = reader.fill_buf()?;
    if crate::images::sniff(sample).is_some() {
        return read_image(reader, shown, size);
    }
    if let Some(kind) = binary_kind(&sample[..sample.len().min(SNIFF_BYTES)]) {
        return Ok(ToolResult::error(format!(
            "Error: {shown} is a binary file ({kind}, {}); read_file only reads text.",
            claw_text::byte_size(size)
        )));
    }

    let max_lines = req.limit.map_or(MAX_READ_LINES, |l| l.min(MAX_READ_LINES));
    let mut out = String::new();
    let mut line = Vec::new();
    let mut line_no = 0usize;
    let mut end = 0usize;
    let mut cut = None;
    loop {
        if line_no.is_multiple_of(4096) && cancel.is_cancelled() {
            return Ok(ToolResult::error("Cancelled: the read was aborted."));
        }
        if cut.is_some() {
            // Past the window only the line count is needed, so skip decoding.
            line_no += count_remaining_lines(&mut reader, cancel)?;
            break;
        }
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        line_no += 1;
        if line_no < req.offset {
            continue;
        }
        if line_no - req.offset >= max_lines {
            cut = Some(if max_lines < MAX_READ_LINES {
                Cut::Limit
            } else {
                Cut::Lines
            });
            continue;
        }
        let text = String::from_utf8_lossy(strip_eol(&line));
        let piece = if req.line_numbers {
            format!("{line_no:>6}\t{text}")
        } else {
            text.into_owned()
        };
        let sep = usize::from(!out.is_empty());
        if out.len() + sep + piece.len() > MAX_READ_BYTES {
            if out.is_empty() {
                out.push_str(&piece[..floor_char_boundary(&piece, MAX_READ_BYTES)]);
                end = line_no;
                cut = Some(Cut::LongLine);
            } else {
                cut = Some(Cut::Bytes);
            }
            continue;
        }
        if sep == 1 {
            out.push('\n');
        }
        out.push_str(&piece);
        end = line_no;
    }
    let total = line_no;

    if total == 0 {
        return Ok(ToolResult::text(format!("[{shown} is empty.]")));
    }
    if req.offset > total {
        return Ok(ToolResult::error(format!(
            "Error: offset {} is past the end of {shown}, which has {total} lines. Use an \
             offset from 1 to {total}.",
            req.offset
        )));
    }
    let start = req.offset;
    let more = end < total;
    let note = match cut {
        Some(Cut::LongLine) if more => Some(format!(
            "[Line {end} is longer than 50 KB and was cut. Use offset={} to continue \
             after it.]",
            end + 1
        )),
        Some(Cut::LongLine) => Some(format!(
            "[Line {end} is longer than 50 KB and was cut; read_file cannot show the rest \
             of it.]"
        )),
        Some(Cut::Bytes) => Some(format!(
            "[Showing lines {start}-{end} of {total} (50 KB limit). Use offset={} to \
             continue.]",
            end + 1
        )),
        Some(Cut::Lines) => Some(format!(
            "[Showing lines {start}-{end} of {total} (2000-line limit). Use offset={} to \
             continue.]",
            end + 1
        )),
        Some(Cut::Limit) => Some(format!(
            "[Showing lines {start}-{end} of {total}. Use offset={} to continue.]",
            end + 1
        )),
        None => None,
    };
    let truncated = match cut {
        None => Value::Null,
        Some(Cut::Limit) => json!("limit"),
        Some(Cut::Lines) => json!("lines"),
        Some(Cut::Bytes) => json!("bytes"),
        Some(Cut::LongLine) => json!("long_line"),
    };
    if let Some(note) = note {
        out.push_str("\n\n");
        out.push_str(&note);
    }
    Ok(ToolResult::text(out).with_details(json!({
        "path": path.to_string_lossy(),
        "start_line": start,
        "end_line": end,
        "total_lines": total,
        "truncated": truncated,
    })))
}

/// Counts the lines left in `reader` without keeping them.
fn count_remaining_lines(
    reader: &mut impl BufRead,
    cancel: &CancellationToken,
) -> io::Result<usize> {
    let mut lines = 0;
    let mut last = b'\n';
    loop {
        if cancel.is_cancelled() {
            return Err(io::Error::other("the read was aborted"));
        }
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        last = buf[buf.len() - 1];
        let n = buf.len();
        reader.consume(n);
    }
    // A last line without a newline still counts.
    Ok(lines + usize::from(last != b'\n'))
}

fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The largest index `<= max` that falls on a character boundary of `s`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    if max >= s.len() {
        return s.len();
    }
    (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

/// Known binary formats by their first bytes.
const MAGIC: &[(&[u8], &str)] = &[
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\x28\xb5\x2f\xfd", "zstd archive"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"\x7fELF", "ELF executable"),
    (b"\0asm", "WebAssembly module"),
    (b"SQLite format 3\0", "SQLite database"),
];

/// What kind of binary data `sample` (the file start) is, or `None` for text.
fn binary_kind(sample: &[u8]) -> Option<String> {
    if let Some((_, kind)) = MAGIC.iter().find(|(magic, _)| sample.starts_with(magic)) {
        return Some((*kind).to_owned());
    }
    if sample.len() >= 12 && &sample[..4] == b"RIFF" && &sample[8..12] == b"WEBP" {
        return Some("WebP image".to_owned());
    }
    if sample.contains(&0) {
        return Some("binary data".to_owned());
    }
    // Text in a legacy encoding has a few invalid bytes; binary data has many, or control
    // characters that text does not use.
    let mut chunks = sample.utf8_chunks().peekable();
    let (mut chars, mut suspicious) = (0usize, 0usize);
    while let Some(chunk) = chunks.next() {
        for c in chunk.valid().chars() {
            chars += 1;
            if c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x0c' | '\x1b') {
                suspicious += 1;
            }
        }
        // The sample may end inside a character; that tail is not evidence.
        if chunks.peek().is_some() || sample.len() < SNIFF_BYTES {
            chars += chunk.invalid().len();
            suspicious += chunk.invalid().len();
        }
    }
    (suspicious * 10 > chars).then(|| "binary data".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_binary_are_told_apart() {
        assert_eq!(binary_kind(b"hello\nworld\n"), None);
        assert_eq!(binary_kind("caf\u{e9} \u{1f600}\n".as_bytes()), None);
        assert_eq!(
            binary_kind(b"\x89PNG\r\n\x1a\nrest").as_deref(),
            Some("PNG image")
        );
        assert_eq!(binary_kind(b"ab\0cd").as_deref(), Some("binary data"));
        assert_eq!(
            binary_kind(b"\x01\x02\x03\x04abc").as_deref(),
            Some("binary data")
        );
        // One Latin-1 byte in otherwise plain text is still text.
        assert_eq!(binary_kind(b"a caf\xe9 in an old encoding\n"), None);
    }

    #[test]
    fn cut_points_respect_characters() {
        assert_eq!(floor_char_boundary("a\u{e9}", 2), 1);
        assert_eq!(floor_char_boundary("abc", 10), 3);
    }
}
