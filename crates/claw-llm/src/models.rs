//! Listing the models a server offers (`GET .../models`), for `/model` completion.
//!
//! OpenAI, Ollama, vLLM, llama.cpp, OpenRouter and Anthropic all answer with
//! `{"data": [{"id": ...}, ...]}`; Anthropic pages its list with `has_more`/`last_id`.

use super::accumulate::excerpt;
use super::messages::{describe, server_message};
use crate::ModelsError;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::Deserialize;
use std::time::Duration;

/// Pages followed at most: a server that keeps saying `has_more` cannot keep the
/// fetch going forever.
pub(crate) const MAX_PAGES: usize = 10;
/// Models asked for per page (Anthropic's maximum).
const PAGE_SIZE: &str = "1000";

#[derive(Deserialize)]
struct Page {
    data: Vec<Entry>,
    #[serde(default)]
    has_more: bool,
    #[serde(default)]
    last_id: Option<String>,
}

#[derive(Deserialize)]
struct Entry {
    id: String,
}

/// One server's model list endpoint.
pub(crate) struct ModelList<'a> {
    /// The provider's HTTP client.
    pub client: &'a reqwest::Client,
    /// The provider's headers, with its (sensitive) key.
    pub headers: HeaderMap,
    /// Longest wait for one page.
    pub timeout: Duration,
    /// Provider name, for error messages.
    pub provider: &'a str,
    /// The endpoint.
    pub url: String,
}

impl ModelList<'_> {
    /// The ids of a list that comes in one response.
    pub(crate) async fn single(&self) -> Result<Vec<String>, ModelsError> {
        let page = self.page(&[]).await?;
        Ok(unique(page.data.into_iter().map(|e| e.id)))
    }

    /// The ids of a list paged with `after_id`, following up to [`MAX_PAGES`] pages.
    pub(crate) async fn paged(&self) -> Result<Vec<String>, ModelsError> {
        let mut ids = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![("limit", PAGE_SIZE)];
            if let Some(after) = &after {
                query.push(("after_id", after.as_str()));
            }
            let page = self.page(&query).await?;
            ids.extend(page.data.into_iter().map(|e| e.id));
            match page.last_id {
                // A repeated cursor would fetch the same page again.
                Some(last) if page.has_more && after.as_ref() != Some(&last) => {
                    after = Some(last);
                }
                _ => return Ok(unique(ids)),
            }
        }
        tracing::warn!(
            "{} has more than {MAX_PAGES} pages of models at {}; completing from the first {}",
            self.provider,
            super::tap::redact_url(&self.url),
            ids.len()
        );
        Ok(unique(ids))
    }

    async fn page(&self, query: &[(&str, &str)]) -> Result<Page, ModelsError> {
        let mut headers = self.headers.clone();
        headers.remove(CONTENT_TYPE);
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        // Sent as configured, shown without credentials.
        let url = &super::tap::redact_url(&self.url);
        let response = self
            .client
            .get(&self.url)
            .query(query)
            .headers(headers)
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| ModelsError::Unreachable {
                url: url.clone(),
                reason: describe(&e),
            })?;
        let status = response.status();
        let body = response.text().await.map_err(|e| ModelsError::Unreadable {
            url: url.clone(),
            reason: describe(&e),
        })?;
        if !status.is_success() {
            return Err(ModelsError::Refused {
                provider: self.provider.to_owned(),
                url: url.clone(),
                status: status.as_u16(),
                message: server_message(&body),
            });
        }
        serde_json::from_str(&body).map_err(|e| ModelsError::NotAList {
            provider: self.provider.to_owned(),
            url: url.clone(),
            reason: e.to_string(),
            excerpt: excerpt(body.trim(), 200),
        })
    }
}

/// The ids in their order, each once.
fn unique(ids: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.into_iter()
        .filter(|id| !id.is_empty() && seen.insert(id.clone()))
        .collect()
}
