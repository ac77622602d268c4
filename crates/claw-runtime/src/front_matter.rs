//! YAML front matter at the top of a Markdown file (`---` lines around it), as written
//! by skills (`SKILL.md`) and custom slash commands.

use serde::de::DeserializeOwned;

/// A front matter block that is not valid YAML for the fields expected.
#[derive(Debug, thiserror::Error)]
#[error("front matter is not valid YAML: {0}")]
pub struct FrontMatterError(#[source] pub serde_yaml_ng::Error);

/// The front matter block (between `---` lines at the very top) and the body after it;
/// no block when the file does not start with one or it is never closed.
pub fn split(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, text)
}

/// Whether `text` opens a front matter block (a `---` first line) that no `---` line
/// closes: [`split`] then sees no block, and the file's lines would be misread as its body.
pub fn unclosed(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let opens = text.starts_with("---\n") || text.starts_with("---\r\n");
    opens && split(text).0.is_none()
}

/// The front matter of `text` read into `T` (unknown fields are the caller's choice;
/// the default when there is none) and the body. A block that is not valid YAML for
/// `T` is an error saying why, with the body still returned.
pub fn parse<T: DeserializeOwned + Default>(text: &str) -> (Result<T, FrontMatterError>, &str) {
    let (front, body) = split(text);
    let Some(front) = front.filter(|f| !f.trim().is_empty()) else {
        return (Ok(T::default()), body);
    };
    let parsed = serde_yaml_ng::from_str::<Option<T>>(front)
        .map(Option::unwrap_or_default)
        .map_err(FrontMatterError);
    (parsed, body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct Fields {
        name: Option<String>,
    }

    #[test]
    fn blocks_split_and_parse_or_explain() {
        assert_eq!(split("---\na: 1\n---\nbody"), (Some("a: 1\n"), "body"));
        assert_eq!(split("no front\n---\n"), (None, "no front\n---\n"));
        assert_eq!(split("---\nnever closed"), (None, "---\nnever closed"));
        assert!(unclosed("---\nnever closed"));
        assert!(unclosed("\u{feff}---\r\nname: x\r\n"));
        assert!(!unclosed("---\na: 1\n---\nbody"));
        assert!(!unclosed("no front\n---\n"));
        let (fields, body) = parse::<Fields>("\u{feff}---\r\nname: x\r\n---\r\nrest");
        assert_eq!(
            fields.unwrap(),
            Fields {
                name: Some("x".into())
            }
        );
        assert_eq!(body, "rest");
        let (bad, body) = parse::<Fields>("---\nname: [unclosed\n---\nrest");
        let bad = bad.unwrap_err();
        assert!(
            bad.to_string()
                .starts_with("front matter is not valid YAML: "),
            "{bad}"
        );
        assert!(std::error::Error::source(&bad).is_some());
        assert_eq!(body, "rest");
        assert_eq!(parse::<Fields>("---\n---\nb").0.unwrap(), Fields::default());
    }
}
