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
        Some(Step {
            duration_ms: m.decode_base_ms
                + m.decode_ms_per_seq * self.running.len() as f64
                + m.decode_ms_per_kv_ktok * f64::from(kv) / 1000.0,
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
