//! `ttft-server [--host H] [--port P] [--dist DIR] [--seed N]`: serves the studio and the
//! reference endpoint, and prints the URL.

use std::path::PathBuf;

use anyhow::{Context, bail};

fn main() -> anyhow::Result<()> {
    let mut host = "127.0.0.1".to_owned();
    let mut port: u16 = 8080;
    let mut dist: Option<PathBuf> = None;
    let mut seed = 0u64;
    let mut extra_ports = 0u16;
    let mut tls_port: Option<u16> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--host" => host = val()?,
            "--port" => port = val()?.parse().context("--port takes a number")?,
            "--dist" => dist = Some(PathBuf::from(val()?)),
            "--seed" => seed = val()?.parse().context("--seed takes a number")?,
            "--tls-port" => tls_port = Some(val()?.parse().context("--tls-port takes a number")?),
            "--extra-ports" => {
                extra_ports = val()?.parse().context("--extra-ports takes a number")?
            }
            "-h" | "--help" => {
                println!(
                    "ttft-server [--host 127.0.0.1] [--port 8080] [--dist dist] [--seed 0] [--extra-ports N] [--tls-port P]"
                );
                return Ok(());
            }
            other => bail!("unknown argument {other}: see --help"),
        }
    }
    if let Some(d) = &dist
        && !d.join("index.html").exists()
    {
        bail!(
            "{} has no index.html: build the app first (cargo xtask serve does)",
            d.display()
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind((host.as_str(), port))
            .await
            .with_context(|| {
                format!("cannot listen on {host}:{port}: is another server using it? pass --port")
            })?;
        let addr = listener.local_addr()?;
        let mut listeners = vec![listener];
        let mut shards = Vec::new();
        for i in 1..=extra_ports {
            let p = if port == 0 {
                0
            } else {
                port.checked_add(i).context("port out of range")?
            };
            let l = tokio::net::TcpListener::bind((host.as_str(), p))
                .await
                .with_context(|| format!("cannot listen on extra port {p}"))?;
            shards.push(format!("http://{}", l.local_addr()?));
            listeners.push(l);
        }
        println!("ttft-studio: http://{addr}/  (reference endpoint: http://{addr}/v1)");
        if !shards.is_empty() {
            println!(
                "more HTTP/1.1 origins (same simulator; the studio spreads runs above 6 streams over them): {}",
                shards.join(" ")
            );
        }
        let tls = match tls_port {
            Some(p) => {
                let l = std::net::TcpListener::bind((host.as_str(), p)).with_context(|| format!("cannot listen on TLS port {p}"))?;
                println!(
                    "HTTP/2 over TLS (self-signed certificate, accept it once in the browser): https://{}/v1",
                    l.local_addr()?
                );
                Some(l)
            }
            None => None,
        };
        ttft_server::serve_all(listeners, tls, ttft_server::Config { dist, seed }).await?;
        anyhow::Ok(())
    })
}
