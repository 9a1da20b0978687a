//! Result files chosen for import, read as the studio reads them: which names a chosen folder
//! can hold results in ([`looks_like_result_name`]), what each format is called in a notice
//! ([`format_name`]), and the reading of many files at once ([`read_results`]: the files of one
//! folder together, a file that cannot be read named and left out, the rest kept).

use crate::import::{Format, ImportError, import, import_files};
use crate::report::Report;

/// Whether a file of a chosen folder can hold results, by its name: JSON, JSON lines, or no
/// extension (what the core reads; plots and spreadsheets are left unread).
pub fn looks_like_result_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    [".json", ".jsonl", ".ndjson"]
        .iter()
        .any(|ext| name.ends_with(ext))
        || !name.contains('.')
}

/// A file format's name in a notice.
pub fn format_name(f: Format) -> &'static str {
    match f {
        Format::Studio => "studio report",
        Format::Vllm => "vllm bench serve",
        Format::GuideLlm => "GuideLLM",
        Format::AiperfRecords | Format::AiperfRaw => "AIPerf",
        Format::Sglang => "SGLang bench_serving",
        Format::GenaiBench => "genai-bench",
    }
}

/// What reading result files gave: the runs, their formats, and one sentence per file (or
/// set of files) that could not be read, saying what to do.
#[derive(Debug, Default)]
pub struct ReadResults {
    /// The runs read, in the order of the files.
    pub reports: Vec<Report>,
    /// The format of each run.
    pub formats: Vec<Format>,
    /// Why files could not be imported, each naming its file.
    pub errors: Vec<String>,
}

impl ReadResults {
    /// The tools the runs came from, each named once, in the order first read.
    pub fn tools(&self) -> Vec<&'static str> {
        let mut tools: Vec<&'static str> = Vec::new();
        for t in self.formats.iter().map(|f| format_name(*f)) {
            if !tools.contains(&t) {
                tools.push(t);
            }
        }
        tools
    }

    fn keep(&mut self, read: Vec<(Format, Vec<Report>)>) {
        for (format, reports) in read {
            self.formats.extend(reports.iter().map(|_| format));
            self.reports.extend(reports);
        }
    }

    fn failed(&mut self, name: &str, e: &ImportError) {
        self.errors.push(format!("could not import {name}: {e}"));
    }

    /// One file on its own; one whose name the core passes over (`run.txt`) is read by its
    /// content, as a single file always was.
    fn read_one(&mut self, (name, text): (&str, &str)) {
        match import_files(&[(name, text)]) {
            Ok(read) => self.keep(read),
            Err(ImportError::InFile { name, source }) => self.failed(&name, &source),
            Err(ImportError::Empty) if !looks_like_result_name(name) => match import(text) {
                Ok(read) => self.keep(vec![read]),
                Err(e) => self.failed(name, &e),
            },
            // Says nothing on its own (AIPerf's summary of its warm-up).
            Err(ImportError::Empty) => {}
            Err(e) => self.failed(name, &e),
        }
    }
}

/// Reads result files, each as `(path, text)`, through the core: the files of one folder
/// together ([`import_files`]: a genai-bench experiment's files become one run, AIPerf's
/// per-request export takes its aggregate export's summary along), files of different folders
/// apart. A file that cannot be read is named and left out, and the rest of its folder read
/// again without it; when a folder fails as a whole, its files are read one by one, so what can
/// be imported is kept.
pub fn read_results(files: &[(String, String)]) -> ReadResults {
    let mut out = ReadResults::default();
    let mut folders: Vec<(&str, Vec<(&str, &str)>)> = Vec::new();
    for (path, text) in files {
        let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
        match folders.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, group)) => group.push((path, text)),
            None => folders.push((dir, vec![(path, text)])),
        }
    }
    for (_, mut group) in folders {
        while !group.is_empty() {
            match import_files(&group) {
                Ok(read) => out.keep(read),
                // One file failed: named, left out, the others read again.
                Err(ImportError::InFile { name, source }) => {
                    out.failed(&name, &source);
                    group.retain(|(n, _)| *n != name);
                    continue;
                }
                // Files that do not stand together (a genai-bench folder without its scenario
                // files, AIPerf's aggregate export alone) or that the core passed over by
                // their names: each on its own.
                Err(_) => group.iter().for_each(|one| out.read_one(*one)),
            }
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::EndpointInfo;

    fn studio_report(title: &str) -> String {
        Report::new(title, EndpointInfo::default(), "chat").to_json_pretty()
    }

    #[test]
    fn a_folder_keeps_json_json_lines_and_extensionless_files() {
        for name in [
            "exp/scenario.json",
            "a/b/profile_export.JSONL",
            "x.ndjson",
            "exp/results",
        ] {
            assert!(looks_like_result_name(name), "{name}");
        }
        for name in ["exp/plot.png", "exp/summary.xlsx", "logs/run.log"] {
            assert!(!looks_like_result_name(name), "{name}");
        }
    }

    #[test]
    fn formats_are_named_as_their_tools_call_themselves() {
        assert_eq!(format_name(Format::Studio), "studio report");
        assert_eq!(
            format_name(Format::AiperfRaw),
            format_name(Format::AiperfRecords)
        );
        assert_eq!(format_name(Format::GenaiBench), "genai-bench");
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_and_the_rest_kept() {
        let files = vec![
            ("one.json".to_owned(), studio_report("first")),
            ("broken.json".to_owned(), "{not json".to_owned()),
            ("two.json".to_owned(), studio_report("second")),
        ];
        let read = read_results(&files);
        let titles: Vec<&str> = read.reports.iter().map(|r| r.title.as_str()).collect();
        assert_eq!(titles, ["first", "second"]);
        assert_eq!(read.formats, [Format::Studio, Format::Studio]);
        assert_eq!(read.tools(), ["studio report"]);
        assert_eq!(read.errors.len(), 1, "{:?}", read.errors);
        assert!(read.errors[0].starts_with("could not import broken.json"));
    }

    #[test]
    fn a_single_file_is_read_by_its_content_whatever_its_name() {
        let files = vec![("run.txt".to_owned(), studio_report("by content"))];
        let read = read_results(&files);
        assert_eq!(read.reports.len(), 1, "{:?}", read.errors);
        assert_eq!(read.reports[0].title, "by content");
    }

    #[test]
    fn nothing_chosen_reads_nothing() {
        let read = read_results(&[]);
        assert!(read.reports.is_empty() && read.errors.is_empty());
    }
}
