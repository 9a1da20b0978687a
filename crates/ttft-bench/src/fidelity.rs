//! Measurement fidelity side by side: the studio (stamping in one or two workers, or on the
//! page as before), the browser's floor (the probe page, `floor`) and peer command-line clients
//! (`peers`), each compared with the reference endpoint's ground truth by the same
//! [`agreement`], at 1, 16 and 64 streams, over several rounds in one run.

use std::path::Path;

use anyhow::Result;
use fantoccini::Client;
use serde_json::{Value, json};
use ttft_e2e::Studio;

use crate::accuracy::agreement;
use crate::floor::{self, Transport};
use crate::{Setup, studio_requests, ui_run};
use ttft_core::run_stats::RunStats;

/// A studio configuration the rounds run: streams, requests, transport, stamping query.
fn studio_levels() -> Vec<(usize, usize, Transport, &'static str)> {
    use Transport::*;
    vec![
        (1, 10, Http1, ""),
        (1, 10, Http1, "?stamping=page"),
        (16, 32, ShardedHttp1, ""),
        (16, 32, Http2, ""),
        (16, 32, Http2, "?stamping=page"),
        (64, 128, ShardedHttp1, ""),
        (64, 128, ShardedHttp1, "?stamping=workers:2"),
        (64, 128, Http2, ""),
        (64, 128, Http2, "?stamping=workers:2"),
        (64, 128, Http2, "?stamping=page"),
    ]
}

/// The client name of a studio configuration.
fn studio_client(query: &str) -> &'static str {
    match query {
        "?stamping=page" => "studio (stamping on the page, before #19)",
        "?stamping=workers:2" => "studio (2 stamping workers)",
        _ => "studio (1 stamping worker, the default)",
    }
}

/// Rows keyed by client, transport and streams, each with one result per round.
#[derive(Default)]
struct Rows(Vec<Value>);

impl Rows {
    fn add(&mut self, client: &str, kind: &str, transport: &str, streams: usize, result: Value) {
        let requests = result["requests"].clone();
        let found = self.0.iter_mut().find(|r| {
            r["client"] == client && r["transport"] == transport && r["streams"] == streams
        });
        match found {
            Some(row) => row["rounds"].as_array_mut().expect("rounds").push(result),
            None => self.0.push(json!({
                "client": client, "kind": kind, "transport": transport, "streams": streams,
                "requests": requests, "rounds": [result],
            })),
        }
    }
}

/// The side-by-side measurement: `rounds` rounds of the studio and the floor, then the peers
/// (installed on first use) for as many rounds.
pub async fn fidelity(c: &Client, studio: &Studio, root: &Path, rounds: usize) -> Result<Value> {
    let mut rows = Rows::default();
    for round in 1..=rounds {
        for (streams, requests, transport, query) in studio_levels() {
            eprintln!(
                "round {round}: {} over {} at {streams} streams…",
                studio_client(query),
                transport.label()
            );
            let urls = transport.urls(studio);
            let setup = Setup {
                query,
                base_url: urls[0].clone(),
                shards: urls[1..].to_vec(),
            };
            let report = ui_run(c, studio, &setup, "sim-bench", requests, streams, 100).await?;
            let mut result = agreement(studio.port, &studio_requests(&report))
                .await?
                .to_json();
            result["requests"] = json!(requests);
            result["protocols"] = json!(report.transports());
            result["stamping"] = json!(report.stamping);
            rows.add(
                studio_client(query),
                "studio",
                transport.label(),
                streams,
                result,
            );
        }
        for (streams, requests, transport, thread) in floor::levels() {
            eprintln!(
                "round {round}: {} over {} at {streams} streams…",
                thread.client(),
                transport.label()
            );
            let measured = floor::floor_in(c, studio, transport, thread, streams, requests).await?;
            let mut result = agreement(studio.port, &measured).await?.to_json();
            result["requests"] = json!(requests);
            rows.add(thread.client(), "floor", transport.label(), streams, result);
        }
    }
    eprintln!("peers ({rounds} rounds)…");
    let peers = match crate::peers::peers(studio, root, rounds).await {
        Ok(p) => p,
        Err(e) => {
            json!({ "rows": [], "skipped": [{ "client": "peers", "reason": format!("{e:#}") }] })
        }
    };
    let mut all = rows.0;
    all.extend(peers["rows"].as_array().cloned().unwrap_or_default());
    Ok(json!({
        "rounds": rounds,
        "rows": all,
        "skipped": peers["skipped"].clone(),
        "peer_tools": peers["tools"].clone(),
    }))
}
