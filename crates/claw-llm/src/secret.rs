//! API keys that never show up in logs or `Debug` output.

use serde::Deserialize;

/// A secret string (an API key): `Debug` prints `Secret(***)`, and there is no `Display`,
/// so a key can only leave through an explicit [`Secret::expose`].
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for putting into a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is empty (an unset variable read as "").
    pub fn is_empty(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn debug_redacts_the_value() {
        let key = Secret::new("sk-ant-very-secret");
        let shown = format!("{key:?} {:?}", Some(key.clone()));
        assert!(!shown.contains("very-secret"), "{shown}");
        assert_eq!(key.expose(), "sk-ant-very-secret");
    }
}
