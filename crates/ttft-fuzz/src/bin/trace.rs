//! AFL++ entry point of the `trace` target: every input through [`ttft_fuzz::trace`].

fn main() {
    afl::fuzz!(|data: &[u8]| ttft_fuzz::trace(data));
}
