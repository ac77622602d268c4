//! The `cron` tool: schedules messages to the agent through a [`CronBackend`] that the
//! runtime provides. The tool checks the flat arguments and turns them into typed calls.

use crate::args;
use async_trait::async_trait;
use claw_agent::{ToolResult, ToolSpec, ToolUpdates, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::sync::Arc;
use std::sync::LazyLock;
use tokio_util::sync::CancellationToken;

/// When a job fires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CronSchedule {
    /// Repeatedly, every so many seconds (at least 1).
    EverySeconds(u64),
    /// On a cron expression, in a time zone (default: local time).
    Expr {
        /// The cron expression.
        expr: String,
        /// IANA time zone name, e.g. `Europe/Berlin`.
        tz: Option<String>,
    },
    /// Once, at an ISO 8601 date-time.
    At(String),
}

/// Stores and runs scheduled jobs; implemented by the runtime. Each method returns the
/// text the model gets back, or an error whose text the model gets back.
#[async_trait]
pub trait CronBackend: Send + Sync {
    /// Why a call failed; its `Display` is the model's error result.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Adds a job delivering `message` on `schedule`.
    async fn add(
        &self,
        name: Option<String>,
        message: String,
        schedule: CronSchedule,
    ) -> Result<String, Self::Error>;
    /// Describes all jobs.
    async fn list(&self) -> Result<String, Self::Error>;
    /// Deletes a job.
    async fn remove(&self, id: &str) -> Result<String, Self::Error>;
    /// Stops a job from firing until resumed.
    async fn pause(&self, id: &str) -> Result<String, Self::Error>;
    /// Lets a paused job fire again.
    async fn resume(&self, id: &str) -> Result<String, Self::Error>;
}

/// The backend when no jobs can be stored at all (the data directory cannot be
/// created): the tool stays, and every call says why it cannot work.
pub struct UnavailableCron<E> {
    reason: Arc<E>,
}

impl<E> UnavailableCron<E> {
    /// A backend that answers every call with `reason`.
    pub fn new(reason: E) -> Self {
        Self {
            reason: Arc::new(reason),
        }
    }

    fn fail(&self) -> Result<String, CronUnavailable<E>> {
        Err(CronUnavailable {
            reason: Arc::clone(&self.reason),
        })
    }
}

/// Every call of an [`UnavailableCron`] fails with this: why there are no jobs.
#[derive(Debug, thiserror::Error)]
#[error("Cron jobs are unavailable: {reason}")]
pub struct CronUnavailable<E> {
    /// Why the jobs cannot be stored (e.g. the data directory cannot be created).
    #[source]
    pub reason: Arc<E>,
}

#[async_trait]
impl<E: std::error::Error + Send + Sync + 'static> CronBackend for UnavailableCron<E> {
    type Error = CronUnavailable<E>;

    async fn add(
        &self,
        _: Option<String>,
        _: String,
        _: CronSchedule,
    ) -> Result<String, Self::Error> {
        self.fail()
    }
    async fn list(&self) -> Result<String, Self::Error> {
        self.fail()
    }
    async fn remove(&self, _: &str) -> Result<String, Self::Error> {
        self.fail()
    }
    async fn pause(&self, _: &str) -> Result<String, Self::Error> {
        self.fail()
    }
    async fn resume(&self, _: &str) -> Result<String, Self::Error> {
        self.fail()
    }
}

/// The arguments of `cron`: flat, one object for every action, as models call it best.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CronArgs {
    /// What to do
    action: Action,
    /// Short job name (add)
    name: Option<String>,
    /// Text delivered to you when the job fires (add)
    message: Option<String>,
    /// Repeat interval in seconds (add)
    #[schemars(range(min = 1))]
    every_seconds: Option<u64>,
    /// Cron expression (add)
    cron_expr: Option<String>,
    /// IANA time zone for cron_expr, e.g. Europe/Berlin
    tz: Option<String>,
    /// One-time ISO 8601 date-time (add)
    at: Option<String>,
    /// Job id (remove, pause, resume)
    id: Option<String>,
}

/// The `action` of a `cron` call.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Action {
    Add,
    List,
    Remove,
    Pause,
    Resume,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::List => "list",
            Action::Remove => "remove",
            Action::Pause => "pause",
            Action::Resume => "resume",
        }
    }
}

/// Why a `cron` call cannot be made as asked.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum CronArgsError {
    #[error("action \"add\" needs \"message\": the text delivered to you when the job fires.")]
    NoMessage,
    #[error(
        "action \"add\" needs a schedule: give exactly one of every_seconds (repeat every N \
         seconds), cron_expr (cron expression, optional tz) or at (once, ISO 8601 date-time)."
    )]
    NoSchedule,
    #[error(
        "action \"add\" takes exactly one schedule, but got {}. Keep one of every_seconds, \
         cron_expr or at.", .0.join(" and ")
    )]
    SeveralSchedules(Vec<&'static str>),
    #[error("tz applies only to cron_expr. Remove tz, or schedule with cron_expr.")]
    StrayTz,
    #[error("action \"{0}\" needs \"id\"; action \"list\" shows the job ids.")]
    NoId(&'static str),
}

/// One checked `cron` call.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Add {
        name: Option<String>,
        message: String,
        schedule: CronSchedule,
    },
    List,
    Remove(String),
    Pause(String),
    Resume(String),
}

/// Checks arguments and forwards them to a [`CronBackend`].
pub struct CronTool<B> {
    backend: Arc<B>,
}

impl<B: CronBackend> CronTool<B> {
    /// The tool over `backend`.
    pub fn new(backend: Arc<B>) -> Self {
        Self { backend }
    }
}

