//! Files the user chose in a file or folder input, read as text.

use wasm_bindgen_futures::JsFuture;

/// One chosen file.
pub struct ChosenFile(web_sys::File);

/// The files of an input's choice, in order.
pub fn chosen(files: &web_sys::FileList) -> Vec<ChosenFile> {
    (0..files.length())
        .filter_map(|i| files.get(i))
        .map(ChosenFile)
        .collect()
}

impl ChosenFile {
    /// Its path within a chosen folder (`experiment/scenario.json`), when a folder was chosen.
    pub fn folder_path(&self) -> Option<String> {
        js_sys::Reflect::get(&self.0, &"webkitRelativePath".into())
            .ok()
            .and_then(|p| p.as_string())
            .filter(|p| !p.is_empty())
    }

    /// Its name.
    pub fn name(&self) -> String {
        self.0.name()
    }

    /// Its text; `None` when the browser refuses to read it.
    pub async fn text(&self) -> Option<String> {
        JsFuture::from(self.0.text())
            .await
            .ok()
            .map(|t| t.as_string().unwrap_or_default())
    }
}
