//! The address bar's query as one value, [`Address`]: the scenario's pairs, the units, the
//! embed flag, the open view, the Strategy view's GPU budget and ladder, the Compare columns
//! and the pairs of keys the page does not know. The page reads the bar into one
//! ([`Address::parse`]), replaces the parts whose owners want something else ([`rewrite`] with a
//! [`Wanted`]), and writes it back whole ([`Address::to_query`]), always in the same key order.
//! Pure string work, tested natively. The scenario and the columns arrive encoded
//! ([`crate::url::encode`], `encode_compare`); on the page this module is in the `url_codec`
//! chunk with the codec (`ui/url_codec.rs`), not in the first download.

use crate::format::Units;
use crate::input_limits::{LINK_CHARS, LINK_PARAMS};
use crate::plan::escalation::Step;
use crate::url::{self, BUDGET_KEY, COMPARE_KEY, LADDER_KEY};

/// Most pairs of unknown keys kept (another site's tags: `utm_source`, `fbclid`, …); the
/// rest are left out when the address is next written. A bound, as the link codec's own
/// [`LINK_PARAMS`]: a link of 200,000 unknown keys must not be written back on every edit.
pub const FOREIGN_PAIRS: usize = 16;

/// A ladder as the link carries it: each step, and whether it is on.
pub type Ladder = Vec<(Step, bool)>;

/// The page key of the open view (`view=strategy`; none for the planner unless named).
pub const VIEW_KEY: &str = "view";
/// The page key of the units (`units=gb`; GiB when absent).
pub const UNITS_KEY: &str = "units";
/// The page key of the compact read-only view (`embed=1`).
pub const EMBED_KEY: &str = "embed";

/// The address bar's query, by part. Values are kept as written (percent-encoded where the
/// link has them so), so a part nobody replaced comes back byte for byte.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Address {
    /// The scenario's pairs (every key the link codec reads, and any key written
    /// percent-encoded, which the codec decodes), in the order written.
    pub scenario: Vec<String>,
    /// `units=gb` or not.
    pub units: Units,
    /// The `embed` value (`Some("")` for a bare `embed`).
    pub embed: Option<String>,
    /// The `view` value.
    pub view: Option<String>,
    /// The `gpus` value.
    pub budget: Option<String>,
    /// The `ladder` value.
    pub ladder: Option<String>,
    /// The `cmp` values, one per Compare column, in column order.
    pub compare: Vec<String>,
    /// Pairs the page does not own (unknown keys, the old `compare` key), as written, in order;
    /// at most [`FOREIGN_PAIRS`].
    pub foreign: Vec<String>,
}

/// What one pair of a query is.
enum Part<'q> {
    Scenario,
    Page(&'q str, &'q str),
    Foreign,
}

/// Sorts one `key=value` pair (the value is empty for a bare key).
fn classify(pair: &str) -> Part<'_> {
    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
    match key {
        EMBED_KEY | VIEW_KEY | UNITS_KEY | BUDGET_KEY | LADDER_KEY | COMPARE_KEY => Part::Page(key, value),
        k if url::is_scenario_key(k) || k.contains(['%', '+']) => Part::Scenario,
        _ => Part::Foreign,
    }
}

/// The query cut where the link codec stops reading ([`LINK_CHARS`], at a pair boundary).
fn bounded(query: &str) -> &str {
    if query.len() <= LINK_CHARS {
        return query;
    }
    let mut end = LINK_CHARS;
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    query[..end].rfind('&').map_or(&query[..end], |i| &query[..i])
}

