//! The import-cycle check (`cargo xtask cycles`, and a step of `cargo xtask test`): within each
//! crate of the workspace no file may depend on itself around a loop of other files, and the
//! core's modules keep to their layers ([`CORE_LAYERS`]).
//!
//! The crates are every library, binary and example of the root package and of each
//! `crates/*` (`src/lib.rs`, `src/main.rs`, `src/bin/*`, `examples/*`; not tests or benches).
//! Each is read from its source text, not through the compiler:
//!
//! - the module tree follows `mod x;` to `x.rs` or `x/mod.rs` beside a `mod.rs`-like file
//!   (`lib.rs`, `main.rs`, `mod.rs`, an example) or under `foo/` for `foo.rs`; an inline
//!   `mod x { … }` is part of its file;
//! - a file A depends on a file B when A names a path that resolves into B: every path of a
//!   `use` tree (groups, `self`, renames, globs; `pub use` re-exports alike) and every path in
//!   code starting with `crate`, `$crate`, `self`, `super`, a child module's name or a module
//!   brought in by a `use` (`use crate::report; … report::file::read(…)`). A path resolves to
//!   the deepest module along it that exists (`crate::report::file::read_json` → the file of
//!   `report::file`); a path into another crate (`ttft_core::…`, `::std::…`) is no edge;
//! - a file that invokes a `macro_rules!` macro (`lazy_part! { … }`, `crate::m!(…)`) depends on
//!   the file defining it, when one file of the crate defines a macro of that name;
//! - comments, strings and char literals are blanked first, and items under `#[cfg(test)]`
//!   are skipped whole (tests may import anything).
//!
//! A cycle is a strongly connected set of two or more files; each is printed with its files,
//! one shortest loop through it, and the paths that make each of its edges. A file's use of
//! an ancestor module (a child's `super::Helper`, `crate::ChartSpec` from anywhere) is left
//! out of the cycles, as Rust's own module system has it: a child module is part of its
//! parent, which declares it and may re-export what it defines; the loops that matter run
//! between modules none of which contains the other. (The layer rule sees every edge.)

mod lex;
mod scan;

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use scan::{Ref, RefKind, Scan};

/// The layers of `crates/ttft-core`, bottom to top: each a name and the core's top-level
/// modules in it (`"stats"` for `src/stats.rs` or `src/stats/`, with every file below it). A
/// file may import from its own layer and the layers below, never from a layer above.
///
/// Empty, the rule is off. To turn it on, put every top-level module of the core (each `mod`
/// of its `lib.rs`) in exactly one layer, for example:
///
/// ```text
/// pub(crate) const CORE_LAYERS: &[(&str, &[&str])] = &[
///     ("primitives", &["stats", "format", "sse"]),
///     ("records", &["request", "timeline", "metrics"]),
///     ("reports", &["report", "compare", "diagnosis"]),
/// ];
/// ```
///
/// Once it is on, a module the table leaves out, one it names twice and a name that is no
/// module all fail the check, so the table cannot fall behind the code. The crate root
/// (`lib.rs`) is in no layer: it may re-export from any layer, but a layered file may not
/// import through it (`crate::Report` is `lib.rs` to the check, which cannot see which layer
/// it re-exports from): it names the module (`crate::report::Report`).
pub(crate) const CORE_LAYERS: &[(&str, &[&str])] = &[
    // Bytes and times in, a request's events and figures out; plans of what to send.
    (
        "measurement",
        &[
            "stats",
            "uncertainty",
            "format",
            "finding",
            "sse",
            "dialect",
            "openers",
            "agent_json",
            "request",
            "capture",
            "timeline",
            "raw",
            "metrics",
            "experience",
            "prometheus",
            "server_metrics",
            "scenario",
            "arrivals",
            "trace",
            "paint",
        ],
    ),
    // The report model: data, construction and validation, nothing that analyses it.
    ("schema", &["report"]),
    // Functions of the schema: statistics, scores, objectives, findings, comparisons.
    (
        "analysis",
        &[
            "run_stats",
            "run_intervals",
            "differences",
            "record_experience",
            "slo",
            "client_health",
            "compare",
            "pairing",
            "review",
            "probe",
            "diagnosis",
            "first_token",
            "house_openers",
            "calibration",
            "roofline",
            "schedule",
            "time_slices",
            "saturation",
            "saturation_guard",
        ],
    ),
    // Files and formats: other tools' results, timeline files, llm-d, the locustfile, the
    // summary export; names of runs and files; what storage can hold.
    (
        "io",
        &[
            "import",
            "result_files",
            "timeline_file",
            "llmd",
            "locust",
            "naming",
            "quota",
            "summary_file",
        ],
    ),
];

