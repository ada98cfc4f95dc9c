//! Hugging Face Hub ids and the URL of a repository's `config.json`, for the page's "Fetch
//! config.json from the Hugging Face Hub" (`ui/hub_fetch.rs`): only a well-formed
//! `owner/name` ever reaches the URL.

/// The Hub's origin (also in `index.html`'s `connect-src`).
pub const HUB: &str = "https://huggingface.co";

/// `owner/name` when `text` is a Hub repository id (letters, digits, `.`, `_`, `-`, one
/// slash), else `None`: nothing else is ever put in the fetched URL.
pub fn hub_id(text: &str) -> Option<String> {
    let text = text.trim();
    let (owner, name) = text.split_once('/')?;
    let part = |p: &str| !p.is_empty() && p.len() <= 96 && !p.starts_with(['.', '-']) && p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    (part(owner) && part(name) && !name.contains("..")).then(|| text.to_string())
}

/// The config.json URL of repository `id` on its main branch.
pub fn config_url(id: &str) -> String {
    format!("{HUB}/{id}/resolve/main/config.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_repository_ids_reach_the_url() {
        assert_eq!(hub_id(" Qwen/Qwen2.5-7B-Instruct "), Some("Qwen/Qwen2.5-7B-Instruct".into()));
        assert_eq!(config_url("allenai/OLMoE-1B-7B-0924"), "https://huggingface.co/allenai/OLMoE-1B-7B-0924/resolve/main/config.json");
        for bad in ["qwen3", "a/b/c", "../x", "a/..", "a/b?x=1", "a/b#c", "https://x/y", "/x", "x/", "a b/c", "a/.hidden"] {
            assert_eq!(hub_id(bad), None, "{bad}");
        }
    }
}
