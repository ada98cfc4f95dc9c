//! The scenario URL codec: a compact, readable, versioned query string.
//!
//! Format (version 1): `?v=1&m=Qwen%2FQwen3-8B&b=4&s=8192&…` (a Hub id, or an old short id) — one short key per field, only the
//! fields that differ from [`Scenario::default`], values as in the scenario JSON; the keys are
//! the field table's ([`crate::fields::FIELDS`]). A pasted
//! model travels as `hf=` (or our own architecture as `arch=`) holding base64url JSON.
//! Decoding never fails as a whole: every parameter that cannot be read is reported, field by
//! field, and the rest of the scenario is kept. Keys the page itself uses (`embed`, `view`,
//! `units`) are left to it. `v` drives migration: a link from a newer planner is read as far
//! as it can be, with a warning.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;

use crate::enum_id::{enum_from_id, enum_id};
use crate::error::InputError;
use crate::fields::{device_keys, scalar_keys};
use crate::import::presets::model_preset;
use crate::input_limits::{summarise, LINK_CHARS, LINK_PARAMS};
use crate::json_shape::from_object_value;
use crate::model::arch::Architecture;
use crate::plan::escalation::Step;
use crate::scenario::{DeviceSpec, Frozen, Lora, ModelSpec, Scenario, SCENARIO_VERSION};

/// Query keys the page owns; the codec ignores them.
pub const PAGE_KEYS: [&str; 7] = ["embed", "view", "units", "compare", COMPARE_KEY, BUDGET_KEY, LADDER_KEY];

/// The page key of the Strategy view's GPU budget (`gpus=64`), when it is not the planner's
/// world size.
pub const BUDGET_KEY: &str = "gpus";

/// The page key of the Strategy view's ladder, when it is not the default one for its budget:
/// the steps in order by their ids, a disabled step with a leading `-`
/// (`ladder=mixed-precision,-activation-checkpointing,zero3`; [`encode_ladder`]).
pub const LADDER_KEY: &str = "ladder";

/// The page key of the Compare columns: one `cmp=` per column, in column order, each value
/// the column's own query ([`encode`]) percent-encoded whole, so a column decodes exactly as
/// a planner link does: `?v=1&m=…&cmp=v%3D1%26m%3Dgpt2&cmp=v%3D1%26m%3Dgpt2%26dp%3D8`.
pub const COMPARE_KEY: &str = "cmp";

/// The query string (without `?`) for a scenario.
pub fn encode(s: &Scenario) -> String {
    let json = serde_json::to_value(s).unwrap_or(Value::Null);
    let mut default = serde_json::to_value(Scenario::default()).unwrap_or(Value::Null);
    // Sections left out of the JSON while they are their default are compared field by field.
    set(&mut default, "run", serde_json::to_value(crate::scenario::RunSpec::default()).unwrap_or(Value::Null));
    let mut pairs: Vec<(String, String)> = vec![("v".into(), SCENARIO_VERSION.to_string())];
    match &s.model {
        // The id as given: a Hub id, or an old short id from an earlier link.
        ModelSpec::Preset(id) => pairs.push(("m".into(), id.clone())),
        ModelSpec::Arch(arch) => pairs.push(("arch".into(), base64url_encode(serde_json::to_string(arch).unwrap_or_default().as_bytes()))),
        ModelSpec::HfConfig { raw, .. } => pairs.push(("hf".into(), base64url_encode(raw.to_string().as_bytes()))),
        ModelSpec::Pipeline { raw, .. } => pairs.push(("pl".into(), base64url_encode(raw.to_string().as_bytes()))),
    }
    for (key, path) in scalar_keys() {
        let value = lookup(&json, path);
        if value != lookup(&default, path) && !value.is_null() {
            pairs.push((key.into(), scalar_text(value)));
        }
    }
    if let Some(lora) = &s.training.lora {
        pairs.push(("lora".into(), base64url_encode(serde_json::to_string(lora).unwrap_or_default().as_bytes())));
    }
    if s.training.frozen != Frozen::default() {
        let f = &s.training.frozen;
        pairs.push(("fz".into(), format!("{}{}{}", f.layers, if f.embeddings { "e" } else { "" }, if f.vision_tower { "v" } else { "" })));
    }
    // A vision-language model's image size: `res=1024x768` (width × height).
    if let Some([w, h]) = s.training.resolution {
        pairs.push(("res".into(), format!("{w}x{h}")));
    }
    match &s.device.preset {
        Some(id) if id != "h100-sxm-80gb" => pairs.push(("d".into(), id.clone())),
        None => pairs.push(("d".into(), "custom".into())),
        _ => {}
    }
    let mut device = s.device.clone();
    for (key, field) in device_keys() {
        if let Some(x) = *device_slot(&mut device, field) {
            pairs.push((key.into(), format!("{x}")));
        }
    }
    if let Some(n) = s.device.gpus_per_node {
        pairs.push(("gpn".into(), n.to_string()));
    }
    pairs.iter().map(|(k, v)| format!("{k}={}", percent_encode(v))).collect::<Vec<_>>().join("&")
}

