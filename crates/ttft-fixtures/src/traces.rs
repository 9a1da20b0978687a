//! The trace files of the core's `tests/it/trace.rs`, the server's trace tests and the e2e
//! replays (#32), generated here deterministically and committed under `data/traces/` (the
//! core's test `the_fixture_files_are_what_their_generators_write` checks they agree; run it
//! with `TTFT_WRITE_FIXTURES=1` to write them again).
//!
//! - `mooncake-200.jsonl`: 200 requests in Mooncake's FAST'25 format over 290 s:
//!   multi-turn chats under a 512-token system prompt (each turn's prompt extends the last
//!   one's, so it shares the last one's whole 512-token blocks), one-shot questions under a
//!   1,024-token system prompt, and prompts of their own; hash ids assigned as Mooncake's are
//!   (one a 512-token block, the same prefix the same id, new ids counting up).
//! - `azure-conv-50.csv`: 50 rows in the Azure LLM inference trace 2023 format.
//! - `burstgpt-50.csv`: 50 rows in BurstGPT's format, 3 of them failed (`Response tokens` 0).

use std::collections::HashMap;
use std::fmt::Write as _;

/// The folder of the trace files.
pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/traces");

/// The Mooncake fixture's file name under [`DATA`].
pub const MOONCAKE: &str = "mooncake-200.jsonl";
/// The Azure fixture's file name under [`DATA`].
pub const AZURE: &str = "azure-conv-50.csv";
/// The BurstGPT fixture's file name under [`DATA`].
pub const BURSTGPT: &str = "burstgpt-50.csv";

/// Every fixture: its file name and the text its generator writes.
pub fn all() -> [(&'static str, String); 3] {
    [
        (MOONCAKE, mooncake()),
        (AZURE, azure()),
        (BURSTGPT, burstgpt()),
    ]
}

/// The committed text of the fixture `name` under [`DATA`].
pub fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{DATA}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

const BLOCK: usize = 512;

/// Mooncake's block ids: a block's id names its content and everything before it.
#[derive(Default)]
struct BlockIds {
    ids: HashMap<(u64, Vec<u64>), u64>,
}

impl BlockIds {
    fn of(&mut self, tokens: &[u64]) -> Vec<u64> {
        let mut parent = u64::MAX;
        tokens
            .chunks(BLOCK)
            .map(|chunk| {
                let next = self.ids.len() as u64;
                let id = *self.ids.entry((parent, chunk.to_vec())).or_insert(next);
                parent = id;
                id
            })
            .collect()
    }
}

/// A request before it is written: arrival ms, prompt token identities, output length.
struct Request {
    at_ms: u64,
    tokens: Vec<u64>,
    output: u32,
}

/// Fresh token identities, none equal to another.
struct Fresh(u64);

impl Fresh {
    fn take(&mut self, n: usize) -> Vec<u64> {
        let start = self.0;
        self.0 += n as u64;
        (start..self.0).collect()
    }
}

/// A multi-turn chat under `system` starting at `start_ms`: 1 to 5 turns, each prompt the last
/// one plus its answer plus a new user message, 8 to 40 s apart.
fn chat(rng: &mut fastrand::Rng, fresh: &mut Fresh, system: &[u64], start_ms: u64) -> Vec<Request> {
    let mut prompt = system.to_vec();
    let mut at_ms = start_ms;
    let mut out = Vec::new();
    for _ in 0..rng.usize(1..=5) {
        prompt.extend(fresh.take(rng.usize(20..=120)));
        let output = rng.u32(10..=90);
        out.push(Request {
            at_ms,
            tokens: prompt.clone(),
            output,
        });
        prompt.extend(fresh.take(output as usize));
        at_ms += rng.u64(8_000..=40_000);
    }
    out
}

/// The Mooncake fixture's text.
pub fn mooncake() -> String {
    let mut rng = fastrand::Rng::with_seed(32);
    let mut fresh = Fresh(0);
    let chat_system = fresh.take(BLOCK);
    let qa_system = fresh.take(2 * BLOCK);
    let mut requests = Vec::new();
    let mut at_ms = 0;
    while requests.len() < 260 {
        match rng.u8(0..10) {
            0..=4 => requests.extend(chat(&mut rng, &mut fresh, &chat_system, at_ms)),
            5..=7 => {
                let mut tokens = qa_system.clone();
                tokens.extend(fresh.take(rng.usize(40..=250)));
                requests.push(Request {
                    at_ms,
                    tokens,
                    output: rng.u32(20..=120),
                });
            }
            _ => requests.push(Request {
                at_ms,
                tokens: fresh.take(rng.usize(100..=500)),
                output: rng.u32(10..=150),
            }),
        }
        // Sessions and one-shot requests arrive about every 3.5 s (exponential gaps).
        at_ms += (-(1.0 - rng.f64()).ln() * 3_500.0) as u64;
    }
    requests.sort_by_key(|r| r.at_ms);
    requests.truncate(200);
    let t0 = requests[0].at_ms;
    let mut ids = BlockIds::default();
    let mut out = String::new();
    for r in &requests {
        let hash_ids: Vec<String> = ids.of(&r.tokens).iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}]}}",
            r.at_ms - t0,
            r.tokens.len(),
            r.output,
            hash_ids.join(", ")
        );
    }
    out
}

/// Exponential gaps of mean `mean_ms`, as whole 100-ns ticks.
fn gap_ticks(rng: &mut fastrand::Rng, mean_ms: f64) -> u64 {
    (-(1.0 - rng.f64()).ln() * mean_ms * 1e4) as u64
}

/// The Azure fixture's text: `TIMESTAMP,ContextTokens,GeneratedTokens` from 2023-11-16
/// 18:15:46.6805900, about 1.5 s apart.
pub fn azure() -> String {
    let mut rng = fastrand::Rng::with_seed(2023);
    let mut out = String::from("TIMESTAMP,ContextTokens,GeneratedTokens\n");
    // 100-ns ticks since 18:15:00.
    let mut ticks: u64 = 466_805_900;
    for _ in 0..50 {
        let (s, frac) = (ticks / 10_000_000, ticks % 10_000_000);
        let (h, m, sec) = (18 + (15 + s / 60) / 60, (15 + s / 60) % 60, s % 60);
        let _ = writeln!(
            out,
            "2023-11-16 {h:02}:{m:02}:{sec:02}.{frac:07},{},{}",
            rng.u32(80..=2000),
            rng.u32(5..=300)
        );
        ticks += gap_ticks(&mut rng, 1_500.0);
    }
    out
}

/// The BurstGPT fixture's text: whole seconds from 5, 3 failed rows (`Response tokens` 0).
pub fn burstgpt() -> String {
    let mut rng = fastrand::Rng::with_seed(2024);
    let mut out =
        String::from("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n");
    let mut t = 5;
    for i in 0..50 {
        let model = if rng.u8(0..4) == 0 {
            "GPT-4"
        } else {
            "ChatGPT"
        };
        let log = if rng.u8(0..3) == 0 {
            "API log"
        } else {
            "Conversation log"
        };
        let request = rng.u32(40..=1500);
        let response = if [7, 23, 41].contains(&i) {
            0
        } else {
            rng.u32(8..=320)
        };
        let _ = writeln!(
            out,
            "{t},{model},{request},{response},{},{log}",
            request + response
        );
        t += rng.u32(0..=4);
    }
    out
}
