//! The folders of files the checks' tests read (`codemap`'s and `cycles`'s): each written under a
//! fresh temporary folder of its own, removed on drop.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Files written under a fresh temporary folder, removed on drop.
pub(crate) struct Tree(pub(crate) PathBuf);

impl Tree {
    /// `files` (`(path, text)`, paths relative to the folder) written under a new folder named
    /// after `name`, this process and a count, so no two trees of a test run share a folder.
    pub(crate) fn new(name: &str, files: &[(&str, &str)]) -> Tree {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("xtask-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (f, text) in files {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Tree(dir)
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