/// Why a link made by [`encode`] could not be read back whole, if it could not: a value
/// longer than one parameter may be (a pasted config.json of over about 48 KiB), or a link
/// longer than [`LINK_CHARS`].
pub fn unreadable_link(query: &str) -> Option<InputError> {
    if let Some(part) = query.split('&').find(|p| p.len() > MAX_VALUE_LEN) {
        let key = part.split('=').next().unwrap_or("");
        return Some(InputError::new(
            format!("url.{}", short(key)),
            format!("this value is {} characters long, more than the {MAX_VALUE_LEN} a link carries; share the scenario JSON instead", part.len()),
        ));
    }
    (query.len() > LINK_CHARS)
        .then(|| InputError::new("url", format!("the link would be {} characters long, more than the {LINK_CHARS} a link carries; share the scenario JSON instead", query.len())))
}

/// The keys [`decode`] reads by hand (the version, the model, the adapters, frozen blocks, the
/// resolution, the device and its node size); the others are the field table's
/// ([`crate::fields::scalar_keys`], [`crate::fields::device_keys`]).
pub const HAND_KEYS: [&str; 10] = ["v", "m", "hf", "pl", "arch", "lora", "fz", "res", "d", "gpn"];

/// Whether [`decode`] reads `key` (as written, not percent-decoded) as part of the scenario.
pub fn is_scenario_key(key: &str) -> bool {
    HAND_KEYS.contains(&key) || scalar_keys().any(|(k, _)| k == key) || device_keys().any(|(k, _)| k == key)
}

/// Whether a query (without `?`) holds anything but page keys ([`PAGE_KEYS`]), i.e.
/// whether [`decode`] can read more from it than the default scenario. Keys are compared as
/// written: a percent-encoded page key counts as a scenario key, and is then decoded (and
/// ignored) by `decode`. The page waits for its link codec only when this is true.
pub fn carries_scenario(query: &str) -> bool {
    let query = query.split('#').next().unwrap_or("");
    query.split('&').filter(|p| !p.is_empty()).any(|p| !PAGE_KEYS.contains(&p.split('=').next().unwrap_or("")))
}

