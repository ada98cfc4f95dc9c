//! The page's own query keys beside the scenario's (`embed`, `units`, `view`, …: the
//! [`crate::url::PAGE_KEYS`]): reading one, dropping one, and a query's scenario and units
//! ([`decode_view`], in the `url_codec` chunk). Pure string functions, tested natively; the
//! address bar's query as a whole, part by part, is [`crate::address::Address`].

use crate::error::InputError;
use crate::format::Units;
use crate::scenario::Scenario;
use crate::url;

/// The raw value of a page key in a query (`embed`, `units`, …), if present.
pub fn page_param(query: &str, key: &str) -> Option<String> {
    query.split('&').filter_map(|p| p.split_once('=').or(Some((p, "")))).find(|(k, _)| *k == key).map(|(_, v)| v.to_string())
}

/// True for `?embed=1` (or `embed`, `embed=true`).
pub fn is_embed(query: &str) -> bool {
    matches!(page_param(query, "embed").as_deref(), Some("1" | "" | "true"))
}

/// The query with every `key=…` pair removed.
pub fn query_without(query: &str, key: &str) -> String {
    query.split('&').filter(|p| !p.is_empty() && p.split('=').next() != Some(key)).collect::<Vec<_>>().join("&")
}

/// Units named by `units=gb`; GiB otherwise.
pub fn units_from(query: &str) -> Units {
    match page_param(query, "units").as_deref() {
        Some("gb" | "GB") => Units::Gb,
        _ => Units::Gib,
    }
}

/// The scenario, units and decoding problems of a query.
pub fn decode_view(query: &str) -> (Scenario, Units, Vec<InputError>) {
    let (scenario, errors) = url::decode(query);
    (scenario, units_from(query), errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_keys_are_read_dropped_and_kept() {
        let query = "v=1&m=gpt2&embed&units=gb&view=compare";
        assert_eq!(page_param(query, "embed").as_deref(), Some(""));
        assert_eq!(page_param(query, "view").as_deref(), Some("compare"));
        assert_eq!(page_param(query, "gpus"), None);
        assert!(is_embed(query) && is_embed("embed=1") && is_embed("embed=true") && !is_embed("embed=0"));
        assert_eq!(query_without(query, "embed"), "v=1&m=gpt2&units=gb&view=compare");
        assert_eq!((units_from(query), units_from("units=GiB")), (Units::Gb, Units::Gib));
        let (scenario, units, errors) = decode_view(query);
        assert_eq!((scenario.model.label(), units, errors.len()), ("gpt2".to_string(), Units::Gb, 0));
    }
}