/// The crate [`CORE_LAYERS`] is of: its root file, relative to the workspace root.
const CORE_ROOT: &str = "crates/ttft-core/src/lib.rs";

/// Checks every crate under `root` for import cycles and the core for layer violations,
/// printing each; fails when there is any.
pub(crate) fn check(root: &Path) -> Result<()> {
    check_with(root, CORE_ROOT, CORE_LAYERS, false)
}

/// `cargo xtask cycles [--edges]`: the check; `--edges` first prints every file → file edge of
/// every crate (what a layer table is drawn from).
pub(crate) fn command(root: &Path, args: &[String]) -> Result<()> {
    match args {
        [] => check(root),
        [a] if a == "--edges" => check_with(root, CORE_ROOT, CORE_LAYERS, true),
        _ => bail!("usage: cargo xtask cycles [--edges]"),
    }
}

/// [`check`] with the layers of the crate whose root file is `layered` given, printing every
/// edge first when `edges`.
fn check_with(root: &Path, layered: &str, layers: &[(&str, &[&str])], edges: bool) -> Result<()> {
    let roots = crate_roots(root)?;
    let (mut files, mut cycles, mut violations) = (0, 0, 0);
    let mut layered_seen = false;
    for r in &roots {
        let label = relative(root, r);
        let krate = Crate::load(r).with_context(|| format!("reading the crate of {label}"))?;
        files += krate.files.len();
        let graph = krate.graph();
        if edges {
            for (&(from, to), paths) in &graph {
                println!(
                    "{label}: {} -> {}: {}",
                    krate.files[from].name,
                    krate.files[to].name,
                    evidence(paths)
                );
            }
        }
        for scc in krate.cycles(&krate.without_ancestors(&graph)) {
            cycles += 1;
            eprint!("{}", krate.describe_cycle(&label, &scc, &graph));
        }
        if label == layered {
            layered_seen = true;
            let found = layer_violations(&krate, &graph, layers)
                .with_context(|| format!("the layer table of {label} (CORE_LAYERS)"))?;
            for &(from, to) in &found {
                eprintln!(
                    "    {label}: layer violation: {} ({}) -> {} ({}): {}",
                    krate.files[from].name,
                    layer_name(&krate, layers, from),
                    krate.files[to].name,
                    layer_name(&krate, layers, to),
                    evidence(&graph[&(from, to)])
                );
            }
            violations += found.len();
        }
    }
    if !layers.is_empty() && !layered_seen {
        bail!("the layers are of {layered}, which is no crate's root file (CORE_ROOT)");
    }
    if cycles == 0 && violations == 0 {
        eprintln!(
            "    no import cycles in {} crates ({files} files){}",
            roots.len(),
            if layers.is_empty() {
                ""
            } else {
                ", the core keeps to its layers"
            }
        );
        return Ok(());
    }
    bail!(
        "{cycles} import cycle(s) and {violations} layer violation(s) (break each cycle: move what both sides need below them, or pass it in)"
    )
}

/// The root file of every library, binary and example of the root package and of each
/// package under `crates/`, in order.
fn crate_roots(root: &Path) -> Result<Vec<PathBuf>> {
    let mut packages: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .context("no crates/ folder")?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    packages.sort();
    packages.insert(0, root.to_path_buf());
    let mut out = Vec::new();
    for p in packages {
        out.extend(
            ["src/lib.rs", "src/main.rs"]
                .iter()
                .map(|f| p.join(f))
                .filter(|f| f.is_file()),
        );
        for dir in ["src/bin", "examples"] {
            let Ok(entries) = std::fs::read_dir(p.join(dir)) else {
                continue;
            };
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter_map(|e| {
                    if e.is_dir() {
                        Some(e.join("main.rs")).filter(|m| m.is_file())
                    } else {
                        (e.extension().is_some_and(|x| x == "rs")).then_some(e)
                    }
                })
                .collect();
            found.sort();
            out.extend(found);
        }
    }
    Ok(out)
}

