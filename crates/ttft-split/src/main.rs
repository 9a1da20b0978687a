//! Trunk's one `post_build` step (Trunk.toml): splits the studio's wasm at its lazy points, so
//! the first load carries only what the page needs before it is usable, then writes the service
//! worker over the final file list (`js/build-sw.mjs`).
//!
//! Trunk 0.21 cannot split a module, so this does what cargo-leptos does for its `--split`
//! builds, on the files Trunk has staged:
//!
//! 1. `wasm_split_cli_support` reads the module rustc linked (with `--emit-relocs`, see
//!    `.cargo/config.toml`) and the split points `lazy_part!` marks (`src/lazy.rs`, with the
//!    app's `split` feature), and writes a main module, one module per lazy point plus chunks
//!    they share, and the small JavaScript loader the main module imports them through;
//! 2. `wasm-bindgen` binds the main module under Trunk's own (hashed) file names, replacing
//!    the unsplit files Trunk staged (keeping the names `index.html` already points to);
//! 3. `wasm-opt -Oz` shrinks every module (Trunk's own pass is off: `data-wasm-opt="0"`);
//! 4. the lazy modules and the loader get the build's hash in their names, so a browser never
//!    pairs a cached piece of one build with another build's main module;
//! 5. `wasm-parts.json` lists, for each lazy point, the files it loads.
//!
//! A build with no lazy points (the feature off) is left as Trunk staged it, optimized.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The crate whose wasm is split (the root package's binary).
const APP: &str = "ttft-studio";

/// The file (in the build) that lists, for each lazy point, the wasm files it loads.
const PARTS_MANIFEST: &str = "wasm-parts.json";

fn main() -> Result<()> {
    let staging = PathBuf::from(
        std::env::var_os("TRUNK_STAGING_DIR")
            .context("ttft-split runs as trunk's post_build hook (TRUNK_STAGING_DIR is not set)")?,
    );
    let source = std::env::var_os("TRUNK_SOURCE_DIR")
        .map(PathBuf::from)
        .unwrap_or(std::env::current_dir()?);
    let profile = std::env::var("TRUNK_PROFILE").unwrap_or_else(|_| "release".into());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| source.join("target"));
    let linked = target
        .join("wasm32-unknown-unknown")
        .join(&profile)
        .join(format!("{APP}.wasm"));
    let stem = staged_stem(&staging)?;
    let release = profile == "release";
    let work = target.join("wasm-split");
    let pieces = split(&linked, &staging, &stem, &work, release)?;
    for piece in &pieces {
        println!(
            "ttft-split: {} ({} KB)",
            piece.file_name().unwrap_or_default().to_string_lossy(),
            std::fs::metadata(piece)?.len() / 1024
        );
    }
    let status = Command::new("node")
        .arg(source.join("js/build-sw.mjs"))
        .status()
        .context("node (for js/build-sw.mjs) is not on PATH")?;
    if !status.success() {
        bail!("js/build-sw.mjs failed");
    }
    Ok(())
}

/// Trunk's hashed name for the app's files, `ttft-studio-<hash>` (its `.js` and `_bg.wasm`).
fn staged_stem(staging: &Path) -> Result<String> {
    for entry in std::fs::read_dir(staging)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix("_bg.wasm")
            && stem.starts_with(APP)
        {
            return Ok(stem.to_owned());
        }
    }
    bail!(
        "no {APP}*_bg.wasm in {} (is index.html's rust link data-bin=\"{APP}\"?)",
        staging.display()
    )
}

