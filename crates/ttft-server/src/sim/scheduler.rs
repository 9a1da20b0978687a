//! A pure continuous-batching scheduler (no clock, no I/O), driven step by step.
//!
//! Each step either *prefills* the sequences admitted since the last step (compute-bound: its
//! time grows with the prompt tokens processed) or *decodes* one token for every running
//! sequence (bandwidth-bound: its time grows with the batch size and the total KV length).
//! Prefill steps take priority, so arrivals stall the running streams, as on servers without
//! chunked prefill. When the KV cache would overflow, the most recently admitted sequence is
//! preempted: its cache is dropped and it re-prefills (prompt + tokens so far) later. A
//! sequence submitted with prompt tokens a prefix cache holds ([`Scheduler::submit_cached`])
//! is charged only for the rest in its first prefill.
//!
//! A model with `jitter` varies its decode steps as real servers do, deterministically: each
//! request draws a lognormal speed multiplier from the model's seed and its id, and each decode
//! step a lognormal noise factor from the seed, the id of the batch's first sequence and its
//! token position ([`LatencyModel::jitter`]). The step's duration is what the engine sleeps, so
//! the ground truth stays exact.

use std::collections::VecDeque;

use serde::Serialize;

/// Latency and capacity parameters of one simulated model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyModel {
    /// Fixed cost of a prefill step (ms).
    pub prefill_base_ms: f64,
    /// Prefill cost per token processed (ms).
    pub prefill_ms_per_token: f64,
    /// Fixed cost of a decode step (ms): weights read once per step.
    pub decode_base_ms: f64,
    /// Decode cost per sequence in the batch (ms).
    pub decode_ms_per_seq: f64,
    /// Decode cost per 1,000 tokens of KV cache across the batch (ms).
    pub decode_ms_per_kv_ktok: f64,
    /// Most sequences decoded together.
    pub max_batch: usize,
    /// KV-cache capacity in tokens.
    pub kv_capacity: u32,
    /// Most requests waiting before new ones get 429.
    pub max_waiting: usize,
    /// Decode noise, as a coefficient of variation (0 = none, deterministic steps): a decode
    /// step lasts its modelled time × the mean speed multiplier of the batch's sequences (one
    /// lognormal draw per request, mean 1, this CV) × a per-step lognormal factor (mean 1,
    /// this CV). Prefill steps are not varied.
    pub jitter: f64,
    /// Seed of the noise: the same seed, request ids and arrivals give the same steps.
    pub seed: u64,
}

/// SplitMix64's finaliser: spreads a key over 64 bits, so nearby ids seed unrelated draws.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A lognormal factor of mean 1 and coefficient of variation `cv`, drawn from `key` alone
/// (Box–Muller on two uniform draws); exactly 1 when `cv` is 0.
pub fn lognormal_factor(cv: f64, key: u64) -> f64 {
    if cv <= 0.0 {
        return 1.0;
    }
    let mut rng = fastrand::Rng::with_seed(mix(key));
    let (u1, u2) = (1.0 - rng.f64(), rng.f64());
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    let sigma2 = cv.mul_add(cv, 1.0).ln();
    (sigma2.sqrt() * z - sigma2 / 2.0).exp()
}

impl LatencyModel {
    /// Request `id`'s decode speed multiplier (1 without jitter).
    pub fn request_speed(&self, id: u64) -> f64 {
        lognormal_factor(self.jitter, self.seed ^ mix(id))
    }

    /// The noise factor of the decode step that produces token `position` of request `id` when
    /// it leads the batch (1 without jitter).
    pub fn step_noise(&self, id: u64, position: u32) -> f64 {
        lognormal_factor(
            self.jitter,
            mix(self.seed ^ 0x5EED_57E9_0000_0029) ^ mix(id).rotate_left(17) ^ u64::from(position),
        )
    }
}

/// One sequence's scheduling state.
#[derive(Debug, Clone, PartialEq)]
pub struct Seq {
    /// Request id.
    pub id: u64,
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Tokens to generate.
    pub planned: u32,
    /// Tokens generated so far.
    pub generated: u32,
    /// Whether its KV must be (re)built before decoding.
    pub needs_prefill: bool,
    /// Times it was preempted.
    pub preemptions: u32,
    /// Prompt tokens a prefix cache holds: its first prefill computes only the rest (a
    /// preemption drops them with the rest of its KV).
    pub cached: u32,
    /// Its decode speed multiplier ([`LatencyModel::request_speed`]).
    pub speed: f64,
}

impl Seq {
    fn kv(&self) -> u32 {
        self.prompt_tokens + self.generated
    }
}

/// What one step will do.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Its duration (ms).
    pub duration_ms: f64,
    /// `true` for a prefill step.
    pub prefill: bool,
    /// Sequences that advance.
    pub ids: Vec<u64>,
    /// Sequences in the batch.
    pub batch: usize,
}

/// What happened at the end of a step.
#[derive(Debug, Clone, PartialEq)]
pub enum SchedEvent {
    /// Sequence `id` produced output token number `index` (0-based).
    Token {
        /// Request.
        id: u64,
        /// Token index.
        index: u32,
    },
    /// Sequence `id` lost its KV cache and will re-prefill.
    Preempted {
        /// Request.
        id: u64,
    },
    /// Sequence `id` is complete.
    Finished {
        /// Request.
        id: u64,
    },
}

