//! Capacity benchmark of the reference endpoint (not a test): how many concurrent streams it
//! sustains on this machine while emission jitter — a chunk's actual write time minus the time
//! its decode step was scheduled to end — stays under 1 ms at P99.
//!
//! `cargo run --release -p ttft-server --example capacity [-- 1,16,64,256,512]`

use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn request(port: u16, body: &str) -> Option<String> {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.ok()?;
    let text = String::from_utf8_lossy(&buf);
    text.lines()
        .find_map(|l| l.strip_prefix("x-request-id: "))
        .map(|v| v.trim().to_owned())
}

async fn get(port: u16, path: &str) -> Option<serde_json::Value> {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes())
        .await
        .ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.ok()?;
    let text = String::from_utf8_lossy(&buf);
    let body = text.split_once("\r\n\r\n")?.1;
    serde_json::from_str(body).ok()
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let h = (v.len() - 1) as f64 * p / 100.0;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let levels: Vec<usize> = std::env::args()
        .nth(1)
        .map(|a| a.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 16, 64, 128, 256, 512]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(ttft_server::serve(
        listener,
        ttft_server::Config {
            dist: None,
            seed: 0,
        },
    ));
    let body = serde_json::json!({"model": "sim-bench", "messages": [{"role": "user", "content": "hi"}], "stream": true, "max_tokens": 100}).to_string();
    println!("| streams | chunks | chunks/s | jitter P50 (ms) | P99 (ms) | max (ms) |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut best = 0;
    for n in levels {
        let t = Instant::now();
        let handles: Vec<_> = (0..n)
            .map(|_| {
                tokio::spawn({
                    let body = body.clone();
                    async move { request(port, &body).await }
                })
            })
            .collect();
        let mut ids = Vec::new();
        for h in handles {
            if let Ok(Some(id)) = h.await {
                ids.push(id);
            }
        }
        let wall = t.elapsed().as_secs_f64();
        let mut jitter = Vec::new();
        for id in &ids {
            if let Some(truth) = get(port, &format!("/v1/ground-truth/{id}")).await {
                for c in truth["chunks"].as_array().into_iter().flatten() {
                    jitter.push(
                        c["written_ms"].as_f64().unwrap_or(0.0)
                            - c["scheduled_ms"].as_f64().unwrap_or(0.0),
                    );
                }
            }
        }
        let chunks = jitter.len();
        let (p50, p99) = (pct(&mut jitter, 50.0), pct(&mut jitter, 99.0));
        let max = jitter.iter().copied().fold(0.0, f64::max);
        println!(
            "| {n} | {chunks} | {:.0} | {p50:.3} | {p99:.3} | {max:.2} |",
            chunks as f64 / wall
        );
        if p99 < 1.0 {
            best = n;
        }
    }
    println!("\nhighest level with P99 emission jitter < 1 ms: {best} concurrent streams");
}
