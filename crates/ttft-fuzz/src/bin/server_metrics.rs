//! AFL++ entry point of the `server_metrics` target: every input through [`ttft_fuzz::server_metrics`].

fn main() {
    afl::fuzz!(|data: &[u8]| ttft_fuzz::server_metrics(data));
}
