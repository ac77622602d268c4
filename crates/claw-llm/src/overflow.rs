//! How providers say that a request does not fit the model's context window: one table of
//! wordings, each the part of the error text that gives it away. A refusal recognised
//! here is compacted and sent again instead of ending the run.

/// One provider's way of saying the conversation is too long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OverflowWording {
    /// Who says it (for people reading the table; tests name it too).
    pub provider: &'static str,
    /// Lowercase text that appears in the error body or message when it is said.
    pub sign: &'static str,
}

/// Every wording recognised; a new provider's is added here, with a test of its own.
pub(crate) const OVERFLOW_WORDINGS: &[OverflowWording] = &[
    OverflowWording {
        provider: "OpenAI, vLLM",
        sign: "context length",
    },
    OverflowWording {
        provider: "OpenAI (code)",
        sign: "context_length",
    },
    OverflowWording {
        provider: "OpenAI Responses",
        sign: "context window",
    },
    OverflowWording {
        provider: "llama.cpp",
        sign: "context size",
    },
    OverflowWording {
        provider: "llama.cpp (type)",
        sign: "exceed_context",
    },
    OverflowWording {
        provider: "other servers: exceeds the context",
        sign: "exceeds the context",
    },
    OverflowWording {
        provider: "Anthropic",
        sign: "prompt is too long",
    },
    OverflowWording {
        provider: "Anthropic (input and max_tokens)",
        sign: "exceed context limit",
    },
    OverflowWording {
        // The body's `type`: the request is over Anthropic's size limit in bytes, which
        // only a shorter conversation fixes.
        provider: "Anthropic (HTTP 413)",
        sign: "request_too_large",
    },
    OverflowWording {
        provider: "other servers: too many tokens",
        sign: "too many tokens",
    },
    OverflowWording {
        provider: "OpenRouter",
        sign: "maximum context",
    },
    OverflowWording {
        provider: "Amazon Bedrock",
        sign: "input is too long",
    },
    OverflowWording {
        provider: "Gemini (OpenAI-compatible)",
        sign: "exceeds the maximum number of tokens allowed",
    },
];

/// The wording of [`OVERFLOW_WORDINGS`] that `server` (a rejected request's raw body, or
/// its message) uses, if any.
pub(crate) fn overflow_wording(server: &str) -> Option<&'static OverflowWording> {
    let text = server.to_ascii_lowercase();
    OVERFLOW_WORDINGS.iter().find(|w| text.contains(w.sign))
}

/// Whether a rejected request's error says the conversation does not fit the model's
/// context window, in any wording of [`OVERFLOW_WORDINGS`].
pub(crate) fn is_context_overflow(server: &str) -> bool {
    overflow_wording(server).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each provider's own text, as its API returns it (body or message).
    const SAID: &[(&str, &str)] = &[
        (
            "OpenAI, vLLM",
            "This model's maximum context length is 128000 tokens. However, your messages \
             resulted in 130000 tokens.",
        ),
        (
            "OpenAI (code)",
            r#"{"error":{"message":"Request too large.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
        ),
        (
            "OpenAI Responses",
            "Your input exceeds the context window of this model. Please adjust your input \
             and try again.",
        ),
        (
            "llama.cpp",
            "the request exceeds the available context size, try increasing it",
        ),
        (
            "llama.cpp (type)",
            r#"{"error":{"type":"exceed_context_size_error"}}"#,
        ),
        (
            "other servers: exceeds the context",
            "The prompt (40000 tokens) exceeds the context of the model (32768)",
        ),
        (
            "Anthropic",
            "invalid_request_error: prompt is too long: 215000 tokens > 200000 maximum",
        ),
        (
            "Anthropic (input and max_tokens)",
            "invalid_request_error: input length and `max_tokens` exceed context limit: \
             197000 + 8192 > 200000, decrease input length or `max_tokens` and try again",
        ),
        (
            "Anthropic (HTTP 413)",
            r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#,
        ),
        (
            "other servers: too many tokens",
            "too many tokens in the request: 140000 of 131072",
        ),
        (
            "OpenRouter",
            "This endpoint's maximum context length is 200000 tokens. However, you requested \
             about 210000 tokens.",
        ),
        ("Amazon Bedrock", "Input is too long for requested model."),
        (
            "Gemini (OpenAI-compatible)",
            r#"[{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#,
        ),
    ];

    /// The provider's text is recognised, by the wording of that provider.
    fn recognised(provider: &str) {
        let (_, text) = SAID
            .iter()
            .find(|(p, _)| *p == provider)
            .unwrap_or_else(|| panic!("no text of {provider}"));
        assert!(is_context_overflow(text), "{provider}: {text}");
        let wordings: Vec<&str> = OVERFLOW_WORDINGS
            .iter()
            .filter(|w| text.to_ascii_lowercase().contains(w.sign))
            .map(|w| w.provider)
            .collect();
        assert!(wordings.contains(&provider), "{provider}: {wordings:?}");
    }

    #[test]
    fn openai_maximum_context_length() {
        recognised("OpenAI, vLLM");
    }

    #[test]
    fn openai_context_length_exceeded_code() {
        recognised("OpenAI (code)");
    }

    #[test]
    fn openai_responses_context_window() {
        recognised("OpenAI Responses");
    }

    #[test]
    fn llama_cpp_context_size() {
        recognised("llama.cpp");
    }

    #[test]
    fn llama_cpp_exceed_context_size_error() {
        recognised("llama.cpp (type)");
    }

    #[test]
    fn other_servers_exceeds_the_context() {
        recognised("other servers: exceeds the context");
    }

    #[test]
    fn anthropic_prompt_is_too_long() {
        recognised("Anthropic");
    }

    #[test]
    fn anthropic_input_length_and_max_tokens_exceed_context_limit() {
        recognised("Anthropic (input and max_tokens)");
    }

    #[test]
    fn anthropic_request_too_large() {
        recognised("Anthropic (HTTP 413)");
    }

    #[test]
    fn other_servers_too_many_tokens() {
        recognised("other servers: too many tokens");
    }

    #[test]
    fn openrouter_maximum_context() {
        recognised("OpenRouter");
    }

    #[test]
    fn bedrock_input_is_too_long() {
        recognised("Amazon Bedrock");
    }

    #[test]
    fn gemini_input_token_count_exceeds_the_maximum() {
        recognised("Gemini (OpenAI-compatible)");
    }

    #[test]
    fn every_wording_of_the_table_has_its_providers_text_here() {
        for wording in OVERFLOW_WORDINGS {
            assert!(
                SAID.iter().any(|(p, _)| *p == wording.provider),
                "no text of {} to test {:?} with",
                wording.provider,
                wording.sign
            );
        }
    }

    #[test]
    fn other_refusals_are_not_overflows() {
        for text in [
            "max_tokens: too big",
            "The model `x` does not exist",
            "invalid JSON",
            "Request exceeds the allowed rate",
            "overloaded_error: Overloaded",
        ] {
            assert!(!is_context_overflow(text), "{text}");
        }
    }
}
