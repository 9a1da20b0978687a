//! A response being generated: [`Gen`] receives the engine's token events, groups them into
//! chunks at the profile's stream interval, frames them for the API and flavour, injects the
//! plan's faults (error, dropped connection, stall) and records when each chunk was handed
//! over. Its `Drop` files the ground truth, so a cancelled stream is recorded too.
//! [`collect`] drains the same events into one non-streaming JSON body.

use axum::body::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::unix_now;
use super::validate::Common;
use crate::sim::engine::EngineEvent;
use crate::sim::framing::{Api, Framer, SimTimings};
use crate::sim::plan::{Fault, Piece, PieceKind, Plan};
use crate::sim::truth::{Truth, TruthChunk, TruthStore};

/// One response being generated.
pub(super) struct Gen {
    pub(super) rx: mpsc::UnboundedReceiver<EngineEvent>,
    pub(super) framer: Framer,
    pub(super) plan: Plan,
    pub(super) interval: u32,
    pub(super) pending: Vec<Piece>,
    pub(super) emitted: u32,
    pub(super) received: Instant,
    pub(super) truth: Truth,
    pub(super) store: TruthStore,
    pub(super) started: bool,
    pub(super) done: bool,
    pub(super) stalled: bool,
    pub(super) drop_next: bool,
    pub(super) first_at: Option<Instant>,
    pub(super) last_at: Option<Instant>,
}

impl Drop for Gen {
    fn drop(&mut self) {
        self.store.finish(self.truth.clone());
    }
}

fn ms_since(a: Instant, b: Instant) -> f64 {
    b.saturating_duration_since(a).as_secs_f64() * 1e3
}

impl Gen {
    /// Frames the pending tokens; records them as one written chunk (timed at return).
    fn flush(&mut self, out: &mut String, scheduled: Instant) {
        if self.pending.is_empty() {
            return;
        }
        if !self.started {
            self.started = true;
            out.push_str(&self.framer.start());
        }
        let group = std::mem::take(&mut self.pending);
        out.push_str(&self.framer.chunk(&group));
        self.emitted += group.len() as u32;
        self.truth.chunks.push(TruthChunk {
            written_ms: 0.0, // set when handed over
            scheduled_ms: ms_since(self.received, scheduled),
            text: group.iter().map(|p| p.text.as_str()).collect(),
            tokens: group.len() as u32,
        });
    }

    fn hand_over(&mut self, out: String, chunks_before: usize) -> Bytes {
        let now = Instant::now();
        for c in &mut self.truth.chunks[chunks_before..] {
            c.written_ms = ms_since(self.received, now);
        }
        Bytes::from(out)
    }

    pub(super) async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        if self.done {
            return None;
        }
        if self.drop_next {
            self.done = true;
            return Some(Err(std::io::Error::other("simulated dropped connection")));
        }
        let before = self.truth.chunks.len();
        let mut out = String::new();
        loop {
            let Some(ev) = self.rx.recv().await else {
                self.done = true;
                self.truth.outcome = "error".into();
                return None;
            };
            match ev {
                EngineEvent::Token {
                    index,
                    scheduled,
                    prefill_ms,
                    batch,
                } => {
                    let now = Instant::now();
                    self.first_at.get_or_insert(now);
                    self.last_at = Some(now);
                    if let (Some(p), None) = (prefill_ms, self.truth.prefill_ms) {
                        self.truth.prefill_ms = Some(p);
                        self.truth.queue_ms =
                            Some((ms_since(self.received, scheduled) - p).max(0.0));
                    }
                    self.truth.batch_sizes.push(batch);
                    let Some(piece) = self.plan.pieces.get(index as usize).cloned() else {
                        continue;
                    };
                    if self.pending.first().is_some_and(|p| p.kind != piece.kind)
                        || piece.kind == PieceKind::ToolName
                    {
                        self.flush(&mut out, scheduled);
                    }
                    let tool_name = piece.kind == PieceKind::ToolName;
                    self.pending.push(piece);
                    // Stream interval: the first token at once, then every `interval` tokens.
                    if index == 0 || tool_name || self.pending.len() as u32 >= self.interval {
                        self.flush(&mut out, scheduled);
                    }
                    let sent = self.emitted;
                    match self.plan.fault {
                        Some(Fault::ErrorAfter(k)) if sent >= k => {
                            out.push_str(
                                &self.framer.error(
                                    "simulated failure: the engine lost a worker mid-stream",
                                ),
                            );
                            self.done = true;
                            self.truth.outcome = "error".into();
                            return Some(Ok(self.hand_over(out, before)));
                        }
                        Some(Fault::DropAfter(k)) if sent >= k => {
                            self.done = true;
                            self.truth.outcome = "dropped".into();
                            if out.is_empty() {
                                return Some(Err(std::io::Error::other(
                                    "simulated dropped connection",
                                )));
                            }
                            // Write what is due, then drop on the next poll.
                            self.done = false;
                            self.drop_next = true;
                            return Some(Ok(self.hand_over(out, before)));
                        }
                        Some(Fault::StallAfter(k, ms)) if sent >= k && !self.stalled => {
                            self.stalled = true;
                            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                        }
                        _ => {}
                    }
                    if !out.is_empty() {
                        return Some(Ok(self.hand_over(out, before)));
                    }
                }
                EngineEvent::Preempted => self.truth.preemptions += 1,
                EngineEvent::Finished => {
                    self.flush(&mut out, Instant::now());
                    let prompt_ms = self.truth.prefill_ms.unwrap_or(0.0);
                    let predicted_ms = match (self.first_at, self.last_at) {
                        (Some(a), Some(b)) => ms_since(a, b),
                        _ => 0.0,
                    };
                    let reason = self.plan.finish_reason;
                    out.push_str(&self.framer.finish(
                        reason,
                        SimTimings {
                            prompt_ms,
                            predicted_ms,
                        },
                    ));
                    self.done = true;
                    self.truth.outcome = "ok".into();
                    return Some(Ok(self.hand_over(out, before)));
                }
            }
        }
    }
}