/// `path` relative to `base`, with `/` separators.
fn relative(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// One crate: its files and its module tree.
struct Crate {
    files: Vec<File>,
    /// Every module (inline ones too), by its path from the crate root.
    modules: BTreeMap<Vec<String>, Module>,
}

/// A file of a crate.
struct File {
    /// Relative to the folder of the crate's root file (`report/mod.rs`).
    name: String,
    /// The module it is (`["report"]`).
    module: Vec<String>,
    scan: Scan,
}

impl File {
    /// The module a path of this file is named in.
    fn scope(&self, r: &Ref) -> Vec<String> {
        self.module.iter().chain(&r.within).cloned().collect()
    }
}

/// A module: the file it is in, and its child modules' names.
#[derive(Default)]
struct Module {
    file: usize,
    children: BTreeSet<String>,
}

/// The modules a name stands for in a module (`use crate::report;` → `report`), by module.
type Aliases = BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>;

/// File → file edges, each with the paths that make it (as written, and their lines).
type Graph = BTreeMap<(usize, usize), BTreeMap<String, Vec<usize>>>;

impl Crate {
    /// Reads the crate whose root file is `root_file`, following its `mod` declarations.
    fn load(root_file: &Path) -> Result<Crate> {
        let base = root_file.parent().context("a root file has a folder")?;
        let mut krate = Crate {
            files: Vec::new(),
            modules: BTreeMap::new(),
        };
        let mut queue = vec![(root_file.to_path_buf(), Vec::<String>::new(), true)];
        let mut missing = Vec::new();
        while let Some((path, module, mod_rs)) = queue.pop() {
            let src = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let scan = scan::scan(&lex::tokens(&lex::strip(&src)));
            let name = relative(base, &path);
            if let Some(line) = scan.path_attrs.first() {
                bail!(
                    "{name}:{line}: a #[path] attribute, which the cycle check does not follow (give the module its usual file)"
                );
            }
            let index = krate.files.len();
            krate.modules.entry(module.clone()).or_default().file = index;
            // Where the files of its child modules are.
            let dir = if mod_rs {
                path.parent().context("a file has a folder")?.to_path_buf()
            } else {
                path.with_extension("")
            };
            for d in &scan.mods {
                let parent: Vec<String> = module.iter().chain(&d.within).cloned().collect();
                let mut child = parent.clone();
                child.push(d.name.clone());
                krate
                    .modules
                    .entry(parent)
                    .or_default()
                    .children
                    .insert(d.name.clone());
                if d.inline {
                    krate.modules.entry(child).or_default().file = index;
                    continue;
                }
                let dir = d.within.iter().fold(dir.clone(), |p, w| p.join(w));
                let flat = dir.join(format!("{}.rs", d.name));
                let nested = dir.join(&d.name).join("mod.rs");
                if flat.is_file() {
                    queue.push((flat, child, false));
                } else if nested.is_file() {
                    queue.push((nested, child, true));
                } else {
                    missing.push(format!(
                        "{name}:{}: `mod {}` is neither {} nor {}",
                        d.line,
                        d.name,
                        relative(base, &flat),
                        relative(base, &nested)
                    ));
                }
            }
            krate.files.push(File { name, module, scan });
        }
        if !missing.is_empty() {
            bail!(
                "modules whose file the cycle check cannot find:\n      {}",
                missing.join("\n      ")
            );
        }
        Ok(krate)
    }

    /// The module a path named in `scope` resolves to (the deepest module along it that
    /// exists), and whether the whole path is that module; `None` for a path into another
    /// crate, a local name or a type's items (`Self::x`, `Vec::new`).
    fn resolve(
        &self,
        aliases: &Aliases,
        scope: &[String],
        segs: &[String],
    ) -> Option<(Vec<String>, bool)> {
        let first = segs.first()?;
        let (mut at, mut rest) = match first.as_str() {
            "crate" => (Vec::new(), &segs[1..]),
            "self" => (scope.to_vec(), &segs[1..]),
            "super" => (scope.to_vec(), segs),
            name if self.modules.get(scope)?.children.contains(name) => {
                let mut at = scope.to_vec();
                at.push(name.to_owned());
                (at, &segs[1..])
            }
            name => (aliases.get(scope)?.get(name)?.clone(), &segs[1..]),
        };
        while let Some((s, tail)) = rest.split_first()
            && s == "super"
        {
            at.pop()?;
            rest = tail;
        }
        for s in rest {
            if !self.modules.get(&at)?.children.contains(s) {
                return Some((at, false));
            }
            at.push(s.clone());
        }
        Some((at, true))
    }

    /// The names that `use` declarations bring in for modules, followed through each other
    /// (`use crate::a; use a::b;`) and through globs (`use super::*` brings in the parent's
    /// child modules and the modules it has brought in). An explicit name wins over a glob's.
    fn aliases(&self) -> Aliases {
        let mut aliases = Aliases::new();
        loop {
            let mut changed = false;
            for f in &self.files {
                for r in &f.scan.refs {
                    let RefKind::Use { name, glob } = &r.kind else {
                        continue;
                    };
                    let scope = f.scope(r);
                    let Some((target, true)) = self.resolve(&aliases, &scope, &r.segs) else {
                        continue;
                    };
                    let mut found: Vec<(String, Vec<String>)> = Vec::new();
                    if *glob {
                        for c in &self.modules[&target].children {
                            let mut m = target.clone();
                            m.push(c.clone());
                            found.push((c.clone(), m));
                        }
                        if let Some(theirs) = aliases.get(&target) {
                            found.extend(theirs.iter().map(|(n, m)| (n.clone(), m.clone())));
                        }
                    } else if let Some(n) = name {
                        found.push((n.clone(), target));
                    }
                    let mine = aliases.entry(scope).or_default();
                    for (n, m) in found {
                        if let Entry::Vacant(e) = mine.entry(n) {
                            e.insert(m);
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                return aliases;
            }
        }
    }

    /// The crate's file → file edges (a file naming itself is none).
    fn graph(&self) -> Graph {
        let aliases = self.aliases();
        // Each macro name defined in one file only, and that file.
        let mut defined: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
        for (i, f) in self.files.iter().enumerate() {
            for m in &f.scan.macros {
                defined.entry(m).or_default().insert(i);
            }
        }
        let macro_file = |name: &str| -> Option<usize> {
            let files = defined.get(name).filter(|f| f.len() == 1)?;
            files.first().copied()
        };
        let mut graph = Graph::new();
        for (from, f) in self.files.iter().enumerate() {
            for r in &f.scan.refs {
                let by_macro = (r.kind == RefKind::Macro)
                    .then(|| macro_file(r.segs.last()?))
                    .flatten();
                let to = match by_macro {
                    Some(to) => to,
                    None => {
                        let Some((module, _)) = self.resolve(&aliases, &f.scope(r), &r.segs) else {
                            continue;
                        };
                        self.modules[&module].file
                    }
                };
                if to != from {
                    graph
                        .entry((from, to))
                        .or_default()
                        .entry(r.text())
                        .or_default()
                        .push(r.line);
                }
            }
        }
        graph
    }

    /// `graph` without the edges from a file to a module that contains it (its parent, the
    /// crate root, …): a child module's use of what its ancestors define.
    fn without_ancestors(&self, graph: &Graph) -> Graph {
        graph
            .iter()
            .filter(|((from, to), _)| {
                let (inner, outer) = (&self.files[*from].module, &self.files[*to].module);
                !(outer.len() < inner.len() && inner.starts_with(outer))
            })
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }

    /// The strongly connected components of two or more files, each in file-name order, in
    /// order of their first files.
    fn cycles(&self, graph: &Graph) -> Vec<Vec<usize>> {
        let mut found = strong_components(self.files.len(), graph);
        for scc in &mut found {
            scc.sort_by(|&a, &b| self.files[a].name.cmp(&self.files[b].name));
        }
        found.sort_by(|a, b| self.files[a[0]].name.cmp(&self.files[b[0]].name));
        found
    }

    /// A cycle printed: its files, a shortest loop through the first, and its edges.
    fn describe_cycle(&self, label: &str, scc: &[usize], graph: &Graph) -> String {
        let names = |fs: &[usize]| -> Vec<&str> {
            fs.iter().map(|&f| self.files[f].name.as_str()).collect()
        };
        let mut out = format!(
            "    {label}: a cycle of {} files: {}\n",
            scc.len(),
            names(scc).join(", ")
        );
        let ring = shortest_loop(scc, graph);
        out.push_str(&format!("      for one: {}\n", names(&ring).join(" -> ")));
        for (&(from, to), paths) in graph {
            if scc.contains(&from) && scc.contains(&to) {
                out.push_str(&format!(
                    "      {} -> {}: {}\n",
                    self.files[from].name,
                    self.files[to].name,
                    evidence(paths)
                ));
            }
        }
        out
    }
}

/// The paths that make an edge: `crate::b::C (line 3), super::d (lines 7, 9)`.
fn evidence(paths: &BTreeMap<String, Vec<usize>>) -> String {
    paths
        .iter()
        .map(|(p, lines)| {
            let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
            let s = if lines.len() == 1 { "" } else { "s" };
            format!("{p} (line{s} {})", lines.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The strongly connected components of two or more nodes of `graph` (Tarjan).
fn strong_components(n: usize, graph: &Graph) -> Vec<Vec<usize>> {
    struct Tarjan {
        adj: Vec<Vec<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for k in 0..self.adj[v].len() {
                let w = self.adj[v][k];
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut adj = vec![Vec::new(); n];
    for &(from, to) in graph.keys() {
        adj[from].push(to);
    }
    let mut t = Tarjan {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.found
}

/// A shortest loop through the first file of a component (breadth first, within it), that
/// file at both ends.
fn shortest_loop(scc: &[usize], graph: &Graph) -> Vec<usize> {
    let start = scc[0];
    let mut before: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &(from, to) in graph.keys() {
            if from != v || !scc.contains(&to) {
                continue;
            }
            if to == start {
                let mut ring = vec![start, v];
                let mut at = v;
                while at != start {
                    at = before[&at];
                    ring.push(at);
                }
                ring.reverse();
                return ring;
            }
            if let Entry::Vacant(e) = before.entry(to) {
                e.insert(v);
                queue.push_back(to);
            }
        }
    }
    vec![start]
}

/// The layer of a file's top-level module in `layers`, if any.
fn layer_of(krate: &Crate, layers: &[(&str, &[&str])], file: usize) -> Option<usize> {
    let top = krate.files[file].module.first()?;
    layers
        .iter()
        .position(|(_, mods)| mods.contains(&top.as_str()))
}

fn layer_name(krate: &Crate, layers: &[(&str, &[&str])], file: usize) -> String {
    match layer_of(krate, layers, file) {
        Some(k) => format!("layer {}", layers[k].0),
        None if krate.files[file].module.is_empty() => {
            "the crate root: name the module instead".to_owned()
        }
        None => "no layer".to_owned(),
    }
}

/// The edges from a file to a file of a higher layer, or from a layered file to the crate
/// root (through which no layer can be seen). Fails when the table names a module the
/// crate does not have, names one twice or leaves one of its top-level modules out.
fn layer_violations(
    krate: &Crate,
    graph: &Graph,
    layers: &[(&str, &[&str])],
) -> Result<Vec<(usize, usize)>> {
    if layers.is_empty() {
        return Ok(Vec::new());
    }
    let top = &krate.modules[&Vec::new()].children;
    let mut listed = BTreeSet::new();
    for (layer, mods) in layers {
        for m in *mods {
            if !top.contains(*m) {
                bail!("layer {layer} names `{m}`, which is no top-level module of the crate");
            }
            if !listed.insert(*m) {
                bail!("`{m}` is in two layers");
            }
        }
    }
    let left_out: Vec<&str> = top
        .iter()
        .map(String::as_str)
        .filter(|m| !listed.contains(m))
        .collect();
    if !left_out.is_empty() {
        bail!("modules in no layer: {}", left_out.join(", "));
    }
    Ok(graph
        .keys()
        .filter(
            |&&(from, to)| match (layer_of(krate, layers, from), layer_of(krate, layers, to)) {
                (Some(a), Some(b)) => a < b,
                (Some(_), None) => krate.files[to].module.is_empty(),
                (None, _) => false,
            },
        )
        .copied()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::Tree;

    /// The crate of `lib.rs` among `files` (relative to its `src/`), read.
    fn read(name: &str, files: &[(&str, &str)]) -> (Crate, Graph) {
        let files: Vec<(String, &str)> = files
            .iter()
            .map(|(f, t)| (format!("src/{f}"), *t))
            .collect();
        let files: Vec<(&str, &str)> = files.iter().map(|(f, t)| (f.as_str(), *t)).collect();
        let tree = Tree::new(name, &files);
        let krate = Crate::load(&tree.0.join("src/lib.rs")).unwrap();
        let graph = krate.graph();
        (krate, graph)
    }

    /// The cycles of the crate of `lib.rs` among `files`, by file name.
    fn cycles_of(name: &str, files: &[(&str, &str)]) -> Vec<Vec<String>> {
        let (krate, graph) = read(name, files);
        krate
            .cycles(&krate.without_ancestors(&graph))
            .iter()
            .map(|c| c.iter().map(|&f| krate.files[f].name.clone()).collect())
            .collect()
    }

    /// Its edges: `a.rs -> b.rs: crate::b::B (line 1)`.
    fn edges_of(name: &str, files: &[(&str, &str)]) -> Vec<String> {
        let (krate, graph) = read(name, files);
        let mut edges: Vec<String> = graph
            .iter()
            .map(|(&(a, b), paths)| {
                format!(
                    "{} -> {}: {}",
                    krate.files[a].name,
                    krate.files[b].name,
                    evidence(paths)
                )
            })
            .collect();
        edges.sort();
        edges
    }

    #[test]
    fn a_cycle_through_use_declarations() {
        let files = [
            ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("a.rs", "use crate::b::B;\npub struct A;\n"),
            ("b.rs", "pub(crate) use crate::a::A;\npub struct B;\n"),
            ("c.rs", "use crate::a::A;\n"),
        ];
        assert_eq!(cycles_of("use", &files), [["a.rs", "b.rs"]]);
        assert_eq!(
            edges_of("use-edges", &files),
            [
                "a.rs -> b.rs: crate::b::B (line 1)",
                "b.rs -> a.rs: crate::a::A (line 1)",
                "c.rs -> a.rs: crate::a::A (line 1)",
            ]
        );
    }

    #[test]
    fn a_cycle_through_a_path_in_code() {
        let files = [
            ("lib.rs", "mod a;\nmod b;\n"),
            (
                "a.rs",
                "pub struct A;\npub fn f() {\n    crate::b::g();\n}\n",
            ),
            ("b.rs", "pub fn g() -> Option<crate::a::A> {\n    None\n}\n"),
        ];
        assert_eq!(cycles_of("code", &files), [["a.rs", "b.rs"]]);
    }

    #[test]
    fn a_cycle_through_super_between_siblings() {
        let files = [
            ("lib.rs", "pub mod p;\n"),
            ("p/mod.rs", "mod x;\nmod y;\n"),
            ("p/x.rs", "use super::y::Y;\npub struct X;\n"),
            (
                "p/y.rs",
                "pub struct Y;\nfn f() {\n    let _ = super::x::X;\n}\n",
            ),
        ];
        assert_eq!(cycles_of("super", &files), [["p/x.rs", "p/y.rs"]]);
    }

    #[test]
    fn a_cycle_through_a_grouped_use_and_a_glob() {
        let files = [
            ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
            (
                "a.rs",
                "use crate::{\n    c::C,\n    b::{self, inner::{B as Bee}},\n};\n",
            ),
            (
                "b.rs",
                "use crate::a::*;\npub mod inner {\n    pub struct B;\n}\n",
            ),
            ("c.rs", "pub struct C;\n"),
        ];
        assert_eq!(cycles_of("group", &files), [["a.rs", "b.rs"]]);
        assert_eq!(
            edges_of("group-edges", &files),
            [
                "a.rs -> b.rs: crate::b (line 1), crate::b::inner::B as Bee (line 1)",
                "a.rs -> c.rs: crate::c::C (line 1)",
                "b.rs -> a.rs: crate::a::* (line 1)",
            ]
        );
    }

    #[test]
    fn test_code_is_ignored_and_what_follows_it_is_not() {
        let files = [
            ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("a.rs", "use crate::b::B;\npub fn f() {}\n"),
            (
                "b.rs",
                "pub struct B;\n#[cfg(test)]\nmod tests {\n    use crate::a::*;\n    #[test]\n    fn t() {\n        crate::a::f();\n    }\n}\nuse crate::c::C;\n",
            ),
            (
                "c.rs",
                "pub struct C;\nfn g() {\n    let _ = crate::b::B;\n}\n",
            ),
        ];
        assert_eq!(cycles_of("cfg-test", &files), [["b.rs", "c.rs"]]);
    }

    #[test]
    fn paths_in_strings_comments_and_after_char_literals_are_ignored() {
        let files = [
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::B;\npub struct A;\n"),
            (
                "b.rs",
                "pub struct B;\n// crate::a::A\n/* use crate::a::A; */\nconst Q: char = '\"';\nconst S: &str = \"crate::a::A\";\nconst R: &str = r#\"use crate::a::A;\" \"#;\nfn f<'a>(x: &'a str) -> &'a str {\n    x\n}\n",
            ),
        ];
        assert_eq!(cycles_of("strings", &files), Vec::<Vec<String>>::new());
        assert_eq!(
            edges_of("strings-edges", &files),
            ["a.rs -> b.rs: crate::b::B (line 1)"]
        );
    }

    #[test]
    fn a_childs_use_of_its_parent_is_no_cycle_but_siblings_through_it_are() {
        let files = [
            ("lib.rs", "pub mod p;\n"),
            ("p.rs", "mod x;\npub use x::X;\npub struct Helper;\n"),
            ("p/x.rs", "use super::Helper;\npub struct X;\n"),
        ];
        assert!(cycles_of("reexport", &files).is_empty());
        let siblings = [
            ("lib.rs", "pub mod p;\npub struct Root;\n"),
            ("p.rs", "mod x;\nmod y;\n"),
            (
                "p/x.rs",
                "use super::y::Y;\nuse crate::Root;\npub struct X;\n",
            ),
            (
                "p/y.rs",
                "pub struct Y;\nfn f() {\n    let _ = super::x::X;\n}\n",
            ),
        ];
        assert_eq!(cycles_of("siblings", &siblings), [["p/x.rs", "p/y.rs"]]);
        assert_eq!(
            edges_of("reexport-edges", &files),
            [
                "p.rs -> p/x.rs: x::X (line 2)",
                "p/x.rs -> p.rs: super::Helper (line 1)",
            ]
        );
    }

    #[test]
    fn relative_paths_and_module_aliases_are_followed() {
        let files = [
            ("lib.rs", "mod a;\nmod c;\nuse a::A;\npub struct Root;\n"),
            (
                "a.rs",
                "use crate::c as cee;\npub struct A;\nfn f() {\n    cee::d::g();\n    let _ = crate::Root;\n}\n",
            ),
            ("c.rs", "pub mod d;\n"),
            ("c/d.rs", "pub fn g() {\n    let _ = crate::a::A;\n}\n"),
        ];
        assert_eq!(cycles_of("alias", &files), [["a.rs", "c/d.rs"]]);
    }

    #[test]
    fn self_references_other_crates_and_acyclic_imports_are_no_cycle() {
        let files = [
            ("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::A;\n"),
            (
                "a.rs",
                "use crate::a::A as Me;\nuse self::inner::I;\nmod inner {\n    pub struct I;\n    fn f() {\n        super::f();\n    }\n}\npub struct A;\nfn f() {}\nuse crate::b::B;\n",
            ),
            (
                "b.rs",
                "use std::fmt;\nuse ::core::mem;\nuse ttft_core::a::A;\nuse c::C;\npub struct B;\nfn g() {\n    let _ = Vec::<u8>::new();\n    let _ = Self::new();\n    let _ = crate::c::C;\n}\n",
            ),
            ("c.rs", "pub struct C;\n"),
        ];
        assert_eq!(cycles_of("acyclic", &files), Vec::<Vec<String>>::new());
        assert_eq!(
            edges_of("acyclic-edges", &files),
            [
                "a.rs -> b.rs: crate::b::B (line 11)",
                "b.rs -> c.rs: crate::c::C (line 9)",
                "lib.rs -> a.rs: a::A (line 4)",
            ]
        );
    }

    #[test]
    fn a_cycle_through_a_macro() {
        let files = [
            ("lib.rs", "#[macro_use]\nmod m;\nmod a;\n"),
            (
                "m.rs",
                "macro_rules! part {\n    () => {\n        $crate::a::A\n    };\n}\n",
            ),
            (
                "a.rs",
                "pub struct A;\nfn f() {\n    let _ = part!();\n    let _ = vec![1];\n}\n",
            ),
        ];
        assert_eq!(cycles_of("macro", &files), [["a.rs", "m.rs"]]);
        assert_eq!(
            edges_of("macro-edges", &files),
            [
                "a.rs -> m.rs: part! (line 3)",
                "m.rs -> a.rs: crate::a::A (line 3)"
            ]
        );
    }

    #[test]
    fn a_module_whose_file_is_missing_is_an_error() {
        let tree = Tree::new("missing", &[("src/lib.rs", "mod gone;\n")]);
        let err = Crate::load(&tree.0.join("src/lib.rs"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("lib.rs:1: `mod gone` is neither gone.rs nor gone/mod.rs"));
    }

    const CORE: &[(&str, &str)] = &[
        (
            "lib.rs",
            "pub mod stats;\npub mod report;\npub mod share;\npub use stats::S;\n",
        ),
        (
            "stats.rs",
            "pub struct S;\npub fn f() {\n    crate::report::Report::new();\n}\n",
        ),
        ("report.rs", "pub struct Report;\n"),
        (
            "share.rs",
            "use crate::report::Report;\nuse crate::stats;\n",
        ),
    ];

    #[test]
    fn an_import_from_a_higher_layer_is_a_violation() {
        let (krate, graph) = read("layers", CORE);
        let layers: &[(&str, &[&str])] = &[("base", &["stats"]), ("top", &["report", "share"])];
        let found = layer_violations(&krate, &graph, layers).unwrap();
        let named: Vec<(&str, &str)> = found
            .iter()
            .map(|&(a, b)| (krate.files[a].name.as_str(), krate.files[b].name.as_str()))
            .collect();
        assert_eq!(named, [("stats.rs", "report.rs")]);
        // Reversed, the other imports are the violations.
        let reversed: &[(&str, &[&str])] = &[("top", &["report", "share"]), ("base", &["stats"])];
        let found = layer_violations(&krate, &graph, reversed).unwrap();
        assert_eq!(found.len(), 1, "share -> stats");
        assert_eq!(krate.files[found[0].0].name, "share.rs");
        assert_eq!(krate.files[found[0].1].name, "stats.rs");
        assert!(layer_violations(&krate, &graph, &[]).unwrap().is_empty());
    }

    #[test]
    fn a_layered_file_may_not_import_through_the_crate_root() {
        let mut files: Vec<(&str, &str)> =
            CORE.iter().filter(|f| f.0 != "share.rs").copied().collect();
        files.push((
            "share.rs",
            "pub fn f() -> crate::S {\n    crate::stats::S\n}\n",
        ));
        let (krate, graph) = read("layers-root", &files);
        let layers: &[(&str, &[&str])] = &[("base", &["stats"]), ("top", &["report", "share"])];
        let found = layer_violations(&krate, &graph, layers).unwrap();
        let mut named: Vec<(&str, &str)> = found
            .iter()
            .map(|&(a, b)| (krate.files[a].name.as_str(), krate.files[b].name.as_str()))
            .collect();
        named.sort();
        assert_eq!(named, [("share.rs", "lib.rs"), ("stats.rs", "report.rs")]);
        let root = krate.files.iter().position(|f| f.name == "lib.rs").unwrap();
        assert_eq!(
            layer_name(&krate, layers, root),
            "the crate root: name the module instead"
        );
    }

    #[test]
    fn a_layer_table_that_does_not_match_the_modules_is_an_error() {
        let (krate, graph) = read("layer-table", CORE);
        let left_out: &[(&str, &[&str])] = &[("base", &["stats"]), ("top", &["report"])];
        let err = layer_violations(&krate, &graph, left_out).unwrap_err();
        assert_eq!(err.to_string(), "modules in no layer: share");
        let unknown: &[(&str, &[&str])] =
            &[("base", &["stats", "gone"]), ("top", &["report", "share"])];
        assert!(layer_violations(&krate, &graph, unknown).is_err());
        let twice: &[(&str, &[&str])] =
            &[("base", &["stats", "share"]), ("top", &["report", "share"])];
        assert!(layer_violations(&krate, &graph, twice).is_err());
    }

    #[test]
    fn the_check_reads_every_crate_of_a_workspace() {
        let files = [
            ("Cargo.toml", "[package]\n"),
            ("src/main.rs", "mod a;\nmod b;\nfn main() {}\n"),
            ("src/a.rs", "pub struct A;\n"),
            ("src/b.rs", "use crate::a::A;\n"),
            ("tests/t.rs", "mod x;\n"), // tests are not read
            ("crates/c/Cargo.toml", "[package]\n"),
            ("crates/c/src/lib.rs", "pub mod x;\npub mod y;\n"),
            ("crates/c/src/x.rs", "pub struct X;\n"),
            ("crates/c/src/y.rs", "pub struct Y;\n"),
            ("crates/c/examples/e/main.rs", "mod m;\nfn main() {}\n"),
            ("crates/c/examples/e/m.rs", "use super::main;\n"),
            ("crates/c/examples/f.rs", "fn main() {}\n"),
        ];
        let tree = Tree::new("workspace", &files);
        assert_eq!(
            crate_roots(&tree.0)
                .unwrap()
                .iter()
                .map(|r| relative(&tree.0, r))
                .collect::<Vec<_>>(),
            [
                "src/main.rs",
                "crates/c/src/lib.rs",
                "crates/c/examples/e/main.rs",
                "crates/c/examples/f.rs",
            ]
        );
        let layers: &[(&str, &[&str])] = &[("low", &["x"]), ("high", &["y"])];
        assert!(check_with(&tree.0, "crates/c/src/lib.rs", layers, false).is_ok());
        // A cycle in one crate fails the check.
        std::fs::write(tree.0.join("crates/c/src/y.rs"), "use crate::x::X;\n").unwrap();
        std::fs::write(tree.0.join("crates/c/src/x.rs"), "use super::y::Y;\n").unwrap();
        assert!(check_with(&tree.0, "", &[], false).is_err());
        // A layer violation alone fails it too.
        std::fs::write(tree.0.join("crates/c/src/y.rs"), "pub struct Y;\n").unwrap();
        assert!(check_with(&tree.0, "", &[], false).is_ok());
        assert!(check_with(&tree.0, "crates/c/src/lib.rs", layers, false).is_err());
        // Layers of no crate are an error, not a rule quietly off.
        assert!(check_with(&tree.0, "crates/gone/src/lib.rs", layers, false).is_err());
    }
}
