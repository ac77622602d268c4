//! Images on the wire: which models can see them, the notes that replace them for the
//! others, and their base64 forms.

use super::{LlmMessage, LlmRequest};
use base64::Engine;
use claw_agent::ImageData;

/// Model-id prefixes of models known to take text only. A model not listed is assumed to
/// accept images (most current models do; a wrong guess costs one refused request).
const TEXT_ONLY: &[&str] = &[
    "gpt-3.5",
    "gpt-4-0",
    "gpt-4-32k",
    "o1-mini",
    "o1-preview",
    "o3-mini",
    "gpt-oss",
    "claude-2",
    "claude-instant",
    "deepseek-chat",
    "deepseek-reasoner",
    "deepseek-r1",
    "deepseek-coder",
    "deepseek-v3",
    "codestral",
    "mixtral",
    "mistral-7b",
    "llama2",
    "llama3:",
    "llama3.1",
    "llama-3.1",
    "qwen2.5-coder",
    "qwen3-coder",
];

/// Whether `model` accepts images. Router prefixes (`openai/`) are ignored.
pub fn accepts_images(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    name != "gpt-4" && !TEXT_ONLY.iter().any(|prefix| name.starts_with(prefix))
}

/// The images `message` carries (answers carry none).
fn images_of<'m>(message: &'m LlmMessage<'_>) -> &'m [ImageData] {
    match message {
        LlmMessage::User(user) => &user.images,
        LlmMessage::ToolResult(result) => &result.images,
        LlmMessage::Assistant(_) => &[],
    }
}

/// Whether `image` goes to a model that `sees` images as it is.
fn sent_as_is(image: &ImageData, sees: bool) -> bool {
    sees && image.is_loaded()
}

/// Whether [`prepare_images`] would change `request`.
pub(crate) fn needs_preparing(request: &LlmRequest) -> bool {
    let sees = accepts_images(&request.model);
    request
        .messages
        .iter()
        .any(|m| !images_of(m).iter().all(|i| sent_as_is(i, sees)))
}

/// Replaces the images `request.model` cannot take (all of them for a text-only model;
/// those whose bytes are missing for any model) with a note in the message text, so
/// the model reads what happened instead of the request being refused.
pub(crate) fn prepare_images(request: &mut LlmRequest) {
    let sees = accepts_images(&request.model);
    let model = request.model.clone();
    for message in &mut request.messages {
        if images_of(message).iter().all(|i| sent_as_is(i, sees)) {
            continue;
        }
        // Only a message that changes is copied out of the history.
        let (images, text) = match message {
            LlmMessage::User(user) => {
                let user = user.to_mut();
                (&mut user.images, &mut user.content)
            }
            LlmMessage::ToolResult(result) => {
                let result = result.to_mut();
                (&mut result.images, &mut result.content)
            }
            LlmMessage::Assistant(_) => continue,
        };
        let mut kept = Vec::with_capacity(images.len());
        for image in images.drain(..) {
            let note = if !sees {
                format!(
                    "[{}: not sent, the model {model} cannot see images]",
                    image.chip().trim_matches(['[', ']'])
                )
            } else if !image.is_loaded() {
                format!(
                    "[{}: not sent, its stored copy is missing from the session]",
                    image.chip().trim_matches(['[', ']'])
                )
            } else {
                kept.push(image);
                continue;
            };
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&note);
        }
        *images = kept;
    }
}

/// The image's bytes as base64.
pub(crate) fn base64(image: &ImageData) -> String {
    base64::engine::general_purpose::STANDARD.encode(&image.data)
}

/// The image as a `data:` URL (OpenAI's `image_url`).
pub(crate) fn data_url(image: &ImageData) -> String {
    format!("data:{};base64,{}", image.mime, base64(image))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use claw_agent::{ThinkingLevel, UserMessage};

    fn image(data: &'static [u8]) -> ImageData {
        ImageData {
            name: "a.png".into(),
            mime: "image/png".into(),
            width: 2,
            height: 1,
            size: data.len() as u64,
            sha256: "00".into(),
            data: Bytes::from_static(data),
        }
    }

    fn request(model: &str, images: Vec<ImageData>) -> LlmRequest<'static> {
        LlmRequest {
            system_prompt: String::new(),
            messages: vec![LlmMessage::from(
                UserMessage::new("look").with_images(images),
            )],
            tools: Vec::new(),
            model: model.into(),
            thinking: ThinkingLevel::Off,
        }
    }

    fn user<'a>(request: &'a LlmRequest<'_>) -> &'a UserMessage {
        match &request.messages[0] {
            LlmMessage::User(u) => u,
            _ => unreachable!(),
        }
    }

    #[test]
    fn text_only_models_get_a_note_instead() {
        assert!(accepts_images("claude-sonnet-4-5"));
        assert!(accepts_images("some-new-model"));
        assert!(accepts_images("gpt-4o"));
        assert!(!accepts_images("openai/gpt-3.5-turbo"));
        assert!(!accepts_images("deepseek-chat"));
        assert!(!needs_preparing(&request("gpt-4o", vec![image(b"xy")])));
        let mut r = request("deepseek-chat", vec![image(b"xy")]);
        assert!(needs_preparing(&r));
        prepare_images(&mut r);
        assert!(user(&r).images.is_empty());
        assert_eq!(
            user(&r).content,
            "look\n[image: a.png 2×1, 2 B: not sent, the model deepseek-chat cannot see images]"
        );
        let mut r = request("gpt-4o", vec![image(b"xy"), image(b"")]);
        prepare_images(&mut r);
        assert_eq!(user(&r).images.len(), 1);
        assert!(user(&r).content.contains("stored copy is missing"));
        assert_eq!(data_url(&image(b"xy")), "data:image/png;base64,eHk=");
    }
}
