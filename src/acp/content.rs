//! A prompt's content blocks as one user message: text as it is; images checked and
//! scaled as `--image` files are; the editor's context (embedded resources) quoted with
//! where it comes from; resource links named so the model can read them with its tools.
//! Audio is not taken (the capabilities say so), and an image that cannot be used is an
//! error that names it: nothing is dropped silently.

use crate::agent::{ImageData, UserMessage};
use crate::images::{self, MAX_FILE_BYTES};
use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource, ResourceLink};
use base64::Engine;
use std::path::Path;

/// Why a prompt cannot be taken.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// An audio block (claw-tui does not take audio).
    #[error(
        "the prompt has an audio block; claw-tui does not take audio (promptCapabilities.audio is false)"
    )]
    Audio,
    /// An image whose data is not base64.
    #[error("image {name}: its data is not base64 ({detail})")]
    Base64 {
        /// The image's name.
        name: String,
        /// What the decoder said.
        detail: String,
    },
    /// An image that is too large, not an image, or cannot be decoded.
    #[error(transparent)]
    Image(#[from] images::ImageError),
    /// The thread checking an image stopped.
    #[error("the image could not be checked: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// A prompt with nothing in it.
    #[error("the prompt is empty")]
    Empty,
}

/// The user message for `blocks`, in their order; `workspace` makes links to its files
/// relative, as the model names them.
pub async fn user_message(
    blocks: Vec<ContentBlock>,
    workspace: &Path,
) -> Result<UserMessage, ContentError> {
    let mut text = String::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => push_part(&mut text, &t.text),
            ContentBlock::Image(image) => {
                let name = image
                    .uri
                    .as_deref()
                    .and_then(|uri| uri.rsplit('/').next())
                    .filter(|n| !n.is_empty())
                    .map_or_else(|| format!("image-{}", images.len() + 1), str::to_owned);
                images.push(decode_image(name, image.data).await?);
            }
            ContentBlock::Audio(_) => return Err(ContentError::Audio),
            ContentBlock::ResourceLink(link) => push_part(&mut text, &link_text(&link, workspace)),
            ContentBlock::Resource(embedded) => match embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => push_part(
                    &mut text,
                    &format!(
                        "<context uri=\"{}\">\n{}\n</context>",
                        shown_uri(&r.uri, workspace),
                        r.text.trim_end_matches('\n')
                    ),
                ),
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    let is_image = r
                        .mime_type
                        .as_deref()
                        .is_some_and(|m| m.starts_with("image/"));
                    if is_image {
                        let name = r.uri.rsplit('/').next().unwrap_or("image").to_owned();
                        images.push(decode_image(name, r.blob).await?);
                    } else {
                        // Binary context the model cannot read: named, not inlined.
                        push_part(
                            &mut text,
                            &format!(
                                "[binary context {} ({}) not included]",
                                shown_uri(&r.uri, workspace),
                                r.mime_type.as_deref().unwrap_or("unknown type")
                            ),
                        );
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    if text.trim().is_empty() && images.is_empty() {
        return Err(ContentError::Empty);
    }
    Ok(UserMessage::new(text).with_images(images))
}

/// Appends a part, blocks separated by a blank line unless one already ends the text.
fn push_part(text: &mut String, part: &str) {
    if !text.is_empty() && !text.ends_with('\n') && !part.starts_with('\n') {
        text.push_str("\n\n");
    }
    text.push_str(part);
}

/// A link as the model reads it: `@path` for a file of the workspace (what the model
/// gives `read_file`), else the name and the URI.
fn link_text(link: &ResourceLink, workspace: &Path) -> String {
    let shown = shown_uri(&link.uri, workspace);
    if shown != link.uri {
        format!("@{shown}")
    } else {
        format!("[{}]({})", link.name, link.uri)
    }
}

/// A `file://` URI inside the workspace as the path relative to it; anything else as
/// it is.
fn shown_uri(uri: &str, workspace: &Path) -> String {
    let Some(path) = uri.strip_prefix("file://") else {
        return uri.to_owned();
    };
    let path = percent_decoded(path);
    match Path::new(&path).strip_prefix(workspace) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => path,
    }
}

