//! `ttft-server [--host H] [--port P] [--dist DIR] [--seed N] [--open]`: serves the studio and
//! the reference endpoint, and prints the URL (`--open`: and opens it in the default browser).
//! Built with feature `embed-app` it serves the app compiled into it unless `--dist` is given.

use std::path::PathBuf;

use anyhow::{Context, bail};

fn main() -> anyhow::Result<()> {
    let mut host = "127.0.0.1".to_owned();
    let mut port: u16 = 8080;
    let mut dist: Option<PathBuf> = None;
    let mut seed = 0u64;
    let mut extra_ports = 0u16;
    let mut tls_port: Option<u16> = None;
    let mut open = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--host" => host = val()?,
            "--port" => port = val()?.parse().context("--port takes a number")?,
            "--dist" => dist = Some(PathBuf::from(val()?)),
            "--seed" => seed = val()?.parse().context("--seed takes a number")?,
            "--tls-port" => tls_port = Some(val()?.parse().context("--tls-port takes a number")?),
            "--open" => open = true,
            "--extra-ports" => {
                extra_ports = val()?.parse().context("--extra-ports takes a number")?
            }
            "-h" | "--help" => {
                println!(
                    "ttft-server [--host 127.0.0.1] [--port 8080] [--dist dist] [--seed 0] [--extra-ports N] [--tls-port P] [--open]"
                );
                println!(
                    "{}",
                    match ttft_server::assets::embedded() {
                        Some(files) => format!(
                            "the studio is embedded ({} files); --dist DIR serves another build",
                            files.len()
                        ),
                        None => "no studio embedded: pass --dist DIR (trunk's dist/), or build with `cargo xtask dist`".to_owned(),
                    }
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
        if dist.is_none() && ttft_server::assets::embedded().is_none() {
            println!("no app to serve (not embedded, no --dist): only the reference endpoint");
        }
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
        if open {
            open_browser(&browser_url(addr));
        }
        ttft_server::serve_all(listeners, tls, ttft_server::Config { dist, seed }).await?;
        anyhow::Ok(())
    })
}

/// The URL a browser on this machine opens: the bound address, loopback when it is a wildcard.
fn browser_url(addr: std::net::SocketAddr) -> String {
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    format!("http://{addr}/")
}

/// Opens `url` in the default browser (`open` on macOS, `cmd /c start` on Windows, `xdg-open`
/// elsewhere) without holding up the server; when that fails, says so with the URL and goes on.
fn open_browser(url: &str) {
    let mut c = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        c.args(["/c", "start", ""]);
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    c.arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let program = c.get_program().to_string_lossy().into_owned();
    let url = url.to_owned();
    let failed = move |why: String| {
        println!("could not open a browser ({program}: {why}): open {url} yourself");
    };
    match c.spawn() {
        // xdg-open and friends exit non-zero when no browser could be started.
        Ok(mut child) => {
            std::thread::spawn(move || match child.wait() {
                Ok(status) if status.success() => {}
                Ok(status) => failed(status.to_string()),
                Err(e) => failed(e.to_string()),
            });
        }
        Err(e) => failed(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::browser_url;

    #[test]
    fn the_browser_opens_a_loopback_url() {
        for (bound, url) in [
            ("127.0.0.1:8080", "http://127.0.0.1:8080/"),
            ("0.0.0.0:8080", "http://127.0.0.1:8080/"),
            ("[::]:9000", "http://[::1]:9000/"),
            ("192.168.1.5:80", "http://192.168.1.5:80/"),
        ] {
            assert_eq!(browser_url(bound.parse().unwrap()), url);
        }
    }
}
