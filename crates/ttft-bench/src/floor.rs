//! The browser's floor: a probe page with no framework and no parsing (fetch, read,
//! `performance.now()` into a preallocated array) over HTTP/1.1, sharded HTTP/1.1 and HTTP/2,
//! on the page's main thread or in a dedicated worker.
//!
//! The page (`public/probe.html`, served at `/public/probe.html`, cross-origin isolated like the
//! studio) stamps every read and keeps its bytes untouched. Only after the run are the reads
//! replayed through the core here (a [`Capture`], as the studio's own recordings are), so an
//! event arrives at the stamp of the read that completed it, exactly as in the studio, and the
//! content arrivals are the studio's replay points of kind `a`: one per chunk the server's
//! ground truth lists, whether a read carried one chunk (the usual case), the role chunk with
//! the first content chunk, the finish chunk and `[DONE]`, or several coalesced chunks.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use fantoccini::Client;
use serde_json::{Value, json};
use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::report::replay_of;
use ttft_core::timeline::{Outcome, Read};
use ttft_e2e::Studio;

use crate::accuracy::{ClientRequest, agreement};
use crate::plan::{self, Level};

/// How the probe reaches the reference endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// One HTTP/1.1 origin (the studio's own): at most 6 connections, so one stream.
    Http1,
    /// The studio's origin and [`Studio::shard_urls`] round-robin: 12 × 6 HTTP/1.1 connections.
    ShardedHttp1,
    /// One HTTP/2 origin over TLS ([`Studio::tls_url`], self-signed, accepted by the browser
    /// `ttft_e2e::browser` starts): every stream on one connection.
    Http2,
}

impl Transport {
    /// The name the results use.
    pub fn label(self) -> &'static str {
        match self {
            Transport::Http1 => "HTTP/1.1",
            Transport::ShardedHttp1 => "sharded HTTP/1.1",
            Transport::Http2 => "HTTP/2 (TLS)",
        }
    }

    /// The base URLs request `i` goes to in turn (`urls[i % len]`).
    pub fn urls(self, studio: &Studio) -> Vec<String> {
        match self {
            Transport::Http1 => vec![studio.url.clone()],
            Transport::ShardedHttp1 => std::iter::once(studio.url.clone())
                .chain(studio.shard_urls.iter().cloned())
                .collect(),
            Transport::Http2 => vec![studio.tls_url.clone()],
        }
    }

    /// The ALPN protocol (`nextHopProtocol`) its requests should use.
    fn protocol(self) -> &'static str {
        match self {
            Transport::Http1 | Transport::ShardedHttp1 => "http/1.1",
            Transport::Http2 => "h2",
        }
    }
}

/// Where the probe's read loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thread {
    /// The page's main thread (as a page-based app stamps).
    Page,
    /// A dedicated worker, whose thread nothing else uses (as the studio's stamping worker).
    Worker,
}

impl Thread {
    /// The client name the results use.
    pub fn client(self) -> &'static str {
        match self {
            Thread::Page => "floor probe (page)",
            Thread::Worker => "floor probe (worker)",
        }
    }
}

/// The floor's runs at this run's levels (`plan`): (level, transport, thread). The worker is
/// the floor of the studio (which stamps in a worker) on each transport the studio is judged
/// on: HTTP/1.1 at one stream (one origin's six connections would queue more), sharded
/// HTTP/1.1 (the studio's default above 6 streams) at 16 and 64, and HTTP/2 at 64. The page's
/// floor runs at one level only (64 streams over HTTP/2, beside the studio stamping on the
/// page): at one stream page and worker read alike, and the page is no longer the studio's.
pub fn levels() -> Vec<(Level, Transport, Thread)> {
    use Thread::*;
    use Transport::*;
    let configs = [
        (1, Http1, Worker),
        (16, ShardedHttp1, Worker),
        (64, ShardedHttp1, Worker),
        (64, Http2, Worker),
        (64, Http2, Page),
    ];
    configs
        .into_iter()
        .filter_map(|(streams, t, th)| Some((plan::at(streams)?, t, th)))
        .collect()
}

