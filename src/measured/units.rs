//! Numbers and byte units as the measuring tools print them: whole numbers only, and the
//! binary units PyTorch's `_format_size` and nvidia-smi use (`B`, `KiB`, `MiB`, `GiB`, `TiB`, `PiB`).
//! Errors are plain sentences; the caller adds the line.

/// More memory than any one GPU has (1 PiB): a reading above it is a typo or garbage.
pub(crate) const MAX_BYTES: u64 = 1 << 50;

/// Bytes per unit, for the units the tools print.
pub(crate) fn unit_bytes(unit: &str) -> Option<u64> {
    Some(match unit {
        "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "PiB" => 1 << 50,
        _ => return None,
    })
}

/// A whole, non-negative number (`"10240"`); `what` names it in the error.
pub(crate) fn whole_number(text: &str, what: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if t.starts_with('-') && t.len() > 1 {
        return Err(format!("{what} is negative ({})", quote(t)));
    }
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{what}: expected a whole number, got {}", quote(t)));
    }
    t.parse::<u64>().map_err(|_| format!("{what}: {} is too large", quote(t)))
}

/// `"  1908 MiB"` → bytes. `default_unit` applies when the text has no unit (nvidia-smi's
/// `nounits`); without one a missing unit is an error.
pub(crate) fn size(text: &str, default_unit: Option<u64>, what: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+' || c == '.')).unwrap_or(t.len());
    let (number, unit) = (t[..split].trim(), t[split..].trim());
    if number.is_empty() {
        return Err(if t.is_empty() { format!("{what} is empty") } else { format!("{what}: expected a number and a unit, got {}", quote(t)) });
    }
    let n = whole_number(number, what)?;
    let per = if unit.is_empty() {
        default_unit.ok_or_else(|| format!("{what}: {} has no unit (expected B, KiB, MiB, GiB, TiB or PiB)", quote(t)))?
    } else {
        unit_bytes(unit).ok_or_else(|| format!("{what}: unknown unit {} (expected B, KiB, MiB, GiB, TiB or PiB)", quote(unit)))?
    };
    n.checked_mul(per).filter(|b| *b <= MAX_BYTES).ok_or_else(|| format!("{what}: {} is more memory than any GPU has", quote(t)))
}

/// The unit a size cell was printed in, in bytes (1 when absent or unknown).
pub(crate) fn unit_of(text: &str) -> u64 {
    let t = text.trim();
    t.rsplit(' ').next().and_then(unit_bytes).unwrap_or(1)
}

/// User text for a message: quoted, escaped (never a newline), at most 40 characters.
pub(crate) fn quote(text: &str) -> String {
    format!("{:?}", crate::safe_text::clip(text, 40))
}

/// The name of a unit of `bytes` (1024-based), for notes.
pub(crate) fn unit_name(bytes: u64) -> &'static str {
    match bytes {
        1 => "1 B",
        1024 => "1 KiB",
        1_048_576 => "1 MiB",
        1_073_741_824 => "1 GiB",
        1_099_511_627_776 => "1 TiB",
        _ => "1 PiB",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_every_unit() {
        assert_eq!(size("  1908 MiB", None, "x"), Ok(1908 << 20));
        assert_eq!(size("0 B  ", None, "x"), Ok(0));
        assert_eq!(size("700000 B", None, "x"), Ok(700_000));
        assert_eq!(size("2 TiB", None, "x"), Ok(2 << 40));
        assert_eq!(size("10240", Some(1 << 20), "x"), Ok(10240 << 20));
        assert!(size("10240", None, "x").unwrap_err().contains("no unit"));
        assert!(size("12 MB", None, "x").unwrap_err().contains("unknown unit \"MB\""));
        assert!(size("-5 MiB", None, "x").unwrap_err().contains("negative"));
        assert!(size("1.5 GiB", None, "x").unwrap_err().contains("whole number"));
        assert!(size("99999999999 PiB", None, "x").unwrap_err().contains("more memory than any GPU has"));
        assert!(size("", None, "x").unwrap_err().contains("empty"));
    }

    #[test]
    fn quotes_are_one_line_and_short() {
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        assert!(quote(&"x".repeat(100)).chars().count() < 45);
    }
}
