//! Helpers every command shares: the workspace root, commands run from it with cargo's bin and
//! the npm tools on `PATH`, timed steps, and the one-time setup (wasm32 target, trunk,
//! wasm-bindgen-cli at the version Cargo.lock pins, npm packages, Chromium and chromedriver;
//! Firefox ESR with geckodriver and WebKitGTK's driver with Xvfb for the other engines' smoke
//! tests), plus building the app with trunk only when its inputs changed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// The trunk release `setup` installs.
pub(crate) const TRUNK_VERSION: &str = "0.21.14";
/// The geckodriver release `ensure_other_engines` installs (Firefox's WebDriver server).
pub(crate) const GECKODRIVER_VERSION: &str = "0.37.1";
/// The browser target.
pub(crate) const WASM: &str = "wasm32-unknown-unknown";

/// The workspace root.
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// Cargo's `bin` directory (`$CARGO_HOME/bin`, else `~/.cargo/bin`).
pub(crate) fn cargo_bin() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo"))
        .join("bin")
}

/// PATH with cargo's bin and the npm tools (binaryen's wasm-opt) first.
pub(crate) fn path_env() -> String {
    let mut parts = vec![
        root().join("node_modules/.bin").display().to_string(),
        cargo_bin().display().to_string(),
    ];
    parts.push(std::env::var("PATH").unwrap_or_default());
    parts.join(":")
}

/// `program`, run from the workspace root with [`path_env`] as `PATH`.
pub(crate) fn cmd(program: &str) -> Command {
    let mut c = Command::new(program);
    c.current_dir(root()).env("PATH", path_env());
    c
}

/// Runs one named step, timing it; fails when it fails.
pub(crate) fn run(step: &str, mut c: Command) -> Result<()> {
    eprintln!("==> {step}");
    let t = Instant::now();
    let status = c
        .status()
        .with_context(|| format!("{step}: could not start {:?}", c.get_program()))?;
    eprintln!("    {step}: {:.1} s", t.elapsed().as_secs_f64());
    if !status.success() {
        bail!("{step} failed ({status})");
    }
    Ok(())
}

/// `program args`' standard output, if it ran and succeeded.
pub(crate) fn output(program: &str, args: &[&str]) -> Option<String> {
    let o = cmd(program).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The wasm-bindgen version Cargo.lock pins (trunk and the test runner must match it).
pub(crate) fn locked_wasm_bindgen() -> Result<String> {
    let lock =
        std::fs::read_to_string(root().join("Cargo.lock")).context("Cargo.lock is missing")?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == "name = \"wasm-bindgen\""
            && let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = \""))
        {
            return Ok(v.trim_end_matches('"').to_owned());
        }
    }
    bail!("Cargo.lock has no wasm-bindgen entry")
}

/// Installs what is missing to build and test the app: the wasm32 target, trunk,
/// wasm-bindgen-cli (the pinned version) and the npm packages (echarts, esbuild, binaryen,
/// axe-core for the accessibility scan).
pub(crate) fn ensure_tools() -> Result<()> {
    let t = Instant::now();
    if !output("rustup", &["target", "list", "--installed"])
        .is_some_and(|o| o.lines().any(|l| l == WASM))
    {
        run("rustup target add wasm32", {
            let mut c = cmd("rustup");
            c.args(["target", "add", WASM]);
            c
        })?;
    }
    if !output("trunk", &["--version"]).is_some_and(|v| v.contains(&format!(" {TRUNK_VERSION}"))) {
        run("install trunk (10–28 min, once)", {
            let mut c = cmd("cargo");
            c.args(["install", "trunk", "--version", TRUNK_VERSION, "--locked"]);
            c
        })?;
    }
    let wb = locked_wasm_bindgen()?;
    let has = |bin: &str| output(bin, &["--version"]).is_some_and(|v| v.contains(&wb));
    if !has("wasm-bindgen") || !has("wasm-bindgen-test-runner") {
        // Without --locked: its own lock pins crates that no longer build with this rustc.
        run("install wasm-bindgen-cli (≈6 min, once)", {
            let mut c = cmd("cargo");
            c.args(["install", "wasm-bindgen-cli", "--version", &wb]);
            c
        })?;
    }
    let npm_ok = [
        "echarts/core.js",
        ".bin/esbuild",
        ".bin/wasm-opt",
        "axe-core/axe.min.js",
    ]
    .iter()
    .all(|p| root().join("node_modules").join(p).exists());
    if !npm_ok {
        run("npm ci (echarts, esbuild, binaryen, axe-core)", {
            let mut c = cmd("npm");
            c.args(["ci", "--no-audit", "--no-fund"]);
            c
        })?;
    }
    eprintln!("    tools ready in {:.1} s", t.elapsed().as_secs_f64());
    Ok(())
}