#[async_trait]
impl<B: CronBackend + 'static> TypedTool for CronTool<B> {
    type Args = CronArgs;

    fn spec(&self) -> &ToolSpec {
        static SPEC: LazyLock<ToolSpec> = LazyLock::new(|| {
            ToolSpec::new(
                "cron",
                "Schedule",
                "Schedule messages to yourself. action=add needs message and exactly one schedule: \
         every_seconds (repeat), cron_expr (with optional tz, e.g. \"0 9 * * 1-5\") or at \
         (once, ISO 8601 date-time); name is optional. action=list shows jobs and their \
         ids; remove, pause and resume take id.",
                args::schema::<CronArgs>(),
            )
        });
        &SPEC
    }

    async fn run(
        &self,
        _call_id: &str,
        args: CronArgs,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> ToolResult {
        let request = match parse(args) {
            Ok(r) => r,
            Err(e) => return ToolResult::error(e.to_string()),
        };
        let backend = &self.backend;
        let call = async {
            match request {
                Request::Add {
                    name,
                    message,
                    schedule,
                } => backend.add(name, message, schedule).await,
                Request::List => backend.list().await,
                Request::Remove(id) => backend.remove(&id).await,
                Request::Pause(id) => backend.pause(&id).await,
                Request::Resume(id) => backend.resume(&id).await,
            }
        };
        tokio::select! {
            result = call => match result {
                Ok(text) => ToolResult::text(text),
                Err(e) => ToolResult::error(e.to_string()),
            },
            () = cancel.cancelled() => ToolResult::error("Cancelled: the cron action was aborted."),
        }
    }
}

fn parse(args: CronArgs) -> Result<Request, CronArgsError> {
    let id = |action: Action| {
        args::given(args.id.clone())
            .map(|id| id.trim().to_owned())
            .ok_or(CronArgsError::NoId(action.name()))
    };
    Ok(match args.action {
        Action::Add => parse_add(&args)?,
        Action::List => Request::List,
        Action::Remove => Request::Remove(id(Action::Remove)?),
        Action::Pause => Request::Pause(id(Action::Pause)?),
        Action::Resume => Request::Resume(id(Action::Resume)?),
    })
}

fn parse_add(args: &CronArgs) -> Result<Request, CronArgsError> {
    let text = |t: &Option<String>| args::given(t.clone()).map(|t| t.trim().to_owned());
    // The message is delivered as written; only blank counts as missing.
    let message = args::given(args.message.clone()).ok_or(CronArgsError::NoMessage)?;
    let (every, expr, at, tz) = (
        args.every_seconds,
        text(&args.cron_expr),
        text(&args.at),
        text(&args.tz),
    );
    let given: Vec<&'static str> = [
        every.map(|_| "every_seconds"),
        expr.as_ref().map(|_| "cron_expr"),
        at.as_ref().map(|_| "at"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.len() > 1 {
        return Err(CronArgsError::SeveralSchedules(given));
    }
    if tz.is_some() && expr.is_none() {
        return Err(CronArgsError::StrayTz);
    }
    let schedule = match (every, expr, at) {
        (Some(seconds), _, _) => CronSchedule::EverySeconds(seconds),
        (_, Some(expr), _) => CronSchedule::Expr { expr, tz },
        (_, _, Some(at)) => CronSchedule::At(at),
        (None, None, None) => return Err(CronArgsError::NoSchedule),
    };
    Ok(Request::Add {
        name: text(&args.name),
        message,
        schedule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use claw_agent::{CheckedArgs, Tool};
    use serde_json::json;

    #[tokio::test]
    async fn without_a_store_every_call_says_why() {
        let tool = CronTool::new(Arc::new(UnavailableCron::new(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "Cannot create the directory /data/cron: permission denied",
        ))));
        for args in [
            json!({"action": "list"}),
            json!({"action": "add", "message": "m", "every_seconds": 5}),
            json!({"action": "remove", "id": "cron-1"}),
        ] {
            let args = CheckedArgs::for_tool(&tool, args).unwrap();
            let result = tool
                .execute("c1", args, CancellationToken::new(), ToolUpdates::discard())
                .await;
            assert!(result.is_error);
            assert_eq!(
                result.content,
                "Cron jobs are unavailable: Cannot create the directory /data/cron: \
                 permission denied"
            );
        }
    }

    #[tokio::test]
    async fn an_unavailable_store_keeps_its_reason_as_the_source() {
        use std::error::Error as _;
        let backend =
            UnavailableCron::new(std::io::Error::from(std::io::ErrorKind::ReadOnlyFilesystem));
        let e = backend.pause("cron-1").await.unwrap_err();
        let reason = e.source().map(ToString::to_string);
        assert_eq!(reason, Some(e.reason.to_string()));
        assert_eq!(
            e.to_string(),
            format!("Cron jobs are unavailable: {}", e.reason)
        );
    }

    #[test]
    fn schedules_are_typed() {
        let read = |v| args::read::<CronArgs>(v).unwrap();
        let r = parse(read(
            json!({"action": "add", "message": "m", "cron_expr": " 0 9 * * * ", "tz": "UTC"}),
        ));
        assert_eq!(
            r,
            Ok(Request::Add {
                name: None,
                message: "m".into(),
                schedule: CronSchedule::Expr {
                    expr: "0 9 * * *".into(),
                    tz: Some("UTC".into())
                }
            })
        );
        let r = parse(read(json!({"action": "pause", "id": "j1"})));
        assert_eq!(r, Ok(Request::Pause("j1".into())));
    }
}
