//! [`CronError`]: why a cron action or the jobs file failed. Its text is what the model
//! (as the `cron` tool's answer), the dashboard and RPC clients read, so each message
//! says what to do; the OS and JSON errors behind it stay reachable as sources.

use super::ScheduleError;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Something went wrong with a cron request or the jobs file.
///
/// Cheap to clone (the errors behind it are shared), so the client can carry it in a
/// message.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CronError {
    /// The schedule is refused; nothing changed.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// A job with no message to deliver; nothing changed.
    #[error("The message is empty; give the text to deliver when the job fires.")]
    EmptyMessage,
    /// Resuming a one-time job whose time has passed; nothing changed.
    #[error(
        "Cron job \"{name}\" ({id}) was a one-time job and has already had its time; add a \
         new job instead."
    )]
    AlreadyHadItsTime {
        /// The job's name.
        name: String,
        /// Its id.
        id: String,
    },
    /// The scheduler was started outside a tokio runtime.
    #[error("The cron scheduler needs a tokio runtime; start it from async code.")]
    NoRuntime,
    /// No job has this id.
    #[error("No cron job with id \"{id}\" in this workspace. action=list shows the job ids.")]
    UnknownJob {
        /// The id asked for.
        id: String,
    },
    /// `jobs.json` comes from a newer claw-tui.
    #[error(
        "{} was written by a newer claw-tui (file version {found}; this one reads \
         version {supported}). Upgrade claw-tui, or move the file away to start with no jobs.",
        .path.display()
    )]
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u64,
        /// The version this build reads.
        supported: u64,
    },
    /// `jobs.json` cannot be read as a jobs file.
    #[error(
        "{} is not a valid cron jobs file ({reason}). No cron job fires or can be \
         changed until it is fixed: correct the file, or move it away to start with no \
         jobs. claw-tui will not overwrite it.",
        .path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        reason: CorruptReason,
    },
    /// A file operation failed.
    #[error(
        "Cannot {action} {}: {source}. Check the permissions and free space of the data \
         directory.",
        .path.display()
    )]
    Io {
        /// What was being done, e.g. `write`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The jobs could not be turned into JSON (nothing was written).
    #[error(
        "Cannot encode {}: {source}. Check the permissions and free space of the data \
         directory.",
        .path.display()
    )]
    Encode {
        /// The file that was to be written.
        path: PathBuf,
        /// The encoder's error.
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// The blocking task doing the file work panicked or was cancelled; nothing is
    /// known to have changed.
    #[error("The cron action failed unexpectedly ({source}); try again.")]
    Interrupted {
        /// The task's failure.
        #[source]
        source: Arc<tokio::task::JoinError>,
    },
}

/// Why `jobs.json` is not a valid jobs file.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CorruptReason {
    /// It is not JSON, or not the shape of a jobs file.
    #[error(transparent)]
    Json(Arc<serde_json::Error>),
    /// It has no `version` number.
    #[error("it has no numeric \"version\"")]
    NoVersion,
    /// Its version is older than any claw-tui wrote.
    #[error("version {0} was never written by claw-tui")]
    UnknownVersion(u64),
}

impl CronError {
    /// Whether this is trouble with `jobs.json` itself (rather than with a request).
    pub fn is_file_problem(&self) -> bool {
        matches!(
            self,
            Self::Corrupt { .. }
                | Self::NewerVersion { .. }
                | Self::Io { .. }
                | Self::Encode { .. }
        )
    }

    /// A failed file operation: `action` (e.g. `write`) on `path`.
    pub(super) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_owned(),
            source: Arc::new(source),
        }
    }
}

impl From<tokio::task::JoinError> for CronError {
    fn from(source: tokio::task::JoinError) -> Self {
        Self::Interrupted {
            source: Arc::new(source),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn an_unknown_job_is_named() {
        let e = CronError::UnknownJob {
            id: "cron-7".into(),
        };
        assert_eq!(
            e.to_string(),
            "No cron job with id \"cron-7\" in this workspace. action=list shows the job ids."
        );
        assert!(!e.is_file_problem());
    }

    #[test]
    fn a_failed_file_operation_names_file_and_cause_and_keeps_the_os_error() {
        let os = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let text = os.to_string();
        let e = CronError::io("write", Path::new("/data/cron/jobs.json"), os);
        assert_eq!(
            e.to_string(),
            format!(
                "Cannot write /data/cron/jobs.json: {text}. Check the permissions and free \
                 space of the data directory."
            )
        );
        // Shared, so the source is the `Arc` around the OS error.
        let source = e
            .source()
            .and_then(|s| s.downcast_ref::<Arc<std::io::Error>>());
        assert_eq!(
            source.map(|s| s.kind()),
            Some(std::io::ErrorKind::PermissionDenied)
        );
        assert!(e.is_file_problem());
    }

    #[test]
    fn a_corrupt_file_says_why_and_chains_the_json_error() {
        let json = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let text = json.to_string();
        let e = CronError::Corrupt {
            path: "/d/jobs.json".into(),
            reason: CorruptReason::Json(Arc::new(json)),
        };
        assert!(e.to_string().starts_with(&format!(
            "/d/jobs.json is not a valid cron jobs file ({text})."
        )));
        let reason = e.source().map(ToString::to_string);
        assert_eq!(reason.as_deref(), Some(text.as_str()));
        let e = CronError::Corrupt {
            path: "/d/jobs.json".into(),
            reason: CorruptReason::UnknownVersion(0),
        };
        assert!(
            e.to_string()
                .contains("(version 0 was never written by claw-tui)"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_panicked_task_says_to_try_again() {
        let join = tokio::spawn(async { panic!("boom") }).await.unwrap_err();
        let e = CronError::from(join);
        assert!(
            e.to_string()
                .starts_with("The cron action failed unexpectedly ("),
            "{e}"
        );
        assert!(e.to_string().ends_with("); try again."), "{e}");
        assert!(e.source().is_some());
    }
}
