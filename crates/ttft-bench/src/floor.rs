//! The browser's floor: a probe page with no framework and no parsing (fetch, read,
//! `performance.now()` into a preallocated array) over HTTP/1.1, sharded HTTP/1.1 and HTTP/2.

use anyhow::Result;

/// `ttft-bench ROOT --floor-only`: runs the floor probe alone and prints its JSON.
pub async fn standalone() -> Result<()> {
    anyhow::bail!("not written yet")
}
