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

/// Wall-clock hours of a run: `45 min`, `7.2 h`, `3.4 days` (over 48 h).
pub fn hours(h: f64) -> String {
    if !h.is_finite() {
        "—".into()
    } else if h < 1.0 {
        format!("{:.0} min", h * 60.0)
    } else if h < 48.0 {
        format!("{h:.1} h")
    } else {
        format!("{:.1} days", h / 24.0)
    }
}

/// US dollars: `$0.42`, `$12.30`, `$1,234`.
pub fn usd(x: f64) -> String {
    if !x.is_finite() {
        "—".into()
    } else if x < 100.0 {
        format!("${x:.2}")
    } else {
        format!("${}", thousands(x.round() as u64))
    }
}

/// Energy: `850 Wh`, `12.3 kWh`, `4.5 MWh`.
pub fn energy_kwh(kwh: f64) -> String {
    if !kwh.is_finite() {
        "—".into()
    } else if kwh < 1.0 {
        format!("{:.0} Wh", kwh * 1000.0)
    } else if kwh < 1000.0 {
        format!("{kwh:.1} kWh")
    } else {
        format!("{:.1} MWh", kwh / 1000.0)
    }
}

/// `131,072`: an integer with thousands separated by commas, as Python's `f"{n:,}"` (and so
/// vLLM's logs) prints it.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A real number short enough for a one-line message: as typed for everyday magnitudes,
/// in exponent notation (`1e-300`, `1e308`) otherwise, so no value prints hundreds of digits.
pub fn short_real(v: f64) -> String {
    if v == 0.0 || (v.is_finite() && (1e-4..1e6).contains(&v.abs())) {
        v.to_string()
    } else {
        format!("{v:e}")
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

/// A number as people type it and links carry it (`12`, `1.5`, `.5`, `2e3`, `-inf`): the
/// syntax of `str::parse::<f64>` (an optional sign, digits with at most one point, an
/// optional exponent; `inf`, `infinity`, `nan` in any case), and nothing else (no spaces, no
/// `_`). On the page the checked text goes to JavaScript's `parseFloat`, which rounds
/// correctly too, so the WASM carries no copy of Rust's float parser and its 30 KB table
/// of powers of ten (docs/wasm-size.md); natively it is `str::parse`.
pub fn parse_f64(text: &str) -> Option<f64> {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let negative = text.starts_with('-');
    if ["inf", "infinity"].iter().any(|w| unsigned.eq_ignore_ascii_case(w)) {
        return Some(if negative { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    if unsigned.eq_ignore_ascii_case("nan") {
        return Some(f64::NAN);
    }
    let b = unsigned.as_bytes();
    let digits = |i: usize| b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let whole = digits(0);
    let mut i = whole;
    let mut fraction = 0;
    if b.get(i) == Some(&b'.') {
        fraction = digits(i + 1);
        i += 1 + fraction;
    }
    if whole + fraction == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exponent = digits(i);
        if exponent == 0 {
            return None;
        }
        i += exponent;
    }
    if i != b.len() {
        return None;
    }
    #[cfg(target_arch = "wasm32")]
    return Some(js_sys::parse_float(text));
    #[cfg(not(target_arch = "wasm32"))]
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_units_read_as_people_say_them() {
        assert_eq!(hours(0.75), "45 min");
        assert_eq!(hours(7.21), "7.2 h");
        assert_eq!(hours(81.6), "3.4 days");
        assert_eq!(usd(0.423), "$0.42");
        assert_eq!(usd(1234.4), "$1,234");
        assert_eq!(energy_kwh(0.85), "850 Wh");
        assert_eq!(energy_kwh(4500.0), "4.5 MWh");
    }

    /// `parse_f64` takes exactly what `str::parse::<f64>` takes, with the same value.
    #[test]
    fn parse_f64_is_str_parse() {
        for t in [
            "0", "12", "1.5", ".5", "5.", "-0", "+3", "2e3", "2E-3", "1e+5", "1e400", "-1e-400", "0.1", "123456789012345678901234567890", "inf", "-Infinity", "NaN", "", ".", "-",
            "e5", "1e", "1e+", "1.2.3", " 1", "1 ", "1_000", "1,5", "0x10", "infinit", "--1", "+-1", "1e5.5", "١",
        ] {
            let want = t.parse::<f64>().ok();
            let got = parse_f64(t);
            assert_eq!(got.map(f64::to_bits).filter(|_| !want.is_some_and(f64::is_nan)), want.map(f64::to_bits).filter(|x| !f64::from_bits(*x).is_nan()), "{t:?}");
            assert_eq!(got.is_some_and(f64::is_nan), want.is_some_and(f64::is_nan), "{t:?}");
        }
    }

    #[test]
    fn short_real_never_prints_hundreds_of_digits() {
        assert_eq!(short_real(0.93), "0.93");
        assert_eq!(short_real(1.5), "1.5");
        assert_eq!(short_real(0.0), "0");
        assert_eq!(short_real(1e-300), "1e-300");
        assert_eq!(short_real(1e308), "1e308");
        assert_eq!(short_real(f64::NAN), "NaN");
    }

    #[test]
    fn thousands_separates_like_python() {
        assert_eq!(thousands(421_872), "421,872");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(0), "0");
    }

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