pub(super) async fn collect(mut g: Gen, api: Api, c: &Common) -> Value {
    // Drain without framing a stream: collect the pieces as they are produced.
    let mut answer = String::new();
    let mut reasoning = String::new();
    let mut args = String::new();
    let mut produced = 0u32;
    while let Some(ev) = g.rx.recv().await {
        match ev {
            EngineEvent::Token { index, .. } => {
                if let Some(p) = g.plan.pieces.get(index as usize) {
                    produced += 1;
                    match p.kind {
                        PieceKind::Answer => answer.push_str(&p.text),
                        PieceKind::Reasoning => reasoning.push_str(&p.text),
                        PieceKind::ToolArgs => args.push_str(&p.text),
                        PieceKind::ToolName => {}
                    }
                }
            }
            EngineEvent::Finished => break,
            EngineEvent::Preempted => g.truth.preemptions += 1,
        }
    }
    g.truth.outcome = "ok".into();
    g.done = true;
    let reason = g.plan.finish_reason;
    let tool = g.plan.tool_name.clone();
    let mut usage = json!({"prompt_tokens": c.prompt_tokens, "completion_tokens": produced, "total_tokens": c.prompt_tokens + produced});
    let mut input_usage = json!({"input_tokens": c.prompt_tokens, "output_tokens": produced});
    if let Some(n) = g.truth.cached_tokens {
        usage["prompt_tokens_details"] = json!({"cached_tokens": n});
        input_usage = json!({"input_tokens": c.prompt_tokens.saturating_sub(n), "cache_creation_input_tokens": 0, "cache_read_input_tokens": n, "output_tokens": produced});
    }
    match api {
        Api::Anthropic => {
            let mut content = Vec::new();
            if !reasoning.is_empty() {
                content.push(json!({"type": "thinking", "thinking": reasoning}));
            }
            if let Some(name) = tool {
                content.push(json!({"type": "tool_use", "id": format!("toolu_{}", g.truth.id), "name": name, "input": serde_json::from_str::<Value>(&args).unwrap_or(json!({}))}));
            } else {
                content.push(json!({"type": "text", "text": answer}));
            }
            json!({"id": g.truth.id, "type": "message", "role": "assistant", "model": c.model, "content": content,
                   "stop_reason": match reason { "length" => "max_tokens", "tool_calls" => "tool_use", _ => "end_turn" },
                   "stop_sequence": null, "usage": input_usage})
        }
        Api::Completions => {
            json!({"id": g.truth.id, "object": "text_completion", "created": unix_now(), "model": c.model,
                                   "choices": [{"index": 0, "text": answer, "logprobs": null, "finish_reason": reason}], "usage": usage})
        }
        Api::Chat => {
            let mut message = json!({"role": "assistant", "content": if tool.is_some() { Value::Null } else { json!(answer) }});
            if !reasoning.is_empty() {
                message["reasoning_content"] = json!(reasoning);
            }
            if let Some(name) = tool {
                message["tool_calls"] = json!([{"id": format!("call-{}", g.truth.id), "type": "function", "function": {"name": name, "arguments": args}}]);
            }
            json!({"id": format!("chatcmpl-{}", g.truth.id), "object": "chat.completion", "created": unix_now(), "model": c.model,
                   "choices": [{"index": 0, "message": message, "finish_reason": reason}], "usage": usage})
        }
    }
}