// long: one short arm per key read by hand (v, m, hf, pl, arch, lora, fz, res, d, gpn, the device
// figures), then the field table's scalars, then one merge; splitting it would pass the
// half-built scenario and the error list between the parts.
/// A scenario from a query string (with or without `?`, or a whole URL), and the problems
/// found on the way. Unknown keys, bad values and a newer version are reported; everything
/// readable is kept.
///
/// The work is bounded whatever the link: past [`LINK_CHARS`] characters or [`LINK_PARAMS`]
/// parameters the rest is left out with one message, and many problems are summed up in one
/// ([`summarise`]).
pub fn decode(query: &str) -> (Scenario, Vec<InputError>) {
    let query = query.split_once('?').map(|(_, q)| q).unwrap_or(query);
    let query = query.split('#').next().unwrap_or("");
    let mut s = Scenario::default();
    let mut errors = Vec::new();
    let query = bounded_query(query, &mut errors);
    let mut json = serde_json::to_value(&s).unwrap_or(Value::Null);
    let mut device = DeviceSpec::default();
    let mut model: Option<ModelSpec> = None;
    let mut parts = query.split('&').filter(|p| !p.is_empty());
    for part in parts.by_ref().take(LINK_PARAMS) {
        let (key, raw) = part.split_once('=').unwrap_or((part, ""));
        let key = percent_decode(key);
        let value = percent_decode(raw);
        if value.len() > MAX_VALUE_LEN {
            errors.push(InputError::new(format!("url.{}", short(&key)), format!("value of {} characters is too long", value.len())));
            continue;
        }
        match key.as_str() {
            "v" => match value.parse::<u32>() {
                Ok(v) if v <= SCENARIO_VERSION && v >= 1 => {}
                Ok(v) => errors.push(InputError::new("url.v", format!("link version {v} is not one this planner knows ({SCENARIO_VERSION}); read what could be read"))),
                Err(_) => errors.push(InputError::new("url.v", format!("\"{}\" is not a version number", short(&value)))),
            },
            "m" => match model_preset(&value) {
                Some(_) => model = Some(ModelSpec::Preset(value)),
                None => errors.push(InputError::new("url.m", format!("unknown model preset \"{}\"", short(&value)))),
            },
            "hf" => match decode_json(&value).and_then(ModelSpec::from_hf_config) {
                Ok(m) => model = Some(m),
                Err(e) => errors.push(e.within("url.hf")),
            },
            "pl" => match decode_json(&value).and_then(ModelSpec::from_pipeline) {
                Ok(m) => model = Some(m),
                Err(e) => errors.push(e.within("url.pl")),
            },
            "arch" => match decode_json(&value).and_then(from_object_value::<Architecture>).and_then(|a| a.check().map(|()| a)) {
                Ok(a) => model = Some(ModelSpec::Arch(a)),
                Err(e) => errors.push(e.within("url.arch")),
            },
            "lora" => match decode_json(&value).and_then(from_object_value::<Lora>) {
                Ok(l) => s.training.lora = Some(l),
                Err(e) => errors.push(e.within("url.lora")),
            },
            "fz" => {
                let (rest, tower) = value.strip_suffix('v').map(|d| (d, true)).unwrap_or((value.as_str(), false));
                let (digits, emb) = rest.strip_suffix('e').map(|d| (d, true)).unwrap_or((rest, false));
                match digits.parse::<u64>() {
                    Ok(layers) => s.training.frozen = Frozen { layers, embeddings: emb, vision_tower: tower },
                    Err(_) => errors.push(InputError::new("url.fz", format!("\"{}\" is not a layer count", short(&value)))),
                }
            }
            "res" => match value.split_once('x').map(|(w, h)| (w.parse::<u64>(), h.parse::<u64>())) {
                Some((Ok(w), Ok(h))) => s.training.resolution = Some([w, h]),
                _ => errors.push(InputError::new("url.res", format!("\"{}\" is not WIDTHxHEIGHT in pixels", short(&value)))),
            },
            "d" if value == "custom" => device.preset = None,
            "d" => device.preset = Some(value),
            "gpn" => match value.parse::<u64>() {
                Ok(n) => device.gpus_per_node = Some(n),
                Err(_) => errors.push(InputError::new("url.gpn", format!("\"{}\" is not a GPU count", short(&value)))),
            },
            k if let Some((_, field)) = device_keys().find(|(dk, _)| *dk == k) => match crate::format::parse_f64(&value) {
                Some(x) if x.is_finite() && x > 0.0 => *device_slot(&mut device, field) = Some(x),
                _ => errors.push(InputError::new(format!("url.{k}"), format!("\"{}\" is not a positive number", short(&value)))),
            },
            k if PAGE_KEYS.contains(&k) => {}
            k => match scalar_keys().find(|(sk, _)| *sk == k) {
                Some((_, path)) => {
                    let mut candidate = json.clone();
                    set(&mut candidate, path, scalar_value(&value));
                    // Re-decode to type-check this one field; keep it only if it is valid.
                    match serde_json::from_value::<Scenario>(candidate.clone()) {
                        Ok(_) => json = candidate,
                        Err(e) => errors.push(InputError::new(format!("url.{k}"), format!("{path}: {}", strip_position(&e.to_string())))),
                    }
                }
                None => errors.push(InputError::new(format!("url.{}", short(k)), UNKNOWN_PARAMETER)),
            },
        }
    }
    let mut errors = summarise(errors, "url");
    let left_out = parts.count();
    if left_out > 0 {
        errors.push(InputError::new("url", format!("the link has {} parameters; the first {LINK_PARAMS} were read and the rest left out", LINK_PARAMS + left_out)));
    }
    if let Ok(decoded) = serde_json::from_value::<Scenario>(json) {
        s.training = crate::scenario::Training { lora: s.training.lora.clone(), frozen: s.training.frozen.clone(), resolution: s.training.resolution, ..decoded.training };
        s.parallel = decoded.parallel;
        s.runtime = decoded.runtime;
        s.framework = decoded.framework;
        s.run = decoded.run;
    }
    if let Some(m) = model {
        s.model = m;
    }
    s.device = device;
    if let Err(e) = s.device.resolve() {
        errors.push(e.within("url"));
        s.device = DeviceSpec::default();
    }
    (s, errors)
}

