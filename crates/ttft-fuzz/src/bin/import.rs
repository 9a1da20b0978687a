//! AFL++ entry point of the `import` target: every input through [`ttft_fuzz::import`].

fn main() {
    afl::fuzz!(|data: &[u8]| ttft_fuzz::import(data));
}
