//! The worker pool of a run: phases in order (warm-ups apart and over before the first
//! measured request, a hook awaited in between), `concurrency` lanes per phase pulling jobs
//! from a queue, each job sent at its planned time when it has one (the core's load shapes),
//! else Poisson arrivals when a rate is set. With stamping workers the phase's queue
//! runs inside them ([`StampWorkers::run_queue`]: the next request starts the moment the
//! previous one ends, without a round trip through the page); multi-turn phases and the page's
//! own stamping pull from the page. The multi-turn conversation is carried from
//! one round to the next ([`Conversation`], in the core; one per arm of an A/B run), finished
//! records handed on with their arm in batches at most four times a second so the page never
//! renders between a read and its stamp.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use ttft_core::dialect::Dialect;
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::RequestRecord;
use ttft_core::request::HttpRequestSpec;
use ttft_core::scenario::{Conversation, Job, Phase, poisson_gap_ms, total_jobs, warmups_first};
use ttft_core::timeline_file::RawCapture;

use super::cancel::RunHandle;
use super::clock::now_ms as now;
use super::fetch::{Exchange, reset_resource_timing, send, sleep_ms};
use super::stamper::{Queued, StampWorkers, Stamping};

/// Progress of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Requests finished.
    pub done: usize,
    /// Requests planned.
    pub total: usize,
    /// Label of the phase running.
    pub phase: String,
}

/// Everything a run needs besides its cancel handle and its sink.
pub struct RunPlan {
    /// Phases of jobs.
    pub phases: Vec<Phase>,
    /// Builds the HTTP request of a job.
    pub build: Rc<dyn Fn(&Job) -> HttpRequestSpec>,
    /// API key and extra headers: sent, never stored.
    pub secret_headers: Vec<(String, String)>,
    /// Chosen dialect (`None` = detect).
    pub dialect: Option<Dialect>,
    /// Metric settings.
    pub metrics: MetricsConfig,
    /// Per-request timeout (ms).
    pub timeout_ms: f64,
    /// Where reads are stamped.
    pub stamping: Stamping,
    /// Awaited once, when the warm-ups are over and before the first measured request (the
    /// server's baseline scrape); never called in a run without warm-ups.
    pub after_warmups: Option<AfterWarmups>,
}

/// What a run does between its warm-ups and its measured requests.
pub type AfterWarmups = Box<dyn FnOnce() -> futures_util::future::LocalBoxFuture<'static, ()>>;

/// A finished request and the arm of the A/B run it belongs to (0 in an ordinary run).
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The job's arm ([`Job::arm`]).
    pub arm: usize,
    /// What it measured.
    pub record: RequestRecord,
}

/// What receives the finished requests, in batches, with the progress so far.
pub type OnBatch = Rc<dyn Fn(Vec<Finished>, Progress)>;

/// What the workers of a run share.
struct Shared {
    plan: RunPlan,
    handle: RunHandle,
    on_batch: OnBatch,
    total: usize,
    run_start: f64,
    /// When the phase running started (the clock of `now`): its jobs' planned sends count
    /// from it.
    phase_start: Cell<f64>,
    pending: RefCell<Vec<Finished>>,
    last_flush: Cell<f64>,
    done: Cell<usize>,
    next_index: Cell<u32>,
    /// Multi-turn runs only, one conversation per arm: other runs never read them, so they do
    /// not copy every prompt into them.
    conversation: Option<RefCell<Vec<Conversation>>>,
}

impl Shared {
    /// Hands the finished records on with the progress so far.
    fn flush(&self, phase: String) {
        let batch = std::mem::take(&mut *self.pending.borrow_mut());
        (self.on_batch)(
            batch,
            Progress {
                done: self.done.get(),
                total: self.total,
                phase,
            },
        );
    }

    /// The job as it is sent (a multi-turn job carries the conversation so far) and its request.
    fn prepare(&self, mut job: Job) -> (Job, HttpRequestSpec) {
        if let Some(c) = &self.conversation {
            let mut arms = c.borrow_mut();
            if arms.len() <= job.arm {
                arms.resize_with(job.arm + 1, Conversation::default);
            }
            arms[job.arm].prepare(&mut job);
        }
        let spec = (self.plan.build)(&job);
        (job, spec)
    }

    /// Sends one job from the page's side and records it.
    async fn run_job(&self, job: Job, label: &str) {
        let (job, spec) = self.prepare(job);
        let p = &self.plan;
        let exchange = match &p.stamping {
            Stamping::Workers(w) => {
                w.send(&spec, &p.secret_headers, p.timeout_ms, &self.handle)
                    .await
            }
            Stamping::Page(_) => send(&spec, &p.secret_headers, p.timeout_ms, &self.handle).await,
        };
        self.finish(&job, &spec, exchange, label);
    }

