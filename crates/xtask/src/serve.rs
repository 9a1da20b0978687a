//! `cargo xtask serve [--port N] [--host H] [--seed S]`: installs what is missing, builds the
//! studio in release (unless `dist/` is up to date) and serves it with the reference endpoint.

use anyhow::{Result, bail};

use crate::tools::{app_is_fresh, build_app, cmd, ensure_tools};

/// Builds if needed, then runs `ttft-server` in release on `dist/` (port 8080 by default).
pub(crate) fn serve(args: &[String]) -> Result<()> {
    ensure_tools()?;
    if app_is_fresh() {
        eprintln!("==> the built app in dist/ is up to date");
    } else {
        build_app()?;
    }
    let mut server_args = vec![
        "run",
        "--release",
        "--quiet",
        "-p",
        "ttft-server",
        "--",
        "--dist",
        "dist",
        // 11 more HTTP/1.1 origins: the studio spreads runs above 6 streams over them (the
        // transport BENCHMARKS.md measured best), with no certificate to accept.
        "--extra-ports",
        "11",
    ];
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--port" | "--host" | "--seed" if i + 1 < args.len() => {
                server_args.push(&args[i]);
                server_args.push(&args[i + 1]);
                i += 2;
            }
            other => bail!(
                "unknown argument {other}: cargo xtask serve [--port 8080] [--host 127.0.0.1] [--seed 0]"
            ),
        }
    }
    if !args.iter().any(|a| a == "--port") {
        server_args.extend(["--port", "8080"]);
    }
    eprintln!("==> starting the studio (Ctrl-C to stop)");
    let status = cmd("cargo").args(&server_args).status()?;
    if !status.success() {
        bail!("the server stopped ({status})");
    }
    Ok(())
}
