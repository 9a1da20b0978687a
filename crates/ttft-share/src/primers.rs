//! The primers of r3's second layout: fixed texts the context-mixing models learn before a
//! section (`context.rs`), so that the first bytes of a short link do not each cost a byte.
//! They are part of the format: a link opens only with the primers it was coded with, so
//! changing one needs a new variant byte (`r3.rs`).

use crate::columns::TEXT_SECTION;
use crate::context::Models;

/// What the context-mixing models learn before a second-layout link's header (its JSON,
/// [`crate::columns`]): the header's own shape, with the studio's own defaults and sentences, so
/// that its keys and usual values cost little. Only the studio's words, never a server's; it
/// is part of the format: changing it needs a new layout byte.
const HEADER_PRIMER: &str = concat!(
    r#"{"version":1,"title":"chat · model · 2026-01-01T00:00:00","created_unix_ms":1700000000000.0,"#,
    r#""clock_resolution_ms":0.005,"stamping":"1 stamping worker","endpoint":{"base_url":"http://127.0.0.1:8080","#,
    r#""model":"","dialect":null},"scenario":"chat","settings":{"concurrency":4,"continuous_usage":false,"#,
    r#""custom_prompt":"","extra_body":"","ignore_eos":false,"kind":"chat","levels":"1, 4, 8, 16","max_tokens":256,"#,
    r#""preset":1,"prompt_levels":"100, 500, 1000, 2000","rate_per_s":0.0,"requests":20,"required_keys":"city, days","#,
    r#""rounds":4,"seed":null,"system_prompt":"","temperature":0.0,"timeout_s":60.0,"use_tools":false,"warmup":1},"#,
    r#""thresholds":{"ttft_ms":2000.0,"itl_ms":120.0,"p95_ttft_ms":2000.0},"experience":{"deadlines":"#,
    r#"{"first_token_ms":1000.0,"gap_ms":187.5,"fluid_target":0.9,"fluid_share":0.99},"reading":{"words_per_s":4.0,"#,
    r#""cjk_chars_per_s":6.0,"expected_ttft_ms":1000.0,"min_wait_ms":250.0,"read_reasoning":false}},"#,
    r#""precision_ms":0.1,"requests":20,"groups":[["c=4",4.0]],"strings":[""],"left_out":["server request ids "#,
    r#"and wall-clock send times (they line a run up with server records)","replay text of 15 of 20 requests "#,
    r#"(the reading experience is scored from the word counts kept instead)"],"headline":null,"vantage":"browser","#,
    r#""client_health":{"verdict":{"may_have_added":{"up_to_ms":9.8}},"lag_samples":480,"lag_p50_ms":0.25,"#,
    r#""lag_p99_ms":11.0,"lag_max_ms":41.2,"hidden_ms":0.0,"requests_while_hidden":0,"queue_p99_ms":9.8,"#,
    r#""causes":[{"kind":"connection_queue","up_to_ms":9.8,"sentence":"12 requests waited more than 5.00 ms "#,
    r#"in the browser before being sent (P99 9.8 ms, max 12.1 ms): the browser holds a request while its "#,
    r#"connections to the origin are busy (6 per origin over HTTP/1.1) or being opened. That wait is part "#,
    r#"of their TTFT, not of their ITL, and it is the client's, not the server's.","short":"connection queue: "#,
    r#"P99 9.8 ms before sending"},{"kind":"main_thread_lag","up_to_ms":0.0,"sentence":"The page's main "#,
    r#"thread was busy while requests streamed: its timers fired up to 41.2 ms late (P99 11.0 ms, above the "#,
    r#"16.7 ms of one frame) while 8 requests streamed. Reads were stamped in a worker, so the stamps are "#,
    r#"unaffected (0 ms added); only drawing was delayed.","short":""},{"kind":"hidden_tab","up_to_ms":0.0,"#,
    r#""sentence":"The tab was hidden for 2.0 s while 3 requests streamed: a hidden tab's timers are throttled"#,
    r#"","short":"tab hidden while nothing streamed"}]},"user_agent":"Mozilla/5.0 (X11; Linux x86_64) "#,
    r#"AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36","clients":["browser","locust"]}"#,
);

/// What the models learn before a link's replay text (the text section, since the refined
/// models): everyday English and an assistant's usual openings, a few common Chinese ones,
/// so that the first words of a short replay do not each cost a byte. Generic text written
/// for this, never a server's or the reference endpoint's; part of the format like
/// [`HEADER_PRIMER`].
const TEXT_PRIMER: &str = concat!(
    "Sure, here is a short answer. Of course! I would be happy to help with that. Here are ",
    "the main points, and then an example.\n\n1. **First**, the most important thing is that ",
    "it works for people who use it every day, not only in a test.\n2. **Second**, when you ",
    "compare two options, look at what each one does well and where it falls short.\n\nIn ",
    "other words, there is no single best choice: it depends on what you need, how much time ",
    "you have and what you are willing to give up. For example, a faster way may be less ",
    "accurate, while a more careful one takes longer. The same is true of many things in life ",
    "and in work. If you have any questions about this, let me know and I can explain in more ",
    "detail.\n\nThe question is also about how we think about the problem. We can start with ",
    "what we know, then ask what would change if one of those facts were different. This makes ",
    "it easier to see which parts matter and which do not. It is often better to measure than ",
    "to guess, because the numbers show what really happens, and they can be shared with ",
    "others who were not there.\n\n好的，以下是主要的几点。当然可以，我来解释一下：这个问题的关键在于",
    "我们需要什么，以及时间和成本。",
);

/// What each section of a second-layout payload's models learn first: the header's primer,
/// and with the refined models the text's; the other sections start empty.
pub(crate) fn primers(models: Models) -> Vec<&'static [u8]> {
    let mut primers: Vec<&'static [u8]> = vec![b"", HEADER_PRIMER.as_bytes()];
    if models == Models::Refined {
        primers.resize(TEXT_SECTION + 1, b"");
        primers[TEXT_SECTION] = TEXT_PRIMER.as_bytes();
    }
    primers
}