/// Model of every floor run of the side-by-side rounds (as the studio's).
pub const MODEL: &str = "sim-bench";

/// One run of the probe, converted.
struct ProbeRun {
    requests: Vec<ClientRequest>,
    /// `nextHopProtocol` of the measured requests, counted (`?` when the browser hid it).
    protocols: BTreeMap<String, usize>,
    /// Content chunks that arrived in the same read as an earlier content chunk.
    coalesced_chunks: usize,
    /// Whether the page or worker was cross-origin isolated (5 µs clock).
    isolated: bool,
    /// Where the loop ran, as the probe reports it (`page`, `worker`).
    thread: String,
}

/// Runs the probe page and converts what it recorded into the requests the comparison reads.
async fn probe(
    c: &Client,
    studio: &Studio,
    transport: Transport,
    thread: Thread,
    model: &str,
    level: Level,
) -> Result<ProbeRun> {
    // A closed loop of 100 requests at 20 ms per token takes well under a minute, but the
    // default script timeout (30 s) would cut the 1-stream runs short on a loaded machine. Each
    // request fails after 120 s (`probe.html`), so a run ends within its rounds × 120 s plus a
    // margin; a transport that stalls is an error, never a bench that waits forever.
    let rounds = level.requests.div_ceil(level.streams.max(1)) as u64;
    let mut timeouts = c.get_timeouts().await?;
    timeouts.set_script(Some(Duration::from_secs((rounds * 120 + 60).min(900))));
    c.update_timeouts(timeouts).await?;
    c.goto(&format!("{}/public/probe.html", studio.url)).await?;
    let v = c
        .execute_async(
            "const [opts, done] = arguments;
             if (typeof window.probe !== 'function') { done({ error: 'no window.probe: is dist/public/probe.html there?' }); return; }
             window.probe(opts).then(done, (e) => done({ error: String(e) }));",
            vec![json!({
                "urls": transport.urls(studio), "model": model, "streams": level.streams,
                "requests": level.requests, "maxTokens": level.tokens,
                "worker": thread == Thread::Worker,
            })],
        )
        .await?;
    if let Some(e) = v["error"].as_str() {
        anyhow::bail!("the probe failed: {e}");
    }
    let warmup_failed = v["warmupFailed"].as_array().map_or(0, Vec::len);
    anyhow::ensure!(
        warmup_failed == 0,
        "the probe's warm-up failed: {}",
        v["warmupFailed"]
    );
    let mut run = ProbeRun {
        requests: Vec::new(),
        protocols: BTreeMap::new(),
        coalesced_chunks: 0,
        isolated: v["crossOriginIsolated"].as_bool() == Some(true),
        thread: v["thread"].as_str().unwrap_or("?").to_owned(),
    };
    for r in v["results"]
        .as_array()
        .context("the probe returned no results")?
    {
        let protocol = r["protocol"].as_str().unwrap_or("?").to_owned();
        *run.protocols.entry(protocol).or_default() += 1;
        let (request, coalesced) = convert(r)?;
        run.coalesced_chunks += coalesced;
        run.requests.push(request);
    }
    // A transport's label must be what the browser used (`?`: Resource Timing did not say).
    let wrong: Vec<_> = run
        .protocols
        .keys()
        .filter(|p| *p != "?" && *p != transport.protocol())
        .collect();
    anyhow::ensure!(
        wrong.is_empty(),
        "the probe over {} used {wrong:?}, not {}",
        transport.label(),
        transport.protocol()
    );
    Ok(run)
}

