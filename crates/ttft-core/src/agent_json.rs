//! Agent JSON: when does the streamed text first form a complete, valid JSON value?
//!
//! [`JsonTracker`] is fed text fragments with their arrival times. It scans incrementally
//! (strings, escapes and nesting depth), notes when the first `{` or `[` arrived, and each time
//! the nesting closes it validates the candidate with `serde_json`. Text around the value (code
//! fences, prose) is tolerated; if a candidate is invalid the scan restarts after it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the tracker found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JsonProgress {
    /// Arrival time of the first `{` or `[` (ms).
    pub first_bracket_at: Option<f64>,
    /// Arrival time of the fragment that completed the first valid JSON value.
    pub valid_at: Option<f64>,
    /// The value found, compact.
    pub value: Option<String>,
    /// Required keys missing from the value (top-level object keys).
    pub missing_keys: Vec<String>,
    /// Candidates that closed but were not valid JSON.
    pub invalid_candidates: u32,
}

/// Incremental JSON completion tracker.
#[derive(Debug, Clone, Default)]
pub struct JsonTracker {
    text: String,
    scan_pos: usize,
    start: Option<usize>,
    depth: u32,
    in_string: bool,
    escape: bool,
    required: Vec<String>,
    progress: JsonProgress,
}

impl JsonTracker {
    /// A tracker that also checks for `required` top-level keys.
    pub fn new(required: &[String]) -> Self {
        Self {
            required: required.to_vec(),
            ..Self::default()
        }
    }

    /// The result so far.
    pub fn progress(&self) -> &JsonProgress {
        &self.progress
    }

    /// Whether a valid value has been found.
    pub fn is_complete(&self) -> bool {
        self.progress.valid_at.is_some()
    }

    /// Feeds one fragment that arrived at `at`.
    pub fn push(&mut self, at: f64, fragment: &str) {
        if self.is_complete() {
            return;
        }
        self.text.push_str(fragment);
        let bytes = self.text.as_bytes();
        let mut i = self.scan_pos;
        while i < bytes.len() {
            let b = bytes[i];
            match self.start {
                None => {
                    if b == b'{' || b == b'[' {
                        self.start = Some(i);
                        self.depth = 1;
                        self.in_string = false;
                        self.escape = false;
                        self.progress.first_bracket_at.get_or_insert(at);
                    }
                }
                Some(start) => {
                    if self.in_string {
                        if self.escape {
                            self.escape = false;
                        } else if b == b'\\' {
                            self.escape = true;
                        } else if b == b'"' {
                            self.in_string = false;
                        }
                    } else {
                        match b {
                            b'"' => self.in_string = true,
                            b'{' | b'[' => self.depth += 1,
                            b'}' | b']' => {
                                self.depth -= 1;
                                if self.depth == 0 {
                                    let candidate = &self.text[start..=i];
                                    match serde_json::from_str::<Value>(candidate) {
                                        Ok(v) => {
                                            self.progress.valid_at = Some(at);
                                            self.progress.missing_keys = self
                                                .required
                                                .iter()
                                                .filter(|k| v.get(k.as_str()).is_none())
                                                .cloned()
                                                .collect();
                                            self.progress.value = Some(v.to_string());
                                            self.scan_pos = i + 1;
                                            return;
                                        }
                                        Err(_) => {
                                            self.progress.invalid_candidates += 1;
                                            self.start = None;
                                            i = start + 1;
                                            continue;
                                        }
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            i += 1;
        }
        self.scan_pos = bytes.len();
    }
}
