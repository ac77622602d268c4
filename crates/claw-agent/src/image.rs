//! Images attached to messages: the encoded bytes providers send, and what the chat's
//! chip shows about them.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// One image attached to a user message or a tool result, already scaled to what the
/// APIs accept (see the `images` module of claw-tui).
///
/// Session lines keep only the metadata and the hash: the bytes are stored once beside
/// the session file (`session::images`) and put back when it is loaded, so a history
/// replayed on every request does not repeat them in the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImageData {
    /// File name shown in the chip, e.g. `shot.png`.
    pub name: String,
    /// MIME type: `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime: String,
    /// Width in pixels (of the bytes sent).
    pub width: u32,
    /// Height in pixels (of the bytes sent).
    pub height: u32,
    /// Size of the encoded bytes.
    pub size: u64,
    /// SHA-256 of the encoded bytes, lower-case hex: the image's name in the store.
    pub sha256: String,
    /// The encoded image; empty when a session's stored copy could not be found.
    #[serde(skip)]
    pub data: Bytes,
}

impl ImageData {
    /// The chip the chat shows: `[image: shot.png 1280×720, 210 KB]`.
    pub fn chip(&self) -> String {
        format!(
            "[image: {} {}×{}, {}]",
            self.name,
            self.width,
            self.height,
            claw_text::byte_size(self.size)
        )
    }

    /// About what the image costs in a request, in tokens: width × height / 750 (the
    /// Anthropic rule), at most 1,600 (the APIs scale larger images down first).
    pub fn estimated_tokens(&self) -> u64 {
        (u64::from(self.width) * u64::from(self.height))
            .div_ceil(750)
            .clamp(1, 1_600)
    }

    /// Whether the bytes are present (a session may have lost its stored copy).
    pub fn is_loaded(&self) -> bool {
        !self.data.is_empty()
    }

    /// The file extension that goes with the MIME type.
    pub fn extension(&self) -> &'static str {
        match self.mime.as_str() {
            "image/jpeg" => "jpg",
            "image/gif" => "gif",
            "image/webp" => "webp",
            _ => "png",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chips_name_the_file_its_pixels_and_size() {
        let image = ImageData {
            name: "shot.png".into(),
            mime: "image/png".into(),
            width: 1280,
            height: 720,
            size: 209_500,
            sha256: "ab".into(),
            data: Bytes::new(),
        };
        assert_eq!(image.chip(), "[image: shot.png 1280×720, 204.6 KiB]");
        assert!(!image.is_loaded());
        assert_eq!(image.estimated_tokens(), 1_229);
        let large = ImageData {
            width: 2048,
            height: 2048,
            ..image.clone()
        };
        assert_eq!(large.estimated_tokens(), 1_600);
        let line = serde_json::to_string(&image).unwrap();
        assert!(!line.contains("data"), "{line}");
    }
}