/// One probe result → the request the comparison reads, and how many of its content chunks
/// shared a read with an earlier one. The reads go through the core as a [`Capture`] (t0 = 0),
/// so each content chunk arrives at the stamp of the read that completed it.
fn convert(r: &Value) -> Result<(ClientRequest, usize)> {
    let times: Vec<f64> = r["times"]
        .as_array()
        .context("times")?
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    let sizes: Vec<u32> = r["bytes"]
        .as_array()
        .context("bytes")?
        .iter()
        .filter_map(|b| b.as_u64().map(|b| b as u32))
        .collect();
    anyhow::ensure!(times.len() == sizes.len(), "the probe lost a read's size");
    let end = r["endMs"]
        .as_f64()
        .unwrap_or_else(|| times.last().copied().unwrap_or(0.0));
    let capture = Capture {
        sent_at: 0.0,
        head: r["headersMs"].as_f64().map(|at| CapturedHead {
            at,
            status: r["status"].as_u64().unwrap_or(0) as u16,
            content_type: r["contentType"].as_str().map(str::to_owned),
        }),
        body: r["body"].as_str().unwrap_or("").as_bytes().to_vec(),
        reads: times
            .iter()
            .zip(&sizes)
            .map(|(&at, &bytes)| Read { at, bytes })
            .collect(),
        end: match r["error"].as_str() {
            Some(e) => CaptureEnd::Failed {
                at: end,
                outcome: Outcome::NetworkError {
                    message: e.to_owned(),
                },
            },
            None => CaptureEnd::Finished { at: end },
        },
    };
    let timeline = capture.record(None)?;
    let content: Vec<_> = replay_of(&timeline)
        .into_iter()
        .filter(|p| p.kind == 'a')
        .collect();
    let coalesced = content
        .windows(2)
        .filter(|w| w[0].at_ms == w[1].at_ms)
        .count();
    Ok((
        ClientRequest {
            request_id: r["requestId"].as_str().map(str::to_owned),
            sent_epoch_ms: r["sentEpochMs"].as_f64(),
            chunk_ms: content.iter().map(|p| p.at_ms).collect(),
            ok: r["ok"].as_bool() == Some(true) && timeline.outcome.is_ok(),
        },
        coalesced,
    ))
}

/// The floor probe's requests at `level` (closed loop) over `transport`, read on `thread`
/// (`model`, one warm-up request per origin excluded).
pub async fn floor_in(
    c: &Client,
    studio: &Studio,
    transport: Transport,
    thread: Thread,
    model: &str,
    level: Level,
) -> Result<Vec<ClientRequest>> {
    Ok(probe(c, studio, transport, thread, model, level)
        .await?
        .requests)
}

/// `ttft-bench ROOT --floor-only`: runs the floor probe alone and prints its JSON.
pub async fn standalone(root: &std::path::Path) -> Result<()> {
    let started = Instant::now();
    let served = crate::server::start_from_env(root).await?;
    let studio = &served.studio;
    let driver = ttft_e2e::start_driver().await?;
    let c = ttft_e2e::browser(&driver).await?;
    let mut rows = Vec::new();
    for (level, transport, thread) in levels() {
        eprintln!(
            "{} over {} at {} streams…",
            thread.client(),
            transport.label(),
            level.streams
        );
        let t = Instant::now();
        let run = probe(&c, studio, transport, thread, MODEL, level).await?;
        let a = agreement(studio.port, &run.requests).await?;
        let mut row = a.to_json();
        row["client"] = json!(thread.client());
        row["thread"] = json!(run.thread);
        row["kind"] = json!("floor");
        row["transport"] = json!(transport.label());
        row["streams"] = json!(level.streams);
        row["requests"] = json!(level.requests);
        row["tokens"] = json!(level.tokens);
        row["protocols"] = json!(run.protocols);
        row["expected_protocol"] = json!(transport.protocol());
        row["coalesced_chunks"] = json!(run.coalesced_chunks);
        row["cross_origin_isolated"] = json!(run.isolated);
        row["duration_s"] = json!((t.elapsed().as_secs_f64() * 10.0).round() / 10.0);
        rows.push(row);
    }
    c.close().await?;
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "rows": rows,
            "duration_s": started.elapsed().as_secs_f64().round(),
        }))?
    );
    Ok(())
}
