//! What to rent: for the scenario's model and task, every catalogue GPU (whole GPUs, not MIG
//! slices) at every count up to a budget (powers of two, and the budget itself), each laid
//! out by the layout search (`search.rs`; serving: the tensor-parallel degree and replicas
//! the engine would run), then the run's hours and cost (`run.rs`), ranked by cost.
//!
//! - Training keeps the scenario's global batch, as the search does: a count whose
//!   data-parallel degrees cannot split it has fewer layouts to try.
//! - Serving tries tensor parallelism up to one 8-GPU server (`search::MAX_TP`) dividing the
//!   attention heads, the rest of the GPUs as replicas; a row fits when the engine starts and
//!   the memory fits.
//! - Prices: the scenario's own price for its own device, then a prices file's, then the
//!   catalogue's examples (`prices.rs`); a GPU without any has no cost and ranks after those
//!   with one.
//!
//! Not here: availability, quotas, node shapes a provider sells (a count is priced as that many
//! GPUs), or networking between nodes beyond what the step time already models.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::prices::{example_price, Price};
use super::run::run_at_price;
use super::search::{search, MAX_TP};
use crate::error::InputError;
use crate::estimate;
use crate::labels::layout_label;
use crate::model::device::devices;
use crate::model::inputs::{Mode, Zero};
use crate::scenario::{DeviceSpec, Scenario};

/// One GPU type at one count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RentRow {
    /// Catalogue id of the GPU.
    pub device: String,
    pub gpus: u64,
    /// The fastest layout that fits (`dp 4 · tp 2 · pp 1 · ZeRO-3`, with checkpointing and
    /// micro-batch); `None` when nothing fits.
    pub layout: Option<String>,
    /// Wall-clock hours of the run; `None` when nothing fits.
    pub hours: Option<f64>,
    /// USD; `None` when nothing fits or there is no price.
    pub cost: Option<f64>,
    pub fits: bool,
    /// USD per GPU-hour used, and where it comes from.
    pub price: Option<Price>,
    pub gpu_hours: Option<f64>,
    /// GPU-hours at TDP, kWh.
    pub energy_kwh: Option<f64>,
    /// The cheapest row with a cost.
    pub cheapest: bool,
    /// The row with the fewest hours.
    pub fastest: bool,
    /// The plan of this row, for the planner to open (not in the JSON).
    #[serde(skip)]
    pub scenario: Option<Scenario>,
}

/// Prices per GPU-hour by device id, from a `--prices` file: `{"h100-sxm-80gb": 2.1, …}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PriceBook(pub BTreeMap<String, f64>);

impl PriceBook {
    /// Reads `{"device-id": price, …}`; an unknown id or a price that is not a non-negative
    /// number is an error naming it.
    pub fn from_json(text: &str) -> Result<PriceBook, InputError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| InputError::new("prices", e.to_string()))?;
        let object = value.as_object().ok_or_else(|| InputError::new("prices", "expected an object of device id → price per GPU-hour"))?;
        let mut book = BTreeMap::new();
        for (id, price) in object {
            if crate::model::device::device_preset(id).is_none() {
                return Err(InputError::new(format!("prices.{id}"), "unknown device id (see `headroom presets`)"));
            }
            match price.as_f64() {
                Some(p) if p.is_finite() && (0.0..=1e6).contains(&p) => book.insert(id.clone(), p),
                _ => return Err(InputError::new(format!("prices.{id}"), format!("must be a price per GPU-hour between 0 and 1000000, got {price}"))),
            };
        }
        Ok(PriceBook(book))
    }

    fn price(&self, base: &Scenario, device: &str) -> Option<Price> {
        if base.device.preset.as_deref() == Some(device) {
            if let Some(p) = base.run.price_per_gpu_hour {
                return Some(Price { per_gpu_hour: p, source: "your price".into() });
            }
        }
        if let Some(&p) = self.0.get(device) {
            return Some(Price { per_gpu_hour: p, source: "your prices file".into() });
        }
        example_price(device, base.run.pricing)
    }
}