/// The queue was full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the server queue is full")]
pub struct QueueFull;

/// The scheduler.
#[derive(Debug, Clone)]
pub struct Scheduler {
    model: LatencyModel,
    waiting: VecDeque<Seq>,
    running: Vec<Seq>,
}

impl Scheduler {
    /// An idle scheduler.
    pub fn new(model: LatencyModel) -> Self {
        Self {
            model,
            waiting: VecDeque::new(),
            running: Vec::new(),
        }
    }

    /// Its model.
    pub fn model(&self) -> &LatencyModel {
        &self.model
    }

    /// Requests waiting.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Requests running.
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// KV tokens in use.
    pub fn kv_used(&self) -> u32 {
        self.running
            .iter()
            .filter(|s| !s.needs_prefill)
            .map(Seq::kv)
            .sum()
    }

    /// Queues a request.
    pub fn submit(&mut self, id: u64, prompt_tokens: u32, planned: u32) -> Result<(), QueueFull> {
        self.submit_cached(id, prompt_tokens, 0, planned)
    }

    /// Queues a request whose first `cached` prompt tokens a prefix cache holds: its prefill
    /// step is charged for the other tokens only.
    pub fn submit_cached(
        &mut self,
        id: u64,
        prompt_tokens: u32,
        cached: u32,
        planned: u32,
    ) -> Result<(), QueueFull> {
        if self.waiting.len() >= self.model.max_waiting {
            return Err(QueueFull);
        }
        self.waiting.push_back(Seq {
            id,
            prompt_tokens,
            planned: planned.max(1),
            generated: 0,
            needs_prefill: true,
            preemptions: 0,
            cached: cached.min(prompt_tokens),
            speed: self.model.request_speed(id),
        });
        Ok(())
    }

    /// Drops a request (client went away).
    pub fn cancel(&mut self, id: u64) {
        self.waiting.retain(|s| s.id != id);
        self.running.retain(|s| s.id != id);
    }

    /// Whether nothing is queued or running.
    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.running.is_empty()
    }

    /// Admits what fits and plans the next step; `None` when idle.
    pub fn plan(&mut self) -> Option<Step> {
        // Admit only with headroom for the admitted to grow for one more step, so that a
        // re-admitted sequence is never preempted again before it makes progress.
        let mut reserved: u32 = self.running.iter().map(|s| s.kv() + 2).sum();
        while let Some(next) = self.waiting.front() {
            let need = next.kv() + 2;
            let fits = reserved + need <= self.model.kv_capacity || self.running.is_empty();
            if self.running.len() >= self.model.max_batch || !fits {
                break;
            }
            reserved += need;
            let seq = self.waiting.pop_front().expect("front exists");
            self.running.push(seq);
        }
        if self.running.is_empty() {
            return None;
        }
        let m = &self.model;
        let prefill: Vec<&Seq> = self.running.iter().filter(|s| s.needs_prefill).collect();
        if !prefill.is_empty() {
            let tokens: u32 = prefill.iter().map(|s| s.kv() - s.cached).sum();
            return Some(Step {
                duration_ms: m.prefill_base_ms + m.prefill_ms_per_token * f64::from(tokens),
                prefill: true,
                ids: prefill.iter().map(|s| s.id).collect(),
                batch: self.running.len(),
            });
        }
        let kv: u32 = self.running.iter().map(Seq::kv).sum();
        let n = self.running.len() as f64;
        let modelled = m.decode_base_ms
            + m.decode_ms_per_seq * n
            + m.decode_ms_per_kv_ktok * f64::from(kv) / 1000.0;
        let noise = if m.jitter > 0.0 {
            let speed = self.running.iter().map(|s| s.speed).sum::<f64>() / n;
            let lead = &self.running[0];
            speed * m.step_noise(lead.id, lead.generated)
        } else {
            1.0
        };
        Some(Step {
            duration_ms: modelled * noise,
            prefill: false,
            ids: self.running.iter().map(|s| s.id).collect(),
            batch: self.running.len(),
        })
    }

    /// Applies a planned step: tokens, preemptions, completions.
    pub fn complete(&mut self, step: &Step) -> Vec<SchedEvent> {
        let mut out = Vec::new();
        for seq in self.running.iter_mut().filter(|s| step.ids.contains(&s.id)) {
            let resumed = step.prefill && seq.generated > 0;
            seq.needs_prefill = false;
            seq.cached = 0;
            if resumed {
                continue; // re-prefill rebuilds the cache; the next decode step continues
            }
            out.push(SchedEvent::Token {
                id: seq.id,
                index: seq.generated,
            });
            seq.generated += 1;
        }
        let mut finished = Vec::new();
        self.running.retain(|s| {
            let done = s.generated >= s.planned;
            if done {
                finished.push(s.id);
            }
            !done
        });
        out.extend(finished.into_iter().map(|id| SchedEvent::Finished { id }));
        // Growing sequences may overflow the cache: preempt the newest until it fits.
        while self.running.len() > 1
            && self.running.iter().map(|s| s.kv() + 1).sum::<u32>() > self.model.kv_capacity
        {
            let mut victim = self.running.pop().expect("len > 1");
            victim.needs_prefill = true;
            victim.preemptions += 1;
            victim.cached = 0;
            out.push(SchedEvent::Preempted { id: victim.id });
            self.waiting.push_front(victim);
        }
        out
    }
}
