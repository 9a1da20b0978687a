//! Peer benchmark clients (vLLM's `vllm bench serve`, `aiperf`, sglang's `bench_serving`) run
//! against the same reference endpoint and compared with its ground truth like the studio.

use std::path::Path;

use anyhow::Result;

/// `ttft-bench ROOT --peers-only`: runs the peers alone and prints their JSON.
pub async fn standalone(_root: &Path) -> Result<()> {
    anyhow::bail!("not written yet")
}
