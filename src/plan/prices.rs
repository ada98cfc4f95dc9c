//! Example prices per GPU-hour for the catalogue's GPUs, on-demand and spot, each with where
//! it comes from and when. They are examples to start from, not live quotes: Headroom makes
//! no network request, the same GPU rents for several times more at one provider than at
//! another (gmicloud.ai, "H100 price range comparison", 13 April 2026: $0.52 to $14.90), and
//! the user's own figure ([`crate::scenario::RunSpec::price_per_gpu_hour`], or a `--prices`
//! file) replaces them.
//!
//! What this is not: a price feed, or a claim about any one provider.

use serde::{Deserialize, Serialize};

use crate::scenario::Pricing;

/// One GPU's example prices, USD per GPU-hour.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExamplePrice {
    pub device: &'static str,
    pub on_demand: f64,
    /// `None` where no spot figure was found: spot rows then need the user's price.
    pub spot: Option<f64>,
    /// Where the on-demand figure comes from, with its date.
    pub source: &'static str,
    /// Where the spot figure comes from (empty without one).
    pub spot_source: &'static str,
}

const GPU_INDEX: &str = "aimultiple.com Cloud GPU Rental Price Index, 20 May 2026 (H100 cohort median ≈ $2.95; legacy cohort, V100, median $0.97)";
const PRICEGPU: &str = "pricegpu.pages.dev, \"H100 vs A100 cloud pricing\", early 2026 (A100 80GB $1.49–2.49, H100 SXM $2.49–3.99 on-demand)";
const MERCATUS: &str = "mercatus-ai.com, \"Cloud GPU pricing\", May 2026 (specialty clouds: H200 SXM $3.50–4.50 on-demand)";
const GPUTRACKER: &str =
    "gputracker.dev, \"Cost per token\", 19 March 2026 (RTX 4090 $0.34 on-demand; cheapest spot: H100 $0.80, RTX 4090 $0.17, RTX 5090 $0.13, RTX 3090 $0.05, L40S $0.26, T4 $0.07)";
const AIAPI: &str = "aiapiplaybook.com, \"GPU cloud pricing 2026\", 15 January 2026 (A100 80GB spot $0.86)";
const EXAMPLE: &str = "example figure, December 2026, no published source read: replace it with your own";

/// The examples, one per GPU that has one (no MIG slices: clouds rent whole GPUs or their own
/// fractions). On-demand figures take the low end of the cited range; where no source gave a
/// figure the price is marked [`EXAMPLE`].
#[rustfmt::skip] // a table: one GPU per line
pub const EXAMPLE_PRICES: &[ExamplePrice] = &[
    ExamplePrice { device: "h100-sxm-80gb", on_demand: 2.95, spot: Some(0.80), source: GPU_INDEX, spot_source: GPUTRACKER },
    ExamplePrice { device: "a100-80gb", on_demand: 1.49, spot: Some(0.86), source: PRICEGPU, spot_source: AIAPI },
    ExamplePrice { device: "h200-141gb", on_demand: 3.50, spot: None, source: MERCATUS, spot_source: "" },
    ExamplePrice { device: "rtx-4090-24gb", on_demand: 0.34, spot: Some(0.17), source: GPUTRACKER, spot_source: GPUTRACKER },
    ExamplePrice { device: "rtx-5090-32gb", on_demand: 0.69, spot: Some(0.13), source: EXAMPLE, spot_source: GPUTRACKER },
    ExamplePrice { device: "rtx-3090-24gb", on_demand: 0.22, spot: Some(0.05), source: EXAMPLE, spot_source: GPUTRACKER },
    ExamplePrice { device: "l40s-48gb", on_demand: 0.99, spot: Some(0.26), source: EXAMPLE, spot_source: GPUTRACKER },
    ExamplePrice { device: "t4-16gb", on_demand: 0.35, spot: Some(0.07), source: EXAMPLE, spot_source: GPUTRACKER },
    ExamplePrice { device: "v100-32gb", on_demand: 0.97, spot: None, source: GPU_INDEX, spot_source: "" },
    ExamplePrice { device: "h100-pcie-80gb", on_demand: 2.49, spot: None, source: EXAMPLE, spot_source: "" },
    ExamplePrice { device: "a100-40gb", on_demand: 1.29, spot: None, source: EXAMPLE, spot_source: "" },
    ExamplePrice { device: "b200-192gb", on_demand: 5.50, spot: None, source: EXAMPLE, spot_source: "" },
    ExamplePrice { device: "mi300x-192gb", on_demand: 2.50, spot: None, source: EXAMPLE, spot_source: "" },
    ExamplePrice { device: "l4-24gb", on_demand: 0.80, spot: None, source: EXAMPLE, spot_source: "" },
    ExamplePrice { device: "a10g-24gb", on_demand: 1.00, spot: None, source: EXAMPLE, spot_source: "" },
];

/// A price the plan uses, and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// USD per GPU-hour.
    pub per_gpu_hour: f64,
    /// "yours", "your prices file", or the example's source and date.
    pub source: String,
}

/// The example price of `device` for this kind of capacity, if the table has one.
pub fn example_price(device: &str, pricing: Pricing) -> Option<Price> {
    let p = EXAMPLE_PRICES.iter().find(|p| p.device == device)?;
    let per_gpu_hour = match pricing {
        Pricing::OnDemand => p.on_demand,
        Pricing::Spot => p.spot?,
    };
    let kind = match pricing {
        Pricing::OnDemand => "on-demand",
        Pricing::Spot => "spot",
    };
    let source = if pricing == Pricing::Spot { p.spot_source } else { p.source };
    Some(Price { per_gpu_hour, source: format!("example {kind} price: {source}") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::device::device_preset;

    #[test]
    fn every_example_names_a_catalogue_gpu_once_with_a_positive_price() {
        let mut seen = std::collections::HashSet::new();
        for p in EXAMPLE_PRICES {
            assert!(device_preset(p.device).is_some_and(|d| !d.mig), "{}", p.device);
            assert!(seen.insert(p.device), "{} twice", p.device);
            assert!(p.on_demand > 0.0 && p.spot.is_none_or(|s| s > 0.0 && s < p.on_demand), "{}", p.device);
            assert!(!p.source.is_empty());
        }
    }

    #[test]
    fn spot_without_a_figure_is_none_not_a_guess() {
        assert_eq!(example_price("h200-141gb", Pricing::Spot), None);
        assert_eq!(example_price("h100-sxm-80gb", Pricing::OnDemand).map(|p| p.per_gpu_hour), Some(2.95));
        assert!(example_price("a100-80gb-mig-3g.40gb", Pricing::OnDemand).is_none());
    }
}
