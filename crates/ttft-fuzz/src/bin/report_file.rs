//! AFL++ entry point of the `report_file` target: every input through [`ttft_fuzz::report_file`].

fn main() {
    afl::fuzz!(|data: &[u8]| ttft_fuzz::report_file(data));
}
