//! AFL++ entry point of the `stream` target: every input through [`ttft_fuzz::stream`].

fn main() {
    afl::fuzz!(|data: &[u8]| ttft_fuzz::stream(data));
}