/// GPU counts tried up to `budget`: the powers of two, and the budget itself.
pub fn counts(budget: u64) -> Vec<u64> {
    let budget = budget.max(1);
    let mut out: Vec<u64> = (0..63).map(|i| 1u64 << i).take_while(|&n| n <= budget).collect();
    if out.last() != Some(&budget) {
        out.push(budget);
    }
    out
}

/// Every catalogue GPU × count up to `budget`, sorted by cost (rows without a cost after,
/// by hours; rows that fit nothing last), the cheapest and fastest marked.
pub fn rent(base: &Scenario, budget: u64, prices: &PriceBook) -> Vec<RentRow> {
    let mut rows: Vec<RentRow> = cells(budget).iter().map(|(device, gpus)| row(base, device, *gpus, prices)).collect();
    rank(&mut rows);
    rows
}

/// The (GPU, count) pairs of the table: every whole catalogue GPU at every count of
/// [`counts`]; the page fills them a few at a time, then ranks them with [`rank`].
pub fn cells(budget: u64) -> Vec<(String, u64)> {
    let counts = counts(budget);
    devices().into_iter().filter(|d| !d.mig).flat_map(|d| counts.iter().map(move |&n| (d.id.clone(), n))).collect()
}

/// The fastest plan of `base` on `gpus` × `device`, priced.
pub fn row(base: &Scenario, device: &str, gpus: u64, prices: &PriceBook) -> RentRow {
    let mut on = base.clone();
    on.device = DeviceSpec::preset(device);
    let plan = if on.training.mode == Mode::Inference { serving_plan(&on, gpus) } else { training_plan(&on, gpus) };
    let price = prices.price(base, device);
    let mut r = RentRow {
        device: device.into(),
        gpus,
        layout: None,
        hours: None,
        cost: None,
        fits: false,
        price: price.clone(),
        gpu_hours: None,
        energy_kwh: None,
        cheapest: false,
        fastest: false,
        scenario: None,
    };
    if let Some(s) = plan {
        let run = run_at_price(&s, &estimate(&s), price);
        r.layout = Some(if s.training.mode == Mode::Inference {
            format!("tp {} × {} replicas", s.parallel.tp, s.parallel.dp)
        } else {
            format!(
                "{} · micro-batch {} × {} · checkpointing {}",
                layout_label(&s.parallel),
                s.training.micro_batch,
                s.training.grad_accum,
                crate::labels::checkpointing_label(s.training.checkpointing)
            )
        });
        r.hours = Some(run.hours);
        r.cost = run.cost;
        r.gpu_hours = Some(run.gpu_hours);
        r.energy_kwh = Some(run.energy_kwh);
        r.fits = true;
        r.scenario = Some(s);
    }
    r
}

/// The layout search's fastest layout on `gpus` GPUs.
fn training_plan(on: &Scenario, gpus: u64) -> Option<Scenario> {
    search(on, gpus, 1).results.into_iter().next().map(|c| c.scenario)
}

/// The fastest serving layout on `gpus` GPUs: tp a power of two up to [`MAX_TP`] dividing the
/// heads (and the KV heads, or divided by them), the rest replicas; it fits when the engine
/// starts and the memory fits.
fn serving_plan(on: &Scenario, gpus: u64) -> Option<Scenario> {
    let arch = on.model.architecture()?;
    let (heads, kv) = arch.transformer().map_or((1, 1), |t| (t.attention.heads, t.attention.kv_heads));
    let mut best: Option<(f64, Scenario)> = None;
    for tp in (0..4).map(|i| 1u64 << i).filter(|&tp| tp <= MAX_TP && gpus.is_multiple_of(tp)) {
        if heads % tp != 0 || (kv % tp != 0 && tp % kv != 0) {
            continue;
        }
        let mut s = on.clone();
        s.parallel.tp = tp;
        s.parallel.dp = gpus / tp;
        s.parallel.pp = 1;
        s.parallel.cp = 1;
        s.parallel.zero = Zero::Off;
        let b = estimate(&s);
        let starts = b.serving.as_ref().is_none_or(|r| r.starts());
        if !(b.fits && starts) {
            continue;
        }
        let hours = run_at_price(&s, &b, None).hours;
        if hours > 0.0 && best.as_ref().is_none_or(|(h, _)| hours < *h) {
            best = Some((hours, s));
        }
    }
    best.map(|(_, s)| s)
}