/// Splits `linked` into the staged main module and its lazy pieces; returns every wasm file it
/// wrote into `staging`, the main module first.
fn split(
    linked: &Path,
    staging: &Path,
    stem: &str,
    work: &Path,
    optimize: bool,
) -> Result<Vec<PathBuf>> {
    let main_wasm = staging.join(format!("{stem}_bg.wasm"));
    let input = std::fs::read(linked).with_context(|| {
        format!(
            "reading {} (the module cargo linked for trunk)",
            linked.display()
        )
    })?;
    let build = stem
        .strip_prefix(APP)
        .unwrap_or(stem)
        .trim_start_matches('-');
    let build = if build.is_empty() { "dev" } else { build };
    let link_name = format!("./__wasm_split-{build}.js");
    let main_module = format!("./{stem}.js");
    if work.exists() {
        std::fs::remove_dir_all(work)?;
    }
    std::fs::create_dir_all(work)?;
    let unbound = work.join("main.wasm");
    let split = {
        let mut opts = wasm_split_cli_support::Options::new(&input);
        opts.output_dir = work;
        opts.main_out_path = &unbound;
        opts.link_name = &link_name;
        opts.main_module = &main_module;
        wasm_split_cli_support::transform(opts)
    };
    let split = split
        .map_err(|e| anyhow::anyhow!("{e:#}"))
        .context("splitting the wasm (is it linked with --emit-relocs?)")?;
    if split.split_modules.is_empty() {
        // No lazy points: Trunk's own files stand (its wasm-opt pass is off, so shrink here).
        {
            if optimize {
                wasm_opt(&main_wasm)?;
            }
            return Ok(vec![main_wasm]);
        }
    }
    run(Command::new("wasm-bindgen").args([
        "--target=web",
        "--no-typescript",
        "--keep-lld-exports",
        "--no-demangle",
        &format!("--out-name={stem}"),
        &format!("--out-dir={}", staging.display()),
        &unbound.display().to_string(),
    ]))?;
    let mut loader = std::fs::read_to_string(work.join(&link_name))
        .context("wasm-split wrote no loader script")?;
    let mut written = vec![main_wasm];
    for piece in &split.split_modules {
        let name = piece
            .file_stem()
            .context("a split module without a name")?
            .to_string_lossy();
        let renamed = format!("{name}-{build}.wasm");
        let quoted = format!("\"./{name}.wasm\"");
        if !loader.contains(&quoted) {
            bail!("the loader script does not name {name}.wasm");
        }
        loader = loader.replace(&quoted, &format!("\"./{renamed}\""));
        let dest = staging.join(&renamed);
        std::fs::copy(piece, &dest)?;
        written.push(dest);
    }
    std::fs::write(staging.join(&link_name), loader)?;
    // What each lazy point loads (its own module and the chunks it shares), for the bench and
    // for anyone asking why a part is the size it is.
    let mut parts: Vec<(&String, &Vec<String>)> = split.prefetch_map.iter().collect();
    parts.sort();
    let manifest = parts
        .iter()
        .map(|(part, files)| {
            let files: Vec<String> = files
                .iter()
                .map(|f| format!("\"{f}-{build}.wasm\""))
                .collect();
            format!("  \"{part}\": [{}]", files.join(", "))
        })
        .collect::<Vec<_>>()
        .join(",\n");
    std::fs::write(
        staging.join(PARTS_MANIFEST),
        format!("{{\n{manifest}\n}}\n"),
    )?;
    if optimize {
        for wasm in &written {
            wasm_opt(wasm)?;
        }
    }
    Ok(written)
}

/// `wasm-opt -Oz` in place, with the features rustc's wasm32 target emits.
fn wasm_opt(wasm: &Path) -> Result<()> {
    let path = wasm.display().to_string();
    run(Command::new("wasm-opt").args([
        "-Oz",
        "--enable-bulk-memory",
        "--enable-bulk-memory-opt",
        "--enable-nontrapping-float-to-int",
        "--enable-sign-ext",
        "--enable-mutable-globals",
        "--enable-reference-types",
        "--enable-multivalue",
        &path,
        "-o",
        &path,
    ]))
}

fn run(command: &mut Command) -> Result<()> {
    let program = command.get_program().to_string_lossy().into_owned();
    let status = command
        .status()
        .with_context(|| format!("{program} is not on PATH (cargo xtask setup installs it)"))?;
    if !status.success() {
        bail!("{program} failed ({status})");
    }
    Ok(())
}