impl Address {
    /// The parts of a query (with or without `?`, any `#…` ignored). The first value of a
    /// single-valued page key counts; the link codec's bounds apply ([`LINK_CHARS`] characters,
    /// [`LINK_PARAMS`] pairs); empty pairs are dropped.
    pub fn parse(query: &str) -> Address {
        let query = query.strip_prefix('?').unwrap_or(query);
        let query = bounded(query.split('#').next().unwrap_or(""));
        let mut a = Address::default();
        for pair in query.split('&').filter(|p| !p.is_empty()).take(LINK_PARAMS) {
            match classify(pair) {
                Part::Scenario => a.scenario.push(pair.to_string()),
                Part::Foreign if a.foreign.len() < FOREIGN_PAIRS => a.foreign.push(pair.to_string()),
                Part::Foreign => {}
                Part::Page(COMPARE_KEY, value) => a.compare.push(value.to_string()),
                Part::Page(key, value) => {
                    let slot = match key {
                        EMBED_KEY => &mut a.embed,
                        VIEW_KEY => &mut a.view,
                        BUDGET_KEY => &mut a.budget,
                        LADDER_KEY => &mut a.ladder,
                        _ => {
                            if a.units == Units::Gib && matches!(value, "gb" | "GB") {
                                a.units = Units::Gb;
                            }
                            continue;
                        }
                    };
                    if slot.is_none() {
                        *slot = Some(value.to_string());
                    }
                }
            }
        }
        a
    }

    /// The query (without `?`): the scenario's pairs, then `units`, `embed`, `view`, `gpus`,
    /// `ladder`, the `cmp` pairs and the foreign pairs, always in this order.
    pub fn to_query(&self) -> String {
        let mut pairs: Vec<String> = self.scenario.clone();
        if self.units == Units::Gb {
            pairs.push(format!("{UNITS_KEY}=gb"));
        }
        for (key, value) in [(EMBED_KEY, &self.embed), (VIEW_KEY, &self.view), (BUDGET_KEY, &self.budget), (LADDER_KEY, &self.ladder)] {
            match value.as_deref() {
                Some("") => pairs.push(key.to_string()),
                Some(v) => pairs.push(format!("{key}={v}")),
                None => {}
            }
        }
        pairs.extend(self.compare.iter().map(|v| format!("{COMPARE_KEY}={v}")));
        pairs.extend(self.foreign.iter().cloned());
        pairs.join("&")
    }

    /// Replaces the scenario's pairs with those of `encoded` (the link codec's query for the
    /// scenario, [`crate::url::encode`]); a page key in it is left out.
    pub fn set_scenario(&mut self, encoded: &str) {
        self.scenario = encoded.split('&').filter(|p| !p.is_empty() && matches!(classify(p), Part::Scenario | Part::Foreign)).map(str::to_string).collect();
    }

    /// Replaces the Compare columns with the `cmp=` pairs of `pairs` ([`crate::url::encode_compare`];
    /// empty for none).
    pub fn set_compare(&mut self, pairs: &str) {
        self.compare = pairs.split('&').filter_map(|p| p.strip_prefix(COMPARE_KEY)?.strip_prefix('=')).map(str::to_string).collect();
    }

    /// The `cmp=` pairs alone, as [`crate::url::decode_compare`] reads them.
    pub fn compare_query(&self) -> String {
        self.compare.iter().map(|v| format!("{COMPARE_KEY}={v}")).collect::<Vec<_>>().join("&")
    }

    /// Sets the GPU budget (`None` drops the key).
    pub fn set_budget(&mut self, gpus: Option<u64>) {
        self.budget = gpus.map(|g| g.to_string());
    }

    /// Sets the ladder (`None` drops the key).
    pub fn set_ladder(&mut self, rungs: Option<&[(Step, bool)]>) {
        self.ladder = rungs.map(url::encode_ladder);
    }
}

/// What the page's state wants the address bar to say, part by part; the address bar's writer
/// (`ui/address_bar.rs`) fills it from the parts' owners and [`rewrite`] applies it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Wanted {
    /// The scenario's query ([`crate::url::encode`]) when it changed; `None` keeps the bar's pairs.
    pub scenario: Option<String>,
    pub units: Units,
    /// The open view's id, or `None` for the planner when the link does not name it.
    pub view: Option<&'static str>,
    /// The Strategy budget while it differs from the planner's world size.
    pub budget: Option<u64>,
    /// The Strategy ladder while it differs from the budget's default one.
    pub ladder: Option<Ladder>,
    /// The Compare columns' `cmp=` pairs ([`crate::url::encode_compare`]) once there are columns;
    /// `None` keeps the bar's (the Compare view has not opened yet).
    pub compare: Option<String>,
}