/// Sorts by cost (no cost: after, by hours; not fitting: last, by device and count) and
/// marks the cheapest and the fastest.
pub fn rank(rows: &mut [RentRow]) {
    let key = |r: &RentRow| (!r.fits, r.cost.is_none(), r.cost.unwrap_or(0.0), r.hours.unwrap_or(f64::INFINITY));
    rows.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.cmp(&kb.1)).then(ka.2.total_cmp(&kb.2)).then(ka.3.total_cmp(&kb.3)).then(a.gpus.cmp(&b.gpus))
    });
    if let Some(first) = rows.iter_mut().find(|r| r.cost.is_some()) {
        first.cheapest = true;
    }
    let fastest = rows.iter().enumerate().filter_map(|(i, r)| r.hours.map(|h| (i, h))).min_by(|a, b| a.1.total_cmp(&b.1)).map(|(i, _)| i);
    if let Some(i) = fastest {
        rows[i].fastest = true;
    }
}

/// The same rows fastest first (rows that fit nothing last), for "ranked by time"; the
/// cheapest and fastest marks stay where [`rank`] put them.
pub fn by_time(rows: &mut [RentRow]) {
    rows.sort_by(|a, b| {
        (!a.fits)
            .cmp(&!b.fits)
            .then(a.hours.unwrap_or(f64::INFINITY).total_cmp(&b.hours.unwrap_or(f64::INFINITY)))
            .then(a.cost.unwrap_or(f64::INFINITY).total_cmp(&b.cost.unwrap_or(f64::INFINITY)))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_powers_of_two_and_the_budget() {
        assert_eq!(counts(1), vec![1]);
        assert_eq!(counts(8), vec![1, 2, 4, 8]);
        assert_eq!(counts(12), vec![1, 2, 4, 8, 12]);
    }

    #[test]
    fn prices_files_name_their_bad_entries() {
        assert_eq!(PriceBook::from_json(r#"{"h100-sxm-80gb": 2.1}"#).unwrap().0["h100-sxm-80gb"], 2.1);
        let e = PriceBook::from_json(r#"{"h999": 1}"#).unwrap_err().to_string();
        assert!(e.contains("prices.h999"), "{e}");
        let e = PriceBook::from_json(r#"{"a100-80gb": -1}"#).unwrap_err().to_string();
        assert!(e.contains("prices.a100-80gb"), "{e}");
        assert!(PriceBook::from_json("[1]").is_err());
    }

    /// The order and the marks, on rows made by hand.
    #[test]
    fn ranking_by_cost_then_hours() {
        let r = |device: &str, cost: Option<f64>, hours: Option<f64>| RentRow {
            device: device.into(),
            gpus: 1,
            layout: None,
            hours,
            cost,
            fits: hours.is_some(),
            price: None,
            gpu_hours: None,
            energy_kwh: None,
            cheapest: false,
            fastest: false,
            scenario: None,
        };
        let mut rows = vec![r("none", None, None), r("dear", Some(9.0), Some(1.0)), r("unpriced", None, Some(0.5)), r("cheap", Some(3.0), Some(4.0))];
        rank(&mut rows);
        let order: Vec<_> = rows.iter().map(|r| r.device.as_str()).collect();
        assert_eq!(order, ["cheap", "dear", "unpriced", "none"]);
        assert!(rows[0].cheapest && !rows[1].cheapest);
        assert!(rows[2].fastest && !rows[1].fastest);
        by_time(&mut rows);
        let order: Vec<_> = rows.iter().map(|r| r.device.as_str()).collect();
        assert_eq!(order, ["unpriced", "dear", "cheap", "none"]);
        assert!(rows[0].fastest && rows[2].cheapest);
    }
}
