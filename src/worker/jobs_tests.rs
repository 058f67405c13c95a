//! A job's schedule, backoff and status: [`JobBoard::settle`] as plain arithmetic, and [`drive`]
//! on paused tokio time with a scripted pass.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use super::*;

const EVERY: Duration = Duration::from_secs(60);
const BACKOFF: Backoff = Backoff::doubling(Duration::from_secs(1), Duration::from_secs(8));

#[test]
fn a_pass_that_works_waits_its_period_and_one_that_fails_waits_the_backoff() {
    let board = JobBoard::default();
    let fail = || Err(JobError("locked".into()));
    assert_eq!(board.settle("j", &fail(), &BACKOFF, EVERY, 1), Duration::from_secs(1));
    assert_eq!(board.settle("j", &fail(), &BACKOFF, EVERY, 2), Duration::from_secs(2));
    assert_eq!(board.settle("j", &fail(), &BACKOFF, EVERY, 3), Duration::from_secs(4));
    let s = &board.snapshot()["j"];
    assert_eq!((s.failing, s.passes), (3, 0));
    assert_eq!((s.last_error.as_deref(), s.last_error_at), (Some("locked"), Some(3)));
    assert_eq!(board.settle("j", &Ok(Done::Busy), &BACKOFF, EVERY, 4), Duration::from_secs(1));
    assert_eq!(board.snapshot()["j"].failing, 3, "standing aside is neither a pass nor a failure");
    assert_eq!(board.settle("j", &Ok(Done::Did("2 rows".into())), &BACKOFF, EVERY, 5), EVERY);
    let s = &board.snapshot()["j"];
    assert_eq!((s.failing, s.passes, s.last_ok_at), (0, 1, Some(5)));
    assert_eq!(s.last_did.as_deref(), Some("2 rows"));
    assert_eq!(s.last_error.as_deref(), Some("locked"), "the last failure stays visible");
}

#[test]
fn the_schedule_shows_whether_a_job_is_on() {
    let board = JobBoard::default();
    board.schedule("j", Some(EVERY));
    assert_eq!((board.snapshot()["j"].on, board.snapshot()["j"].every_ms), (true, 60_000));
    board.schedule("j", None);
    assert_eq!((board.snapshot()["j"].on, board.snapshot()["j"].every_ms), (false, 0));
}

/// The scripted context: passes so far, the first `fail` of them fail; `on` is the setting.
#[derive(Default)]
struct Script {
    passes: AtomicU32,
    fail: AtomicU32,
    on: AtomicBool,
}

type Ctx = Arc<Script>;

static SCRIPTED: Job<Ctx> = Job {
    name: "scripted",
    first: Some(Duration::from_secs(5)),
    every: |c| c.on.load(Ordering::SeqCst).then_some(EVERY),
    backoff: BACKOFF,
    pass: |c| {
        Box::pin(async move {
            let n = c.passes.fetch_add(1, Ordering::SeqCst);
            match n < c.fail.load(Ordering::SeqCst) {
                true => Err(JobError(format!("pass {n} failed"))),
                false => Ok(Done::Did(format!("pass {n}"))),
            }
        })
    },
};

async fn at(t: u64) {
    tokio::time::sleep(Duration::from_millis(t)).await;
}

#[tokio::test(start_paused = true)]
async fn a_job_runs_after_its_first_wait_backs_off_on_failure_and_stops_when_told() {
    let ctx = Arc::new(Script::default());
    ctx.fail.store(2, Ordering::SeqCst);
    ctx.on.store(true, Ordering::SeqCst);
    let (board, stop) = (Arc::new(JobBoard::default()), CancellationToken::new());
    let task = tokio::spawn(drive(&SCRIPTED, ctx.clone(), board.clone(), stop.clone()));
    at(4_900).await;
    assert_eq!(ctx.passes.load(Ordering::SeqCst), 0, "nothing before the first wait");
    // 5 s: fails; 6 s: fails; 8 s: works; then every 60 s.
    at(3_200).await;
    assert_eq!(ctx.passes.load(Ordering::SeqCst), 3);
    let s = board.snapshot()["scripted"].clone();
    assert_eq!((s.on, s.passes, s.failing), (true, 1, 0));
    assert_eq!(s.last_error.as_deref(), Some("pass 1 failed"));
    at(60_000).await;
    assert_eq!(ctx.passes.load(Ordering::SeqCst), 4);
    stop.cancel();
    task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_job_that_is_off_runs_no_pass_and_starts_when_turned_on() {
    let ctx = Arc::new(Script::default());
    let (board, stop) = (Arc::new(JobBoard::default()), CancellationToken::new());
    let task = tokio::spawn(drive(&SCRIPTED, ctx.clone(), board.clone(), stop.clone()));
    at(10 * 60_000).await;
    assert_eq!(ctx.passes.load(Ordering::SeqCst), 0);
    assert!(!board.snapshot()["scripted"].on);
    ctx.on.store(true, Ordering::SeqCst);
    at(OFF_RECHECK.as_millis() as u64 + 1).await;
    assert_eq!(ctx.passes.load(Ordering::SeqCst), 1, "on at the next look");
    assert!(board.snapshot()["scripted"].on);
    stop.cancel();
    task.await.unwrap();
}