    /// Records a job that is over and hands finished records on, at most every 250 ms.
    fn finish(&self, job: &Job, spec: &HttpRequestSpec, exchange: Exchange, label: &str) {
        let index = self.next_index.get();
        self.next_index.set(index + 1);
        let p = &self.plan;
        // Parsed here, once the request is over: never between two reads' stamps.
        // One answer unless the body asked for several: a server that numbers a single
        // answer's `choices[].index` wrongly does not split it.
        let timeline = exchange.timeline(p.dialect, ttft_core::request::choices_asked(&spec.body));
        // The raw bytes and times stay with the record, so the run can be exported as a
        // timeline (ttft-timeline/1); t0 on the wall clock from the page's origin when the
        // exchange did not say.
        let sent_wall_ms = exchange.sent_epoch_ms.unwrap_or_else(|| {
            web_sys::window()
                .and_then(|w| w.performance())
                .map_or(0.0, |perf| perf.time_origin())
                + exchange.capture.sent_at
        });
        let record = RequestRecord {
            warmup: job.warmup,
            start_ms: timeline.sent_at - self.run_start,
            browser_queue_ms: exchange.browser_queue_ms,
            server_request_id: exchange.server_request_id,
            sent_epoch_ms: exchange.sent_epoch_ms,
            protocol: exchange.protocol,
            raw: Some(RawCapture::new(exchange.capture, sent_wall_ms)),
            pair: job.pair,
            planned_ms: job
                .planned_ms
                .map(|p| self.phase_start.get() - self.run_start + p),
            ..RequestRecord::from_timeline(
                index,
                job.group.clone(),
                job.level,
                &timeline,
                &p.metrics,
            )
        };
        if let Some(c) = &self.conversation {
            c.borrow_mut()[job.arm].record(job, &record.metrics);
        }
        self.pending.borrow_mut().push(Finished {
            arm: job.arm,
            record,
        });
        self.done.set(self.done.get() + 1);
        let t = now();
        if t - self.last_flush.get() > 250.0 || self.done.get() == self.total {
            self.last_flush.set(t);
            self.flush(label.to_owned());
        }
    }

    /// Runs a phase as a closed loop inside the stamping workers: every request built ahead
    /// (each with its planned send, from the phase's start: the core's plan, else Poisson
    /// arrivals at the phase's rate), each lane starting its next request the moment its
    /// previous one ends and not before the request's planned time. Not for multi-turn
    /// phases, whose next request needs the previous answer.
    async fn run_in_workers(&self, workers: &StampWorkers, phase: Phase, label: &str) {
        let mut at = 0.0;
        let (jobs, queued): (Vec<Job>, Vec<Queued>) = phase
            .jobs
            .into_iter()
            .map(|job| {
                let (mut job, spec) = self.prepare(job);
                let at_ms = job.planned_ms.or_else(|| {
                    (phase.rate_per_s > 0.0).then(|| {
                        at += poisson_gap_ms(phase.rate_per_s, js_sys::Math::random());
                        at
                    })
                });
                // A Poisson arrival is a plan too: recorded, for the schedule lag and the
                // planned-vs-achieved rate.
                job.planned_ms = at_ms;
                (job, Queued { spec, at_ms })
            })
            .unzip();
        let p = &self.plan;
        // The queue's start: `run_queue` takes its own the moment it is called.
        self.phase_start.set(now());
        workers
            .run_queue(
                &queued,
                phase.concurrency as usize,
                &p.secret_headers,
                p.timeout_ms,
                &self.handle,
                &|k, exchange| self.finish(&jobs[k], &queued[k].spec, exchange, label),
            )
            .await;
    }
}

/// Runs the phases; `on_batch` receives finished records with their arms (at most every
/// 250 ms) and progress.
pub async fn run_phases(mut plan: RunPlan, handle: RunHandle, on_batch: OnBatch) {
    let phases = warmups_first(std::mem::take(&mut plan.phases));
    let mut after_warmups = plan.after_warmups.take();
    let mut warmed_up = false;
    reset_resource_timing();
    if let Stamping::Workers(w) = &plan.stamping {
        w.reset();
        let w = w.clone();
        handle.on_cancel(move || w.abort_all());
    }
    let shared = Rc::new(Shared {
        total: total_jobs(&phases),
        plan,
        handle,
        on_batch,
        run_start: now(),
        phase_start: Cell::new(0.0),
        pending: RefCell::default(),
        last_flush: Cell::new(0.0),
        done: Cell::new(0),
        next_index: Cell::new(0),
        conversation: phases
            .iter()
            .any(|p| p.jobs.iter().any(|j| j.chained))
            .then(RefCell::default),
    });
    for phase in phases {
        if shared.handle.is_cancelled() {
            break;
        }
        let warmups = phase.jobs.iter().all(|j| j.warmup);
        if !warmups
            && warmed_up
            && let Some(hook) = after_warmups.take()
        {
            hook().await;
        }
        warmed_up |= warmups;
        let label = phase
            .jobs
            .first()
            .map(|j| j.group.clone())
            .unwrap_or_default();
        if let Stamping::Workers(w) = &shared.plan.stamping
            && !phase.jobs.iter().any(|j| j.chained)
        {
            shared.run_in_workers(w, phase, &label).await;
            continue;
        }
        let queue: Rc<RefCell<VecDeque<Job>>> = Rc::new(RefCell::new(phase.jobs.into()));
        let phase_start = now();
        shared.phase_start.set(phase_start);
        let next_arrival = Rc::new(Cell::new(0.0f64));
        let rate = phase.rate_per_s;
        let workers = (0..phase.concurrency.max(1)).map(|_| {
            let (shared, queue, next_arrival, label) = (
                shared.clone(),
                queue.clone(),
                next_arrival.clone(),
                label.clone(),
            );
            async move {
                while !shared.handle.is_cancelled() {
                    let Some(mut job) = queue.borrow_mut().pop_front() else {
                        break;
                    };
                    // The core's planned send, else Poisson arrivals at the phase's rate
                    // (exponential gaps), scheduled from the phase start.
                    let planned = job.planned_ms.or_else(|| {
                        (rate > 0.0).then(|| {
                            let at =
                                next_arrival.get() + poisson_gap_ms(rate, js_sys::Math::random());
                            next_arrival.set(at);
                            at
                        })
                    });
                    job.planned_ms = planned;
                    if let Some(at) = planned {
                        let wait = phase_start + at - now();
                        if wait > 0.0 {
                            sleep_ms(wait).await;
                        }
                    }
                    shared.run_job(job, &label).await;
                }
            }
        });
        futures_util::future::join_all(workers).await;
    }
    shared.flush(String::new());
}