/// Whether this process runs as root (so it may apt-get).
pub(crate) fn is_root() -> bool {
    output("id", &["-u"]).is_some_and(|o| o.trim() == "0")
}

/// Installs Debian's `packages` (without their recommendations) with apt-get when running as
/// root; otherwise fails saying `missing` and the command to run.
pub(crate) fn apt_install(packages: &[&str], missing: &str) -> Result<()> {
    let list = packages.join(" ");
    if !is_root() {
        bail!("{missing}. Install with:\n  sudo apt-get update && sudo apt-get install -y {list}");
    }
    run("apt-get update", {
        let mut c = cmd("apt-get");
        c.arg("update");
        c
    })?;
    run(&format!("apt-get install {list}"), {
        let mut c = cmd("apt-get");
        c.args(["install", "-y", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive");
        c
    })
}

/// Chromium and chromedriver in `/usr/bin`, installed with apt-get when running as root.
pub(crate) fn ensure_browser() -> Result<()> {
    if Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists() {
        return Ok(());
    }
    apt_install(
        &["chromium", "chromium-driver"],
        "Chromium and chromedriver are missing",
    )
}

/// Firefox ESR, WebKitGTK's WebDriver server (with its MiniBrowser) and Xvfb for its display,
/// installed with apt-get when running as root; geckodriver (the pinned version) with cargo.
pub(crate) fn ensure_other_engines() -> Result<()> {
    let missing: Vec<&str> = [
        ("/usr/bin/firefox-esr", "firefox-esr"),
        ("/usr/bin/WebKitWebDriver", "webkit2gtk-driver"),
        ("/usr/bin/xvfb-run", "xvfb"),
        // xvfb-run needs it; xvfb only recommends it.
        ("/usr/bin/xauth", "xauth"),
    ]
    .iter()
    .filter(|(bin, _)| !Path::new(bin).exists())
    .map(|(_, package)| *package)
    .collect();
    if !missing.is_empty() {
        if !is_root() {
            bail!(
                "{} missing for the Firefox and WebKit tests. Install with:\n  sudo apt-get update && sudo apt-get install -y {}",
                missing.join(", "),
                missing.join(" ")
            );
        }
        run("apt-get update", {
            let mut c = cmd("apt-get");
            c.arg("update");
            c
        })?;
        run(&format!("apt-get install {}", missing.join(" ")), {
            let mut c = cmd("apt-get");
            c.args(["install", "-y"])
                .args(&missing)
                .env("DEBIAN_FRONTEND", "noninteractive");
            c
        })?;
    }
    let geckodriver = cargo_bin().join("geckodriver");
    let has = output(&geckodriver.display().to_string(), &["--version"])
        .is_some_and(|v| v.contains(&format!(" {GECKODRIVER_VERSION}")));
    if !has {
        run("install geckodriver (≈3 min, once)", {
            let mut c = cmd("cargo");
            c.args([
                "install",
                "geckodriver",
                "--version",
                GECKODRIVER_VERSION,
                "--locked",
            ]);
            c
        })?;
    }
    Ok(())
}

/// `trunk build --release` into `dist/`.
pub(crate) fn build_app() -> Result<()> {
    run("trunk build --release", {
        let mut c = cmd("trunk");
        c.args(["build", "--release"]);
        c
    })
}

/// Newest modification time of the files under `paths` (recursively).
fn newest(paths: &[PathBuf]) -> Option<std::time::SystemTime> {
    let mut newest = None;
    let mut stack: Vec<PathBuf> = paths.to_vec();
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            stack.extend(
                std::fs::read_dir(&p)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        } else if let Ok(m) = meta.modified() {
            newest = newest.max(Some(m));
        }
    }
    newest
}

/// Whether `dist/` is newer than every input of the app build.
pub(crate) fn app_is_fresh() -> bool {
    let r = root();
    let inputs = [
        "src",
        "style",
        "public",
        "js",
        "index.html",
        "Trunk.toml",
        "Cargo.toml",
        "Cargo.lock",
        ".cargo/config.toml",
        "package-lock.json",
        "crates/ttft-core",
        "crates/ttft-charts",
        // Trunk's post-build step (the split): a change to it changes the built files.
        "crates/ttft-split",
    ];
    let built = newest(&[r.join("dist")]);
    let sources = newest(&inputs.iter().map(|i| r.join(i)).collect::<Vec<_>>());
    r.join("dist/index.html").exists() && matches!((built, sources), (Some(b), Some(s)) if b > s)
}
