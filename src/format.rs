//! Human-readable units for byte counts, times and rates, shared by the CLI and the page.
//! The model returns raw numbers; rounding happens only here.

use serde::{Deserialize, Serialize};

/// Binary (GiB, 2³⁰) or decimal (GB, 10⁹) units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    #[default]
    Gib,
    Gb,
}

impl Units {
    /// Bytes per "giga" unit.
    pub fn giga(self) -> f64 {
        match self {
            Units::Gib => 1024.0 * 1024.0 * 1024.0,
            Units::Gb => 1e9,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Units::Gib => "GiB",
            Units::Gb => "GB",
        }
    }
}

/// `12.34 GiB`, `512.0 MiB`, `3.21 TB`: three significant digits, unit by magnitude.
pub fn bytes(n: u64, units: Units) -> String {
    let (base, names): (f64, [&str; 5]) = match units {
        Units::Gib => (1024.0, ["B", "KiB", "MiB", "GiB", "TiB"]),
        Units::Gb => (1000.0, ["B", "KB", "MB", "GB", "TB"]),
    };
    let mut value = n as f64;
    let mut i = 0;
    while value >= base && i < names.len() - 1 {
        value /= base;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else if value >= 100.0 {
        format!("{value:.0} {}", names[i])
    } else if value >= 10.0 {
        format!("{value:.1} {}", names[i])
    } else {
        format!("{value:.2} {}", names[i])
    }
}

/// Bytes as a number of giga units with two decimals (`78.41`), for tables and axes.
pub fn giga(n: u64, units: Units) -> f64 {
    (n as f64 / units.giga() * 100.0).round() / 100.0
}

/// `1.23 s`, `456 ms`, `4.2 ms`, `160 µs`, `2.1 min`, `3.4 h`.
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        return "—".into();
    }
    if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 0.01 {
        format!("{:.1} ms", s * 1000.0)
    } else if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 120.0 {
        format!("{s:.2} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// `8.03 B`, `124 M`, `25.6 M` parameters.
pub fn count(n: u64) -> String {
    let v = n as f64;
    if v >= 1e12 {
        format!("{:.2} T", v / 1e12)
    } else if v >= 1e9 {
        format!("{:.2} B", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} K", v / 1e3)
    } else {
        format!("{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_unit_by_magnitude() {
        assert_eq!(bytes(512, Units::Gib), "512 B");
        assert_eq!(bytes(80 * 1024 * 1024 * 1024, Units::Gib), "80.0 GiB");
        assert_eq!(bytes(1_500_000_000, Units::Gb), "1.50 GB");
        assert_eq!(count(8_030_261_248), "8.03 B");
        assert_eq!(seconds(0.25), "250 ms");
        assert_eq!(seconds(0.0042), "4.2 ms");
        assert_eq!(seconds(0.00016), "160 µs");
    }
}