/// `%20` and friends in a file URI's path, decoded; a malformed escape is kept.
fn percent_decoded(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An image sent as base64: size checked before decoding, then checked and scaled as
/// an `--image` file is (off the async runtime: scaling decodes the pixels).
async fn decode_image(name: String, data: String) -> Result<ImageData, ContentError> {
    // base64 is 4 characters per 3 bytes: a text this long cannot hold less.
    let size = (data.len() as u64 / 4) * 3;
    if size > MAX_FILE_BYTES {
        return Err(images::ImageError::TooLarge {
            name,
            size,
            limit: MAX_FILE_BYTES,
        }
        .into());
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| ContentError::Base64 {
            name: name.clone(),
            detail: e.to_string(),
        })?;
    Ok(tokio::task::spawn_blocking(move || images::from_bytes(&name, bytes)).await??)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        AudioContent, EmbeddedResource, ImageContent, TextContent, TextResourceContents,
    };

    #[tokio::test]
    async fn text_links_and_context_become_one_message_in_order() {
        let ws = Path::new("/home/me/project");
        let blocks = vec![
            ContentBlock::Text(TextContent::new("Look at")),
            ContentBlock::ResourceLink(ResourceLink::new(
                "main.rs",
                "file:///home/me/project/src/my%20main.rs",
            )),
            ContentBlock::ResourceLink(ResourceLink::new("docs", "https://example.com/d")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}\n",
                    "file:///home/me/project/src/lib.rs",
                )),
            )),
        ];
        let message = user_message(blocks, ws).await.unwrap();
        assert_eq!(
            message.content,
            "Look at\n\n@src/my main.rs\n\n[docs](https://example.com/d)\n\n\
             <context uri=\"src/lib.rs\">\nfn main() {}\n</context>"
        );
        assert!(message.images.is_empty());
    }

    #[tokio::test]
    async fn audio_bad_base64_and_non_images_are_refused_by_name() {
        let ws = Path::new("/w");
        let audio = vec![ContentBlock::Audio(AudioContent::new("AAAA", "audio/wav"))];
        assert!(matches!(
            user_message(audio, ws).await,
            Err(ContentError::Audio)
        ));
        let bad = vec![ContentBlock::Image(ImageContent::new(
            "not base64!",
            "image/png",
        ))];
        let error = user_message(bad, ws).await.unwrap_err().to_string();
        assert!(
            error.contains("image-1") && error.contains("base64"),
            "{error}"
        );
        let text = base64::engine::general_purpose::STANDARD.encode("plain text");
        let not_image = vec![ContentBlock::Image(
            ImageContent::new(text, "image/png").uri("file:///w/shot.png"),
        )];
        let error = user_message(not_image, ws).await.unwrap_err().to_string();
        assert!(error.contains("shot.png is not a PNG"), "{error}");
        assert!(matches!(
            user_message(vec![ContentBlock::Text(TextContent::new("  "))], ws).await,
            Err(ContentError::Empty)
        ));
    }

    #[tokio::test]
    async fn an_image_is_checked_and_attached() {
        let mut png = Vec::new();
        image::DynamicImage::new_rgb8(3, 2)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let blocks = vec![
            ContentBlock::Text(TextContent::new("what is this?")),
            ContentBlock::Image(ImageContent::new(data, "image/png")),
        ];
        let message = user_message(blocks, Path::new("/w")).await.unwrap();
        assert_eq!(message.content, "what is this?");
        assert_eq!(message.images.len(), 1);
        assert_eq!((message.images[0].width, message.images[0].height), (3, 2));
        assert_eq!(message.images[0].mime, "image/png");
    }
}
