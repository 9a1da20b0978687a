//! Mounts the studio.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(ttft_studio::App);
}