/// The `cmp=` pairs for the Compare columns ([`COMPARE_KEY`]); empty for no columns.
pub fn encode_compare(columns: &[Scenario]) -> String {
    columns.iter().map(|s| format!("{COMPARE_KEY}={}", percent_encode(&encode(s)))).collect::<Vec<_>>().join("&")
}

/// The Compare columns of a query (at most `max`; the other keys are left to [`decode`] and
/// the page), and the problems found, each named `url.cmp.<column>.<key>` (`url.cmp.B.b`).
/// A column is read as [`decode`] reads a link: what cannot be read is reported and the
/// rest kept.
pub fn decode_compare(query: &str, max: usize) -> (Vec<Scenario>, Vec<InputError>) {
    let query = query.split_once('?').map(|(_, q)| q).unwrap_or(query);
    let query = query.split('#').next().unwrap_or("");
    let mut columns = Vec::new();
    let mut errors = Vec::new();
    let values = query.split('&').filter_map(|p| p.split_once('=').or(Some((p, "")))).filter(|(k, _)| percent_decode(k) == COMPARE_KEY);
    for (i, (_, raw)) in values.enumerate() {
        if i >= max {
            errors.push(InputError::new(format!("url.{COMPARE_KEY}"), format!("more than {max} compare columns; the rest were left out")));
            break;
        }
        let name = char::from(b'A' + (i % 26) as u8);
        let (scenario, problems) = decode(&percent_decode(raw));
        columns.push(scenario);
        errors.extend(problems.into_iter().map(|mut e| {
            let inner = e.field.strip_prefix("url").unwrap_or(&e.field).trim_start_matches('.').to_string();
            e.field = if inner.is_empty() { format!("url.{COMPARE_KEY}.{name}") } else { format!("url.{COMPARE_KEY}.{name}.{inner}") };
            e
        }));
    }
    (columns, errors)
}

/// The message of a parameter the planner does not know, which is left out.
pub const UNKNOWN_PARAMETER: &str = "unknown parameter ignored";

/// Longest single parameter value accepted (a pasted config.json, base64url).
const MAX_VALUE_LEN: usize = 64 * 1024;

/// The query cut to [`LINK_CHARS`] at a parameter boundary, with a message when it was cut.
fn bounded_query<'q>(query: &'q str, errors: &mut Vec<InputError>) -> &'q str {
    if query.len() <= LINK_CHARS {
        return query;
    }
    let mut end = LINK_CHARS;
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    let cut = query[..end].rfind('&').unwrap_or(0);
    errors.push(InputError::new("url", format!("the link is {} characters long; only its first {LINK_CHARS} were read", query.len())));
    &query[..cut]
}

/// At most 40 characters of user text in a link's message.
fn short(s: &str) -> String {
    crate::safe_text::clip(s, 40)
}

fn strip_position(message: &str) -> &str {
    message.rfind(" at line ").map(|i| &message[..i]).unwrap_or(message)
}

fn lookup<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, k| v.get(k).unwrap_or(&Value::Null))
}

fn set(v: &mut Value, path: &str, value: Value) {
    let mut cur = v;
    let keys: Vec<&str> = path.split('.').collect();
    for k in &keys[..keys.len() - 1] {
        // A section serialised only when it differs from its default (`run`) starts empty.
        if let Some(obj) = cur.as_object_mut() {
            obj.entry(k.to_string()).or_insert_with(|| Value::Object(Default::default()));
        }
        cur = match cur.get_mut(*k) {
            Some(next) => next,
            None => return,
        };
    }
    if let (Some(obj), Some(last)) = (cur.as_object_mut(), keys.last()) {
        obj.insert((*last).to_string(), value);
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Numbers as numbers, `true`/`false` as booleans, everything else as a string; the
/// scenario's own types then check it.
fn scalar_value(text: &str) -> Value {
    if let Ok(n) = text.parse::<u64>() {
        return Value::from(n);
    }
    if let Some(x) = crate::format::parse_f64(text) {
        if x.is_finite() {
            return Value::from(x);
        }
    }
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(text.to_string()),
    }
}

/// The override slot of the device field a device key names ([`crate::fields::device_keys`]).
fn device_slot<'a>(d: &'a mut DeviceSpec, field: &str) -> &'a mut Option<f64> {
    match field {
        "capacity_bytes" => &mut d.capacity_bytes,
        "hbm_bandwidth" => &mut d.hbm_bandwidth,
        "host_link_bandwidth" => &mut d.host_link_bandwidth,
        "interconnect_bandwidth" => &mut d.interconnect_bandwidth,
        "network_bandwidth" => &mut d.network_bandwidth,
        _ => &mut d.bf16_tflops,
    }
}

