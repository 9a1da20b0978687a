//! AFL++ entry point of the `timeline_file` target: every input through [`ttft_fuzz::timeline_file`].

fn main() {
    afl::fuzz!(|data: &[u8]| ttft_fuzz::timeline_file(data));
}
