//! Drives a [`Scheduler`] in real time: one OS thread per simulated model sleeps through each
//! step (to an absolute deadline, so steps do not drift; the last 300 µs are spun, because
//! tokio's timer has 1 ms granularity and a busy runtime delays wake-ups) and hands tokens to the
//! request streams over channels.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use std::sync::Condvar;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::scheduler::{LatencyModel, QueueFull, SchedEvent, Scheduler};

/// What a request stream is told.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    /// Token `index` is ready; `scheduled` is the step's deadline.
    Token {
        /// Token index.
        index: u32,
        /// When the step that produced it was due to end.
        scheduled: Instant,
        /// Duration of the step when it was a prefill step (ms).
        prefill_ms: Option<f64>,
        /// Batch size of the step.
        batch: usize,
    },
    /// The sequence was preempted and will re-prefill.
    Preempted,
    /// All planned tokens were produced.
    Finished,
}

struct Shared {
    sched: Mutex<Scheduler>,
    senders: Mutex<HashMap<u64, mpsc::UnboundedSender<EngineEvent>>>,
    /// Set when work arrives; the engine thread waits on it when idle.
    wake: Mutex<bool>,
    woken: Condvar,
}

/// Handle to one simulated model's engine.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
}

impl Engine {
    /// Starts the engine thread.
    pub fn spawn(model: LatencyModel) -> Self {
        let shared = Arc::new(Shared {
            sched: Mutex::new(Scheduler::new(model)),
            senders: Mutex::new(HashMap::new()),
            wake: Mutex::new(false),
            woken: Condvar::new(),
        });
        let engine = shared.clone();
        std::thread::Builder::new()
            .name("sim-engine".into())
            .spawn(move || run(&engine))
            .expect("engine thread");
        Self { shared }
    }

    /// Queues a request; its events arrive on the returned receiver.
    pub fn submit(
        &self,
        id: u64,
        prompt_tokens: u32,
        planned: u32,
    ) -> Result<mpsc::UnboundedReceiver<EngineEvent>, QueueFull> {
        self.submit_cached(id, prompt_tokens, 0, planned)
    }

    /// Queues a request whose first `cached` prompt tokens a prefix cache holds
    /// ([`Scheduler::submit_cached`]).
    pub fn submit_cached(
        &self,
        id: u64,
        prompt_tokens: u32,
        cached: u32,
        planned: u32,
    ) -> Result<mpsc::UnboundedReceiver<EngineEvent>, QueueFull> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.shared
            .sched
            .lock()
            .expect("scheduler lock")
            .submit_cached(id, prompt_tokens, cached, planned)?;
        self.shared
            .senders
            .lock()
            .expect("senders lock")
            .insert(id, tx);
        *self.shared.wake.lock().expect("wake lock") = true;
        self.shared.woken.notify_one();
        Ok(rx)
    }

    /// `(running, waiting, kv tokens used)`.
    pub fn load(&self) -> (usize, usize, u32) {
        let s = self.shared.sched.lock().expect("scheduler lock");
        (s.running(), s.waiting(), s.kv_used())
    }
}

fn run(shared: &Shared) {
    let mut deadline = Instant::now();
    loop {
        let step = shared.sched.lock().expect("scheduler lock").plan();
        let Some(step) = step else {
            let mut woke = shared.wake.lock().expect("wake lock");
            while !*woke {
                woke = shared.woken.wait(woke).expect("wake lock");
            }
            *woke = false;
            drop(woke);
            deadline = Instant::now();
            continue;
        };
        let start = deadline.max(Instant::now());
        deadline = start + std::time::Duration::from_secs_f64(step.duration_ms / 1e3);
        sleep_precisely(deadline);
        let events = shared.sched.lock().expect("scheduler lock").complete(&step);
        let mut gone = Vec::new();
        {
            let mut senders = shared.senders.lock().expect("senders lock");
            for ev in events {
                let (id, msg, last) = match ev {
                    SchedEvent::Token { id, index } => (
                        id,
                        EngineEvent::Token {
                            index,
                            scheduled: deadline,
                            prefill_ms: step.prefill.then_some(step.duration_ms),
                            batch: step.batch,
                        },
                        false,
                    ),
                    SchedEvent::Preempted { id } => (id, EngineEvent::Preempted, false),
                    SchedEvent::Finished { id } => (id, EngineEvent::Finished, true),
                };
                let delivered = senders.get(&id).is_some_and(|tx| tx.send(msg).is_ok());
                if last || !delivered {
                    senders.remove(&id);
                }
                if !delivered {
                    gone.push(id);
                }
            }
        }
        if !gone.is_empty() {
            let mut s = shared.sched.lock().expect("scheduler lock");
            for id in gone {
                s.cancel(id);
            }
        }
    }
}

/// Sleeps until `deadline` with sub-millisecond precision: the thread sleeps to 300 µs before
/// (Linux wakes a sleeping thread within ~50–100 µs) and spins for the rest.
fn sleep_precisely(deadline: Instant) {
    let coarse = deadline
        .checked_sub(std::time::Duration::from_micros(300))
        .unwrap_or(deadline);
    let now = Instant::now();
    if coarse > now {
        std::thread::sleep(coarse - now);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

/// One engine per simulated model, started on first use.
#[derive(Clone, Default)]
pub struct Engines {
    map: Arc<Mutex<HashMap<&'static str, Engine>>>,
}

impl Engines {
    /// The engine of `name`, started with `model` if new.
    pub fn get(&self, name: &'static str, model: &LatencyModel) -> Engine {
        self.map
            .lock()
            .expect("engines lock")
            .entry(name)
            .or_insert_with(|| Engine::spawn(model.clone()))
            .clone()
    }

    /// `(model, running, waiting, kv)` for every started engine.
    pub fn loads(&self) -> Vec<(&'static str, usize, usize, u32)> {
        let mut v: Vec<_> = self
            .map
            .lock()
            .expect("engines lock")
            .iter()
            .map(|(n, e)| {
                let (r, w, kv) = e.load();
                (*n, r, w, kv)
            })
            .collect();
        v.sort();
        v
    }
}