fn decode_json(b64: &str) -> Result<Value, InputError> {
    let bytes = base64url_decode(b64).ok_or_else(|| InputError::new("", "not valid base64url"))?;
    let text = String::from_utf8(bytes).map_err(|_| InputError::new("", "not UTF-8 text"))?;
    serde_json::from_str(&text).map_err(|e| InputError::new("", format!("not JSON: {}", strip_position(&e.to_string()))))
}

/// RFC 4648 §5 base64url, written without padding; read leniently, as links have always been
/// read: padding optional, the standard alphabet's `+` and `/` accepted for `-` and `_`.
const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_encode_padding(false).with_decode_padding_mode(DecodePaddingMode::RequireNone).with_decode_allow_trailing_bits(true),
);

/// RFC 4648 §5 base64url without padding.
pub fn base64url_encode(bytes: &[u8]) -> String {
    BASE64URL.encode(bytes)
}

/// The bytes of base64url text (see [`BASE64URL`] for what is accepted), or `None`.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=').replace('+', "-").replace('/', "_");
    BASE64URL.decode(text).ok()
}

/// Everything but RFC 3986 unreserved characters is percent-encoded.
const ESCAPED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

fn percent_encode(s: &str) -> String {
    utf8_percent_encode(s, ESCAPED).to_string()
}

/// Decode `%XX` and `+` (a space, as in forms); invalid escapes are kept as written.
fn percent_decode(s: &str) -> String {
    percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned()
}

/// The [`LADDER_KEY`] value of a ladder: each step's id, `-` before a disabled one.
pub fn encode_ladder(rungs: &[(Step, bool)]) -> String {
    rungs.iter().map(|&(step, on)| format!("{}{}", if on { "" } else { "-" }, enum_id(&step))).collect::<Vec<_>>().join(",")
}

/// A ladder from its [`LADDER_KEY`] value, as the query carries it (percent-encoded or not).
/// Unknown steps and repeats are left out, each with a problem naming it; an empty value is an
/// empty ladder.
pub fn decode_ladder(raw: &str) -> (Vec<(Step, bool)>, Vec<InputError>) {
    let text = percent_decode(raw);
    let mut rungs: Vec<(Step, bool)> = Vec::new();
    let mut errors = Vec::new();
    for item in text.split(',').filter(|i| !i.is_empty()) {
        let (id, on) = item.strip_prefix('-').map_or((item, true), |id| (id, false));
        match enum_from_id::<Step>(id) {
            Some(step) if rungs.iter().any(|&(s, _)| s == step) => {
                errors.push(InputError::new(format!("url.{LADDER_KEY}"), format!("step \"{}\" is listed twice; the first is kept", short(id))))
            }
            Some(step) => rungs.push((step, on)),
            None => errors.push(InputError::new(format!("url.{LADDER_KEY}"), format!("unknown step \"{}\" ignored", short(id)))),
        }
    }
    (rungs, errors)
}

