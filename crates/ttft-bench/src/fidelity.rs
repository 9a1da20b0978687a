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
use crate::plan::{self, Level};
use crate::server::{self, Mode};
use crate::{Setup, studio_requests, ui_run};
use ttft_core::run_stats::RunStats;

/// The studio configurations the rounds run at this run's levels (`plan`): (level, transport,
/// stamping query). The default (one stamping worker) on the default transport at every level
/// (HTTP/1.1 at one stream, sharded HTTP/1.1 above six: the studio spreads a run over the
/// server's extra origins by itself); at 64 streams also over HTTP/2, with two stamping
/// workers, and stamping on the page as before #19 (that history at this one level only).
pub fn studio_levels() -> Vec<(Level, Transport, &'static str)> {
    use Transport::*;
    let configs = [
        (1, Http1, ""),
        (16, ShardedHttp1, ""),
        (64, ShardedHttp1, ""),
        (64, ShardedHttp1, "?stamping=workers:2"),
        (64, Http2, ""),
        (64, Http2, "?stamping=page"),
    ];
    configs
        .into_iter()
        .filter_map(|(streams, t, q)| Some((plan::at(streams)?, t, q)))
        .collect()
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
pub struct Rows(pub Vec<Value>);

impl Rows {
    fn add(&mut self, client: &str, kind: &str, transport: &str, level: Level, result: Value) {
        let streams = level.streams;
        let found = self.0.iter_mut().find(|r| {
            r["client"] == client && r["transport"] == transport && r["streams"] == streams
        });
        match found {
            Some(row) => {
                if let Some(rounds) = row["rounds"].as_array_mut() {
                    rounds.push(result);
                }
            }
            None => self.0.push(json!({
                "client": client, "kind": kind, "transport": transport, "streams": streams,
                "requests": level.requests, "tokens": level.tokens, "rounds": [result],
            })),
        }
    }
}

/// One pass of the studio and the floor at `streams` levels (all of this run's when `None`),
/// each result added to `rows` as one more round.
pub async fn one_round(
    c: &Client,
    studio: &Studio,
    rows: &mut Rows,
    round: usize,
    streams: Option<&[usize]>,
) -> Result<()> {
    let wanted = |l: &Level| streams.is_none_or(|s| s.contains(&l.streams));
    for (level, transport, query) in studio_levels().into_iter().filter(|x| wanted(&x.0)) {
        eprintln!(
            "round {round}: {} over {} at {} streams…",
            studio_client(query),
            transport.label(),
            level.streams
        );
        let urls = transport.urls(studio);
        let setup = Setup {
            query,
            base_url: urls[0].clone(),
            shards: urls[1..].to_vec(),
        };
        let report = ui_run(
            c,
            studio,
            &setup,
            floor::MODEL,
            level.requests,
            level.streams,
            level.tokens,
        )
        .await?;
        let mut result = agreement(studio.port, &studio_requests(&report))
            .await?
            .to_json();
        result["requests"] = json!(level.requests);
        result["protocols"] = json!(report.transports());
        result["stamping"] = json!(report.stamping);
        rows.add(
            studio_client(query),
            "studio",
            transport.label(),
            level,
            result,
        );
    }
    for (level, transport, thread) in floor::levels().into_iter().filter(|x| wanted(&x.0)) {
        eprintln!(
            "round {round}: {} over {} at {} streams…",
            thread.client(),
            transport.label(),
            level.streams
        );
        let measured = floor::floor_in(c, studio, transport, thread, floor::MODEL, level).await?;
        let mut result = agreement(studio.port, &measured).await?.to_json();
        result["requests"] = json!(level.requests);
        rows.add(thread.client(), "floor", transport.label(), level, result);
    }
    Ok(())
}

/// The side-by-side measurement: `rounds` rounds of the studio and the floor, then the peers
/// (installed on first use) for `peer_rounds` rounds.
pub async fn fidelity(
    c: &Client,
    studio: &Studio,
    root: &Path,
    rounds: usize,
    peer_rounds: usize,
) -> Result<Value> {
    let mut rows = Rows::default();
    for round in 1..=rounds {
        one_round(c, studio, &mut rows, round, None).await?;
    }
    eprintln!("peers ({peer_rounds} rounds)…");
    let peers = if peer_rounds == 0 {
        json!({ "rows": [], "skipped": [{
            "client": "peers", "reason": "not run in this run (TTFT_BENCH_PEER_ROUNDS=0)" }] })
    } else {
        match crate::peers::peers(studio, root, peer_rounds).await {
            Ok(p) => p,
            Err(e) => {
                json!({ "rows": [], "skipped": [{ "client": "peers", "reason": format!("{e:#}") }] })
            }
        }
    };
    let mut all = rows.0;
    all.extend(peers["rows"].as_array().cloned().unwrap_or_default());
    Ok(json!({
        "rounds": rounds,
        "peer_rounds": peer_rounds,
        "rows": all,
        "skipped": peers["skipped"].clone(),
        "peer_tools": peers["tools"].clone(),
    }))
}

/// `ttft-bench ROOT --server-compare`: the 1- and 16-stream studio and floor runs once with the
/// reference endpoint in its own process and once inside the bench's runtime, merged into the
/// last `results.json` as `server_compare` (BENCHMARKS.md reports the difference).
pub async fn server_compare(root: &Path) -> Result<()> {
    let started = std::time::Instant::now();
    let driver = ttft_e2e::start_driver().await?;
    let streams = [1, 16];
    let mut modes = Vec::new();
    for mode in [Mode::Process, Mode::InProcess] {
        eprintln!("server compare: the reference endpoint {}…", mode.label());
        let served = server::start(root, mode).await?;
        let c = ttft_e2e::browser(&driver).await?;
        let mut rows = Rows::default();
        one_round(&c, &served.studio, &mut rows, 1, Some(&streams)).await?;
        c.close().await?;
        modes.push(json!({ "mode": mode.label(), "server": served.to_json(), "rows": rows.0 }));
    }
    crate::bench_report::merge_section(
        root,
        "server_compare",
        json!({
            "date": crate::machine()["date"].clone(), "streams": streams, "modes": modes,
            "duration_s": started.elapsed().as_secs_f64().round(),
        }),
    )?;
    eprintln!("wrote server_compare into bench/results.json and BENCHMARKS.md");
    Ok(())
}
