//! AFL++ entry point of the `share_link` target: every input through [`ttft_fuzz::share_link`].

fn main() {
    afl::fuzz!(|data: &[u8]| ttft_fuzz::share_link(data));
}
