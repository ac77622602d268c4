//! Saving choices made in the client (`/settings`, then `s`) into the user's config file,
//! keeping the rest of it as it was written: comments, order, layout. A file that does
//! not parse is not touched (the error says so); one that does not exist is created,
//! readable by the user only, like everything else claw-tui keeps.

use std::io::Write;
use std::path::Path;
use toml_edit::{DocumentMut, Item, Table, value};

/// One setting to save: its table, key and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedSetting {
    /// The table's path: `["ui"]`, `["providers", "openai"]`, empty for the top level.
    pub table: Vec<String>,
    /// The key.
    pub key: String,
    /// The value.
    pub value: SettingValue,
}

/// A setting's value as the file holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingValue {
    /// A string (`theme = "light"`).
    Text(String),
    /// A boolean (`mouse = false`).
    Flag(bool),
}

/// Why saving failed.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The file could not be read or written.
    #[error("cannot save to {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds TOML that does not parse: left as it is.
    #[error(
        "{path} does not parse as TOML, so it was left as it is ({why}); fix it, then save again"
    )]
    Unparsable {
        /// The file.
        path: String,
        /// The parser's words.
        why: String,
    },
    /// A key that should hold a table holds something else.
    #[error("{path}: `{table}` is not a table, so `{table}.{key}` cannot be set")]
    NotATable {
        /// The file.
        path: String,
        /// The table's name.
        table: String,
        /// The key.
        key: String,
    },
}

/// Writes `settings` into the config file at `path`, the rest of the file kept.
pub fn save_settings(path: &Path, settings: &[SavedSetting]) -> Result<(), SaveError> {
    let shown = path.display().to_string();
    let io = |source| SaveError::Io {
        path: shown.clone(),
        source,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(e)),
    };
    let mut doc: DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| SaveError::Unparsable {
                path: shown.clone(),
                why: e.message().to_owned(),
            })?;
    for setting in settings {
        let item = match &setting.value {
            SettingValue::Text(t) => value(t.as_str()),
            SettingValue::Flag(b) => value(*b),
        };
        let mut table: &mut Table = doc.as_table_mut();
        for (depth, name) in setting.table.iter().enumerate() {
            let entry = table.entry(name).or_insert_with(|| {
                let mut new = Table::new();
                // `[providers.openai]`, not an empty `[providers]` above it.
                new.set_implicit(depth + 1 < setting.table.len());
                Item::Table(new)
            });
            table = entry.as_table_mut().ok_or_else(|| SaveError::NotATable {
                path: shown.clone(),
                table: setting.table[..=depth].join("."),
                key: setting.key.clone(),
            })?;
        }
        match table.get_mut(&setting.key) {
            // Replacing only the value keeps a comment written after it.
            Some(existing) if existing.is_value() => {
                let decor = existing.as_value().map(|v| v.decor().clone());
                *existing = item;
                if let (Some(decor), Some(v)) = (decor, existing.as_value_mut()) {
                    *v.decor_mut() = decor;
                }
            }
            _ => {
                table.insert(&setting.key, item);
            }
        }
    }
    write_whole(path, doc.to_string().as_bytes()).map_err(io)
}

/// Replaces the file with `bytes` through a temporary file beside it, so a crash never
/// leaves half a config; a new file is created private.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".config-")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        // The file keeps the mode it had.
        std::fs::set_permissions(temp.path(), meta.permissions())?;
    }
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(table: &[&str], key: &str, v: &str) -> SavedSetting {
        SavedSetting {
            table: table.iter().map(|t| (*t).to_owned()).collect(),
            key: key.to_owned(),
            value: SettingValue::Text(v.to_owned()),
        }
    }

    #[test]
    fn comments_order_and_other_keys_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# my settings\nprovider = \"openai\"  # the work account\n\n[ui]\n# colours\ntheme = \"dark\"   # for now\n\n[keys]\nsubmit = \"enter\"\n";
        std::fs::write(&path, before).unwrap();
        let flag = SavedSetting {
            table: vec!["ui".into()],
            key: "mouse".into(),
            value: SettingValue::Flag(false),
        };
        save_settings(
            &path,
            &[
                text(&["ui"], "theme", "light"),
                flag,
                text(&["agent"], "thinking", "high"),
                text(&["providers", "openai"], "model", "gpt-5"),
            ],
        )
        .unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            after.starts_with("# my settings\nprovider = \"openai\"  # the work account\n"),
            "{after}"
        );
        assert!(
            after.contains("# colours\ntheme = \"light\"   # for now\nmouse = false\n"),
            "{after}"
        );
        assert!(after.contains("[keys]\nsubmit = \"enter\"\n"), "{after}");
        assert!(after.contains("[agent]\nthinking = \"high\"\n"), "{after}");
        assert!(
            after.contains("[providers.openai]\nmodel = \"gpt-5\"\n"),
            "{after}"
        );
        assert!(!after.contains("[providers]\n"), "{after}");
        // What was written still reads as a config file.
        crate::config::parse_file(&path, &after).unwrap();
    }

    #[test]
    fn a_missing_file_is_created_private_and_a_broken_one_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claw-tui/config.toml");
        save_settings(&path, &[text(&["ui"], "theme", "light")]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[ui]\ntheme = \"light\"\n"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);

        let broken = "[ui\ntheme = ";
        std::fs::write(&path, broken).unwrap();
        let err = save_settings(&path, &[text(&["ui"], "theme", "dark")]).unwrap_err();
        assert!(err.to_string().contains("does not parse"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);

        std::fs::write(&path, "ui = 3\n").unwrap();
        let err = save_settings(&path, &[text(&["ui"], "theme", "dark")]).unwrap_err();
        assert!(err.to_string().contains("`ui` is not a table"), "{err}");
    }
}