/// The GPU budget of a [`BUDGET_KEY`] value: a whole number from 1 to `max`.
pub fn decode_budget(text: &str, max: u64) -> Result<u64, InputError> {
    match text.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(InputError::new(format!("url.{BUDGET_KEY}"), format!("\"{}\" is not a GPU count from 1 to {max}", short(text)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Zero;

    #[test]
    fn the_scenario_keys_are_those_decode_reads() {
        for key in HAND_KEYS.iter().copied().chain(scalar_keys().map(|(k, _)| k)).chain(device_keys().map(|(k, _)| k)) {
            assert!(is_scenario_key(key), "{key}");
            let (_, errors) = decode(&format!("{key}=%00bad"));
            assert!(errors.iter().all(|e| e.message != UNKNOWN_PARAMETER), "{key}: {errors:?}");
        }
        for key in PAGE_KEYS.iter().copied().chain(["utm_source", "fbclid"]) {
            assert!(!is_scenario_key(key), "{key}");
        }
        assert_eq!(decode("fbclid=1").1[0].message, UNKNOWN_PARAMETER);
    }

    #[test]
    fn ladders_round_trip_and_bad_steps_are_named() {
        let ladder = vec![(Step::MixedPrecision, true), (Step::ActivationCheckpointing, false), (Step::Zero3, true)];
        let text = encode_ladder(&ladder);
        assert_eq!(text, "mixed-precision,-activation-checkpointing,zero3");
        assert_eq!(decode_ladder(&text), (ladder, Vec::new()));
        for step in Step::ALL {
            assert_eq!(decode_ladder(&encode_ladder(&[(step, false)])).0, vec![(step, false)], "{step:?}");
        }
        assert_eq!(decode_ladder("zero3%2C-zero2").0, vec![(Step::Zero3, true), (Step::Zero2, false)]);
        let (rungs, errors) = decode_ladder("zero2,warp-drive,zero2,-");
        assert_eq!(rungs, vec![(Step::Zero2, true)]);
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].message.contains("warp-drive") && errors[1].message.contains("twice"));
        assert_eq!(decode_ladder(""), (Vec::new(), Vec::new()));
        assert_eq!(decode_budget("64", 4096), Ok(64));
        for bad in ["0", "4097", "-1", "1.5", "", "x"] {
            assert!(decode_budget(bad, 4096).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_query_of_page_keys_decodes_to_the_default() {
        for query in ["", "embed=1", "view=strategy&units=gb", "cmp=v%3D1&cmp=m%3Dgpt2&compare", "&&embed&view=compare&"] {
            assert!(!carries_scenario(query), "{query}");
            assert_eq!(decode(query), (Scenario::default(), Vec::new()), "{query}");
        }
        for query in ["m=gpt2", "embed=1&mb=2", "view=strategy&bogus", "%65mbed=1", "=1", "units=gb&d=custom"] {
            assert!(carries_scenario(query), "{query}");
        }
    }

    #[test]
    fn default_scenario_is_short() {
        assert_eq!(encode(&Scenario::default()), "v=1&m=meta-llama%2FMeta-Llama-3-8B");
        let (s, errors) = decode("?v=1&m=meta-llama%2FMeta-Llama-3-8B");
        assert_eq!(s, Scenario::default());
        assert!(errors.is_empty());
    }

    /// `arch=` goes through the same shape check as a scenario's `arch` (a zero width is refused).
    #[test]
    fn arch_in_a_link_is_checked() {
        let arch = serde_json::json!({"family": "transformer", "hidden": 0});
        let (s, errors) = decode(&format!("v=1&arch={}", base64url_encode(arch.to_string().as_bytes())));
        assert_eq!(errors[0].field, "url.arch.hidden", "{errors:?}");
        assert_eq!(s.model, Scenario::default().model);
    }

    /// `arch=` and `lora=` hold JSON objects: an array (which serde would read field by field) is refused.
    #[test]
    fn arrays_in_a_link_are_not_objects() {
        for (key, json) in [("arch", r#"["transformer"]"#), ("lora", r#"[8, ["q"], "nf4", false]"#)] {
            let (s, errors) = decode(&format!("v=1&{key}={}", base64url_encode(json.as_bytes())));
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(errors[0].field, format!("url.{key}"));
            assert!(errors[0].message.contains("JSON object"), "{errors:?}");
            assert_eq!(s, Scenario::default());
        }
    }

    /// A config.json in a link and in scenario JSON is read by the one decoder
    /// (`ModelSpec::from_hf_config`): the same model, and the same error for a bad key.
    #[test]
    fn hf_config_in_a_link_and_in_json_decode_alike() {
        let good = r#"{"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936}"#;
        let bad = r#"{"model_type": "llama", "hidden_size": 0}"#;
        let (from_link, errors) = decode(&format!("v=1&hf={}", base64url_encode(good.as_bytes())));
        assert!(errors.is_empty(), "{errors:?}");
        let from_json = Scenario::from_json(&format!(r#"{{"model": {{"hf_config": {good}}}}}"#)).unwrap().scenario;
        assert_eq!(from_link.model, from_json.model);
        let (_, errors) = decode(&format!("v=1&hf={}", base64url_encode(bad.as_bytes())));
        let json_error = Scenario::from_json(&format!(r#"{{"model": {{"hf_config": {bad}}}}}"#)).unwrap_err();
        assert_eq!(errors[0].field, "url.hf.hidden_size");
        assert_eq!(json_error.field, "model");
        assert!(json_error.message.starts_with("hf_config.hidden_size: "), "{json_error}");
        assert!(json_error.message.ends_with(&errors[0].message), "{json_error} vs {}", errors[0]);
    }

    /// Links made before the catalogue used short ids; they still open the same model.
    #[test]
    fn old_short_ids_still_decode() {
        let (s, errors) = decode("?v=1&m=llama-3-8b");
        assert!(errors.is_empty());
        assert_eq!(s.model.architecture(), Scenario::default().model.architecture());
        assert_eq!(encode(&s), "v=1&m=llama-3-8b");
    }

    #[test]
    fn round_trips_changed_fields() {
        let mut s = Scenario::default();
        s.training.micro_batch = 8;
        s.training.precision = crate::model::precision::Precision::Fp32;
        s.parallel.sp = true;
        s.parallel.tp = 4;
        s.parallel.zero = Zero::Parameters;
        s.device = DeviceSpec::preset("a100-80gb");
        s.training.lora = Some(Lora::default());
        s.runtime = crate::scenario::Runtime {
            platform: crate::scenario::Platform::Managed,
            memory_fraction: 0.45,
            other_processes_bytes: 1 << 30,
            jobs: 2,
            expandable_segments: true,
            host_memory_bytes: Some(96 << 30),
        };
        let q = encode(&s);
        assert!(q.contains("pf=managed") && q.contains("mf=0.45") && q.contains("nj=2"), "{q}");
        let (back, errors) = decode(&q);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(back, s, "{q}");
    }

    #[test]
    fn the_run_and_its_price_round_trip() {
        let mut s = Scenario::default();
        s.run.epochs = 3.0;
        s.run.price_per_gpu_hour = Some(2.5);
        s.run.pricing = crate::scenario::Pricing::Spot;
        let q = encode(&s);
        assert!(q.contains("epo=3") && q.contains("usd=2.5") && q.contains("pr=spot") && !q.contains("tok="), "{q}");
        let (back, errors) = decode(&q);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(back, s, "{q}");
        let (_, errors) = decode("v=1&epo=abc&tok=-1");
        let fields: Vec<_> = errors.iter().map(|e| e.to_string()).collect();
        assert!(fields.iter().any(|e| e.contains("url.epo")) && fields.iter().any(|e| e.contains("url.tok")), "{fields:?}");
    }

    #[test]
    fn bad_parameters_are_reported_and_the_rest_kept() {
        let (s, errors) = decode("v=1&m=gpt2&b=-3&tp=2&zz=1&s=<script>");
        assert_eq!(s.model, ModelSpec::Preset("gpt2".into()));
        assert_eq!(s.parallel.tp, 2);
        assert_eq!(s.training.micro_batch, 1);
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["url.b", "url.zz", "url.s"]);
    }

    /// The Compare columns travel beside the planner's scenario and come back the same,
    /// in order, a pasted config and LoRA included; the planner's decoder ignores them.
    #[test]
    fn compare_columns_round_trip() {
        let mut b = Scenario::default();
        b.parallel.dp = 8;
        b.parallel.zero = Zero::Parameters;
        b.training.seq_len = 8192;
        b.training.lora = Some(Lora { rank: 64, ..Lora::default() });
        b.device = DeviceSpec::preset("a100-80gb");
        let raw = serde_json::json!({"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 1000});
        let c = Scenario { model: ModelSpec::from_hf_config(raw).expect("config"), ..Scenario::default() };
        let columns = vec![Scenario::default(), b, c];
        let mut planner = Scenario::default();
        planner.training.micro_batch = 4;
        let query = format!("{}&view=compare&{}", encode(&planner), encode_compare(&columns));
        assert!(query.contains("&cmp=v%3D1%26m%3Dmeta-llama%252FMeta-Llama-3-8B&cmp=v%3D1%26"), "{query}");
        let (back, errors) = decode_compare(&format!("https://example.org/?{query}"), 4);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(back, columns);
        let (s, errors) = decode(&query);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(s, planner);
        assert_eq!(decode_compare(&encode(&planner), 4), (vec![], vec![]));
    }

    /// A bad value in a column is named by column and key; the column keeps the rest; extra
    /// columns beyond the maximum are reported and left out; nothing panics.
    #[test]
    fn compare_columns_report_their_problems() {
        let (columns, errors) = decode_compare("cmp=v%3D1%26m%3Dgpt2&cmp=tp%3D2%26b%3D-3&cmp=d%3Dh900&cmp=%zz&cmp=", 4);
        assert_eq!(columns.len(), 4);
        assert_eq!(columns[0].model, ModelSpec::Preset("gpt2".into()));
        assert_eq!((columns[1].parallel.tp, columns[1].training.micro_batch), (2, 1));
        let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["url.cmp.B.b", "url.cmp.C.device.preset", "url.cmp.D.%zz", "url.cmp"]);
        let (columns, errors) = decode_compare(&encode_compare(&vec![Scenario::default(); 6]), 4);
        assert_eq!(columns.len(), 4);
        assert_eq!(errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(), ["url.cmp"]);
    }

    proptest::proptest! {
        /// Any query, cmp pairs or not, decodes without panicking to at most `max` columns.
        #[test]
        fn any_compare_query_decodes(parts in proptest::collection::vec("(cmp|v|m|b|%[0-9A-F]{0,2}|[a-z]{0,3})=[ -~]{0,24}", 0..8), max in 0usize..5) {
            let (columns, _) = decode_compare(&parts.join("&"), max);
            proptest::prop_assert!(columns.len() <= max);
        }
    }

    /// A link made by the hand-written codec (before the `base64` and `percent-encoding`
    /// crates): a pasted config, LoRA, frozen layers and a custom device decode to the same
    /// scenario and encode to the same text; padded, standard-alphabet and lower-case escapes
    /// read the same as the canonical form.
    #[test]
    fn links_from_the_hand_written_codec_decode_identically() {
        const OLD: &str = "v=1&hf=eyJoaWRkZW5fc2l6ZSI6ODk2LCJpbnRlcm1lZGlhdGVfc2l6ZSI6NDg2NCwibW9kZWxfdHlwZSI6InF3ZW4yIiwibnVtX2F0dGVudGlvbl9oZWFkcyI6MTQsIm51bV9oaWRkZW5fbGF5ZXJzIjoyNCwibnVtX2tleV92YWx1ZV9oZWFkcyI6MiwidGllX3dvcmRfZW1iZWRkaW5ncyI6dHJ1ZSwidm9jYWJfc2l6ZSI6MTUxOTM2fQ&lora=eyJyYW5rIjo4LCJ0YXJnZXRzIjpbInEiLCJ2Il0sImJhc2UiOiJuZjQiLCJkb3VibGVfcXVhbnQiOmZhbHNlfQ&fz=3e&cap=24000000000&hbm=1000000000000&host=32000000000&tf=150";
        let expected = Scenario::from_json(
            r#"{"model":{"hf_config":{"model_type":"qwen2","hidden_size":896,"num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,"intermediate_size":4864,"vocab_size":151936,"tie_word_embeddings":true}},
                "training":{"lora":{"rank":8,"targets":["q","v"],"base":"nf4","double_quant":false},"frozen":{"layers":3,"embeddings":true}},
                "device":{"capacity_bytes":24e9,"hbm_bandwidth":1e12,"host_link_bandwidth":3.2e10,"bf16_tflops":150}}"#,
        )
        .unwrap()
        .scenario;
        let (s, errors) = decode(OLD);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(s, expected);
        assert_eq!(encode(&s), OLD);

        // `"?>?>"` encodes to `Ij8-Pz4i`: the payload exercises `-` (and `_` below).
        let lora = r#"{"rank":4,"targets":["q"],"base":"bf16","double_quant":true,"x":"?>?>","y":"???"}"#;
        let canonical = base64url_encode(lora.as_bytes());
        assert!(canonical.contains('-') && canonical.contains('_'), "{canonical}");
        let standard = format!("{}==", canonical.replace('-', "%2B").replace('_', "%2f"));
        let (a, errors_a) = decode(&format!("v=1&m=meta-llama%2fMeta-Llama-3-8B&lora={canonical}"));
        let (b, errors_b) = decode(&format!("v=1&m=meta-llama%2FMeta-Llama-3-8B&lora={standard}"));
        assert_eq!(errors_a.len(), 0, "{errors_a:?}");
        assert_eq!((a, errors_a), (b, errors_b));
    }

    /// Escapes read as the hand-written decoder read them: `+` is a space, `%2B` a plus,
    /// broken escapes stay as written, invalid UTF-8 becomes U+FFFD.
    #[test]
    fn percent_decoding_matches_the_hand_written_decoder() {
        for (text, decoded) in [("a+b", "a b"), ("%2B", "+"), ("%", "%"), ("%4", "%4"), ("%zz1", "%zz1"), ("100%25", "100%"), ("%C3%A9", "é"), ("%FF", "\u{FFFD}")] {
            assert_eq!(percent_decode(text), decoded, "{text}");
        }
        assert_eq!(percent_encode("Qwen/Qwen3 8B~é"), "Qwen%2FQwen3%208B~%C3%A9");
    }

    #[test]
    fn base64url_round_trip() {
        for text in ["", "a", "ab", "abc", "{\"model_type\":\"llama\"}"] {
            assert_eq!(base64url_decode(&base64url_encode(text.as_bytes())).as_deref(), Some(text.as_bytes()));
        }
    }
}
