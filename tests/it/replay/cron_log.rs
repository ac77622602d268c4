//! The cron jobs in the event log: the list as it is when recording starts, then only
//! what changed (a job fired, was paused, added or removed), so a workspace with many
//! jobs does not write them all at each fire; the replay rebuilds the list from them.

use crate::support::cron::{Env, t0};
use crate::support::scripted::ScriptedProvider;
use claw_tui::agent::{Agent, Message};
use claw_tui::replay::log::{LogLine, LogText, Source};
use claw_tui::replay::{Step, Timeline};
use claw_tui::session::{self, Entry, EventRecording, SessionWriter, events_path};
use claw_tui::tools::cron::CronSchedule;
use std::time::Duration;

// Paused time: each sleep below lets the recorder take the change before the next one
// (a watch channel keeps only the newest value), on a loaded machine as on an idle one.
#[tokio::test(start_paused = true)]
async fn a_change_to_one_job_logs_that_job_not_the_whole_list() {
    let env = Env::new();
    let (service, _clock) = env.open_at(t0());
    for i in 0..100 {
        let message = format!("check the build and report anything new ({i})");
        service
            .add(
                Some(format!("job {i}")),
                message,
                CronSchedule::EverySeconds(3600),
            )
            .unwrap();
    }
    let data = tempfile::tempdir().unwrap();
    let agent = Agent::new(ScriptedProvider::new(vec![]), "scripted");
    let writer = SessionWriter::create(data.path(), &env.workspace, "scripted", "m").unwrap();
    let path = writer.path().to_path_buf();
    // A session with nothing in it is not kept.
    writer.append(&Entry::Message {
        timestamp: 1,
        message: Message::user("keep an eye on the jobs"),
    });
    let recording = EventRecording {
        enabled: true,
        runtime: None,
        cron_jobs: Some(service.subscribe()),
    };
    let (finish, task) = session::record_events_with(&agent, writer, &recording);
    let changes = 10;
    for _ in 0..changes {
        service.pause("cron-7").unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        service.resume("cron-7").unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    service.remove("cron-3").unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    finish.send(()).unwrap();
    task.await.unwrap();

    let log = LogText::read(&events_path(&path)).unwrap().unwrap();
    let cron_lines: Vec<&String> = log.lines.iter().filter(|l| l.contains("\"cron_")).collect();
    assert!(cron_lines.len() > 2, "{cron_lines:?}");
    let whole = cron_lines[0].len();
    let later: usize = cron_lines[1..].iter().map(|l| l.len()).sum();
    let one_job = whole / 100;
    assert!(
        later <= (2 * changes + 1) * (one_job + 200),
        "{later} bytes for {} changes of one job ({one_job} bytes each); the whole list is \
         {whole}",
        2 * changes + 1
    );
    let sources: Vec<Source> = log
        .parsed()
        .filter_map(|line| match line {
            LogLine::Event { source, .. } => Some(source),
            LogLine::Start(_) => None,
        })
        .filter(|source| *source != Source::Agent)
        .collect();
    assert_eq!(sources[0], Source::CronJobs, "the whole list first");
    assert!(
        sources[1..].iter().all(|s| *s == Source::CronChanges),
        "{sources:?}"
    );

    // The replay rebuilds the list as it ended from the first list and the changes.
    let timeline = Timeline::load(&path).unwrap();
    let mut jobs = Vec::new();
    for step in &timeline.steps {
        match step {
            Step::CronJobs(list) => jobs = list.clone(),
            Step::CronChanges(changes) => changes.apply(&mut jobs),
            _ => {}
        }
    }
    assert_eq!(jobs, service.list().unwrap());
    assert_eq!(jobs.len(), 99);
}