/// The query `current` becomes with the `wanted` parts, the others (`embed`, foreign pairs, and
/// the scenario or columns where `wanted` keeps them) as they are; `None` when that is the
/// address `current` already is (the same parts in another order count as the same).
pub fn rewrite(current: &str, wanted: &Wanted) -> Option<String> {
    let before = Address::parse(current);
    let mut next = before.clone();
    if let Some(scenario) = &wanted.scenario {
        next.set_scenario(scenario);
    }
    if let Some(pairs) = &wanted.compare {
        next.set_compare(pairs);
    }
    next.units = wanted.units;
    next.view = wanted.view.map(str::to_string);
    next.set_budget(wanted.budget);
    next.set_ladder(wanted.ladder.as_deref());
    (next != before).then(|| next.to_query())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINK: &str = "v=1&m=gpt2&b=4&units=gb&view=strategy&gpus=16&ladder=zero3,-mixed-precision&cmp=v%3D1%26m%3Dgpt2&cmp=v%3D1%26dp%3D8&utm_source=x";

    #[test]
    fn parts_are_read_and_written_back_in_a_stable_order() {
        let a = Address::parse(&format!("?{LINK}#top"));
        assert_eq!(a.scenario, ["v=1", "m=gpt2", "b=4"]);
        assert_eq!((a.units, a.view.as_deref(), a.budget.as_deref(), a.ladder.as_deref()), (Units::Gb, Some("strategy"), Some("16"), Some("zero3,-mixed-precision")));
        assert_eq!(a.compare, ["v%3D1%26m%3Dgpt2", "v%3D1%26dp%3D8"]);
        assert_eq!(a.foreign, ["utm_source=x"]);
        assert_eq!(a.to_query(), LINK);
        // Any order in, one order out; and the value read back is the same value.
        let shuffled = "cmp=v%3D1%26m%3Dgpt2&utm_source=x&ladder=zero3,-mixed-precision&view=strategy&v=1&units=GB&m=gpt2&gpus=16&cmp=v%3D1%26dp%3D8&b=4";
        assert_eq!(Address::parse(shuffled), a);
        assert_eq!(Address::parse(shuffled).to_query(), LINK);
        assert_eq!(Address::parse(&a.to_query()), a);
        assert_eq!(Address::parse("").to_query(), "");
        assert_eq!(Address::parse("embed&m=gpt2").to_query(), "m=gpt2&embed");
    }

    #[test]
    fn each_part_is_replaced_without_touching_the_others() {
        let a = Address::parse(LINK);
        let mut b = a.clone();
        b.set_scenario("v=1&m=gpt2&b=8&view=ignored");
        assert_eq!(b.to_query(), LINK.replace("b=4", "b=8"));
        let mut c = a.clone();
        c.units = Units::Gib;
        assert_eq!(c.to_query(), LINK.replace("&units=gb", ""));
        let mut d = a.clone();
        d.view = None;
        d.set_budget(None);
        d.set_ladder(Some(&[(Step::Zero2, false)]));
        assert_eq!(d.to_query(), LINK.replace("&view=strategy&gpus=16", "").replace("zero3,-mixed-precision", "-zero2"));
        let mut e = a.clone();
        e.set_compare("cmp=A&cmp=B&cmp=C");
        assert_eq!(e.compare_query(), "cmp=A&cmp=B&cmp=C");
        assert_eq!(e.to_query(), "v=1&m=gpt2&b=4&units=gb&view=strategy&gpus=16&ladder=zero3,-mixed-precision&cmp=A&cmp=B&cmp=C&utm_source=x");
        e.set_compare("");
        assert!(e.compare.is_empty() && !e.to_query().contains("cmp"));
        assert_eq!((e.scenario, e.view, e.foreign), (a.scenario, a.view, a.foreign));
    }

    #[test]
    fn the_scenario_part_holds_what_the_codec_writes() {
        // Every key `url::encode` writes is a scenario key, so a written scenario stays whole.
        let mut s = crate::Scenario::default();
        s.training.micro_batch = 3;
        s.parallel.dp = 4;
        s.device.preset = Some("b200-192gb".into());
        let encoded = crate::url::encode(&s);
        let mut a = Address::parse("view=compare");
        a.set_scenario(&encoded);
        assert_eq!(a.scenario.join("&"), encoded);
        assert!(a.foreign.is_empty());
        assert_eq!(crate::url::decode(&a.to_query()).0, s);
        // A percent-encoded key is the codec's to read (it decodes keys), not a foreign one.
        assert_eq!(Address::parse("%6D=gpt2").scenario, ["%6D=gpt2"]);
    }

    #[test]
    fn foreign_pairs_are_kept_within_a_bound() {
        let a = Address::parse("fbclid=abc&v=1&zz&utm_medium=mail");
        assert_eq!(a.foreign, ["fbclid=abc", "zz", "utm_medium=mail"]);
        assert_eq!(a.to_query(), "v=1&fbclid=abc&zz&utm_medium=mail");
        let many = format!("v=1&m=gpt2&b=2{}", "&zz=1".repeat(200_000));
        let a = Address::parse(&many);
        assert_eq!((a.scenario.len(), a.foreign.len()), (3, FOREIGN_PAIRS));
        let empty = format!("v=1{}", "&z".repeat(500_000));
        assert_eq!(Address::parse(&empty).to_query().split('&').count(), LINK_PARAMS);
        // The codec still reports an unknown key, as it did before the address kept it.
        let (_, errors) = crate::url::decode("v=1&m=gpt2&fbclid=abc");
        assert_eq!((errors[0].field.as_str(), errors[0].message.as_str()), ("url.fbclid", crate::url::UNKNOWN_PARAMETER));
    }

    #[test]
    fn a_rewrite_replaces_what_the_state_owns_and_keeps_the_rest() {
        let wanted = Wanted {
            scenario: None,
            units: Units::Gb,
            view: Some("strategy"),
            budget: Some(16),
            ladder: Some(vec![(Step::Zero3, true), (Step::MixedPrecision, false)]),
            compare: None,
        };
        // Already so, in another order: nothing to write.
        let shuffled = "utm_source=x&cmp=v%3D1%26m%3Dgpt2&ladder=zero3,-mixed-precision&view=strategy&v=1&units=gb&m=gpt2&gpus=16&cmp=v%3D1%26dp%3D8&b=4";
        assert_eq!(rewrite(shuffled, &wanted), None);
        // The scenario changed: only its pairs move; columns, embed and foreign pairs stay.
        let scenario = Wanted { scenario: Some("v=1&m=gpt2&b=8".into()), ..wanted.clone() };
        assert_eq!(rewrite(LINK, &scenario).as_deref(), Some(LINK.replace("b=4", "b=8").as_str()));
        assert_eq!(rewrite(&format!("embed&{LINK}"), &scenario).as_deref(), Some(LINK.replace("b=4", "b=8").replace("units=gb", "units=gb&embed").as_str()));
        // The planner tab at the world size with the default ladder, the columns gone.
        let planner = Wanted { units: Units::Gib, view: None, budget: None, ladder: None, compare: Some(String::new()), ..Wanted::default() };
        assert_eq!(rewrite(LINK, &planner).as_deref(), Some("v=1&m=gpt2&b=4&utm_source=x"));
        // Bad page values are kept as written until the state replaces them (they were reported
        // when the link was read, `url::decode_budget`, `url::decode_ladder`).
        let bad = "v=1&gpus=0&ladder=zero3,warp-drive";
        assert_eq!(Address::parse(bad).budget.as_deref(), Some("0"));
        assert_eq!(rewrite(bad, &Wanted { ladder: Some(vec![(Step::Zero3, true)]), ..Wanted::default() }).as_deref(), Some("v=1&ladder=zero3"));
        assert!(url::decode_budget("0", 4096).is_err() && url::decode_ladder("zero3,warp-drive").1.len() == 1);
        assert_eq!(Address::parse("view=compare&view=strategy").view.as_deref(), Some("compare"));
        assert_eq!((Address::parse("units=tb").units, Address::parse("embed").embed.as_deref()), (Units::Gib, Some("")));
    }
}
