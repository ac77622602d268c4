//! The `cron` tool's backend: [`CronService`] behind [`CronBackend`], with the texts the
//! model reads.

use super::schedule::local_text;
use super::{CronError, CronJobInfo, CronService};
use crate::tools::cron::{CronBackend, CronSchedule};
use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// A duration in at most two units, e.g. `45s`, `3m 20s`, `2h 5m`, `3d 4h`.
pub fn relative_text(d: chrono::Duration) -> String {
    let total = d.num_seconds().unsigned_abs();
    let (days, hours, minutes, seconds) = (
        total / 86_400,
        total % 86_400 / 3600,
        total % 3600 / 60,
        total % 60,
    );
    let parts = [(days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s")];
    let Some(first) = parts.iter().position(|(n, _)| *n > 0) else {
        return "0s".to_owned();
    };
    parts[first..]
        .iter()
        .take(2)
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn next_text(job: &CronJobInfo, now: DateTime<Utc>) -> String {
    match job.next_fire {
        _ if job.done => "none (one-time job, already handled)".to_owned(),
        _ if job.paused => "none while paused".to_owned(),
        None => "none".to_owned(),
        Some(t) if t <= now => format!(
            "due now ({} ago, at {})",
            relative_text(now - t),
            local_text(t)
        ),
        Some(t) => format!("in {} ({})", relative_text(t - now), local_text(t)),
    }
}

/// The job list as the model reads it: id, name, schedule, next fire (relative and
/// local time), paused, and the last run.
pub fn list_text(jobs: &[CronJobInfo], now: DateTime<Utc>) -> String {
    if jobs.is_empty() {
        return "No cron jobs in this workspace. Add one with action=add.".to_owned();
    }
    let mut out = format!(
        "{} cron job{} in this workspace:",
        jobs.len(),
        if jobs.len() == 1 { "" } else { "s" }
    );
    for job in jobs {
        let state = if job.done {
            "done"
        } else if job.paused {
            "paused"
        } else {
            "active"
        };
        let last = match (job.last_status, job.last_run_at) {
            (Some(status), Some(at)) => format!("{} at {}", status.as_str(), local_text(at)),
            _ => "never run".to_owned(),
        };
        out.push_str(&format!(
            "\n- {} \"{}\" ({state}): {}\n  next: {}; last run: {last}\n  message: {}",
            job.id,
            job.name,
            job.schedule,
            next_text(job, now),
            one_line(&job.message, 120)
        ));
        if let Some(problem) = &job.problem {
            out.push_str(&format!(
                "\n  problem: {problem}; it will not fire. Remove it and add it again."
            ));
        }
    }
    out
}

fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max).collect();
    cut.push('…');
    cut
}

fn label(job: &CronJobInfo) -> String {
    format!("cron job \"{}\" ({})", job.name, job.id)
}

impl CronService {
    /// Runs blocking file work off the async threads.
    async fn blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&CronService) -> Result<R, CronError> + Send + 'static,
    ) -> Result<R, CronError> {
        let service = self.clone();
        tokio::task::spawn_blocking(move || f(&service)).await?
    }
}

#[async_trait]
impl CronBackend for CronService {
    type Error = CronError;

    async fn add(
        &self,
        name: Option<String>,
        message: String,
        schedule: CronSchedule,
    ) -> Result<String, CronError> {
        let job = self
            .blocking(move |s| s.add(name, message, schedule))
            .await?;
        let now = self.now();
        Ok(format!(
            "Added {}: {}. Next fire: {}.",
            label(&job),
            job.schedule,
            next_text(&job, now)
        ))
    }

    async fn list(&self) -> Result<String, CronError> {
        let jobs = self.blocking(CronService::list).await?;
        Ok(list_text(&jobs, self.now()))
    }

    async fn remove(&self, id: &str) -> Result<String, CronError> {
        let id = id.to_owned();
        let job = self.blocking(move |s| s.remove(&id)).await?;
        Ok(format!("Removed {}.", label(&job)))
    }

    async fn pause(&self, id: &str) -> Result<String, CronError> {
        let id = id.to_owned();
        let change = self.blocking(move |s| s.pause(&id)).await?;
        Ok(if change.changed {
            format!(
                "Paused {}; it will not fire until resumed.",
                label(&change.job)
            )
        } else {
            format!("{} is already paused.", capitalized(&label(&change.job)))
        })
    }

    async fn resume(&self, id: &str) -> Result<String, CronError> {
        let id = id.to_owned();
        let change = self.blocking(move |s| s.resume(&id)).await?;
        let next = next_text(&change.job, self.now());
        Ok(if change.changed {
            format!("Resumed {}. Next fire: {next}.", label(&change.job))
        } else {
            format!(
                "{} is not paused. Next fire: {next}.",
                capitalized(&label(&change.job))
            )
        })
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
