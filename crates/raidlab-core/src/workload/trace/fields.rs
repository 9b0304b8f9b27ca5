//! Field splitting and number parsing shared by the format parsers.
//!
//! Everything here works on borrowed `&str` slices of the current line and allocates only to
//! build an error message. Errors are plain strings; the reader adds the file and line.

/// Split `line` at `delimiter` into exactly `N` trimmed fields.
///
/// `layout` names the fields for the error message (`"Timestamp,Offset,Size,IOType,VolumeID"`).
pub(crate) fn split_exact<'a, const N: usize>(
    line: &'a str,
    delimiter: char,
    layout: &str,
) -> Result<[&'a str; N], String> {
    let (fields, count) = split_first::<N>(line, delimiter);
    if count == N {
        Ok(fields)
    } else {
        Err(format!("expected {N} fields ({layout}), found {count}"))
    }
}

/// Split `line` at `delimiter` into at least `N` trimmed fields; fields after the `N`th are
/// ignored.
pub(crate) fn split_at_least<'a, const N: usize>(
    line: &'a str,
    delimiter: char,
    layout: &str,
) -> Result<[&'a str; N], String> {
    let (fields, count) = split_first::<N>(line, delimiter);
    if count >= N {
        Ok(fields)
    } else {
        Err(format!("expected at least {N} fields ({layout}), found {count}"))
    }
}

/// Split `line` at runs of whitespace into exactly `N` fields (the whitespace-separated
/// formats). `layout` names the fields for the error message.
pub(crate) fn split_whitespace_exact<'a, const N: usize>(line: &'a str, layout: &str) -> Result<[&'a str; N], String> {
    if line.is_ascii() {
        // What traces hold: split on bytes, at the ASCII characters `char::is_whitespace`
        // takes for whitespace (tab, line feed, vertical tab, form feed, carriage return and
        // space), without decoding characters.
        let blank = |b: u8| matches!(b, b'\t'..=b'\r' | b' ');
        let (bytes, mut taken, mut count, mut i) = (line.as_bytes(), [""; N], 0, 0);
        loop {
            while i < bytes.len() && blank(bytes[i]) {
                i += 1;
            }
            if i == bytes.len() {
                break;
            }
            let start = i;
            while i < bytes.len() && !blank(bytes[i]) {
                i += 1;
            }
            if count < N {
                taken[count] = &line[start..i];
            }
            count += 1;
        }
        return if count == N { Ok(taken) } else { Err(format!("expected {N} fields ({layout}), found {count}")) };
    }
    let mut fields = line.split_whitespace();
    let mut taken = [""; N];
    let mut count = 0;
    for field in fields.by_ref().take(N) {
        taken[count] = field;
        count += 1;
    }
    let count = count + fields.count();
    if count == N {
        Ok(taken)
    } else {
        Err(format!("expected {N} fields ({layout}), found {count}"))
    }
}

/// The first `N` fields (trimmed; missing ones empty) and the total number of fields.
fn split_first<const N: usize>(line: &str, delimiter: char) -> ([&str; N], usize) {
    let mut fields = [""; N];
    let mut count = 0;
    for field in line.split(delimiter) {
        if count < N {
            fields[count] = field.trim();
        }
        count += 1;
    }
    (fields, count)
}

/// A non-negative whole number.
pub(crate) fn parse_u64(name: &str, text: &str) -> Result<u64, String> {
    // One pass for what traces hold, 1 to 19 plain digits (which cannot overflow); anything
    // else (a sign, more digits, a mistake) goes through the library, which words the errors.
    let bytes = text.as_bytes();
    if (1..=19).contains(&bytes.len()) && bytes.iter().all(u8::is_ascii_digit) {
        return Ok(bytes.iter().fold(0, |value, digit| value * 10 + u64::from(digit - b'0')));
    }
    if text.starts_with('-') && text.len() > 1 {
        return Err(format!("{name} must not be negative, got \"{text}\""));
    }
    text.parse::<u64>().map_err(|err| match err.kind() {
        std::num::IntErrorKind::PosOverflow => format!("{name} \"{text}\" is out of range"),
        _ => format!("bad {name} \"{text}\": expected a whole number"),
    })
}

/// A whole number greater than zero (sizes).
pub(crate) fn parse_positive_u64(name: &str, text: &str) -> Result<u64, String> {
    match parse_u64(name, text)? {
        0 => Err(format!("{name} must be positive, got \"{text}\"")),
        value => Ok(value),
    }
}

/// A non-negative decimal number multiplied by 10^9 and truncated to an integer, parsed
/// exactly (`"1456095145.133076000"` → 1456095145133076000). Scientific notation
/// (`"1.5e-3"`) is accepted through `f64`, with `f64` precision.
pub(crate) fn parse_decimal_e9(name: &str, text: &str) -> Result<u128, String> {
    // One pass for what traces hold, plain decimals ("1456095145.133076"), in 64 bits: up to
    // 19 whole digits cannot overflow. Anything else (a sign, an exponent, more digits, a
    // mistake) goes the general way below, which also words the errors.
    let bytes = text.as_bytes();
    let (mut whole, mut i) = (0u64, 0);
    while i < bytes.len().min(19) && bytes[i].is_ascii_digit() {
        whole = whole * 10 + u64::from(bytes[i] - b'0');
        i += 1;
    }
    let (mut nanos, mut places, mut dot) = (0u64, 0, false);
    if i < bytes.len() && bytes[i] == b'.' {
        dot = true;
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            if places < 9 {
                nanos = nanos * 10 + u64::from(bytes[i] - b'0');
                places += 1;
            }
            i += 1;
        }
    }
    if i == bytes.len() && i > usize::from(dot) {
        return Ok(u128::from(whole) * 1_000_000_000 + u128::from(nanos * 10u64.pow(9 - places)));
    }
    parse_decimal_e9_general(name, text)
}

/// [`parse_decimal_e9`] for any text: signs, exponents, long numbers and errors.
fn parse_decimal_e9_general(name: &str, text: &str) -> Result<u128, String> {
    let bad = || format!("bad {name} \"{text}\": expected a non-negative decimal number");
    if text.starts_with('-') && text.len() > 1 {
        return Err(format!("{name} must not be negative, got \"{text}\""));
    }
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.contains(['e', 'E']) {
        let value: f64 = digits.parse().map_err(|_| bad())?;
        if !value.is_finite() || value < 0.0 {
            return Err(bad());
        }
        return Ok((value * 1e9) as u128);
    }
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty() {
        return Err(bad());
    }
    if !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let mut value: u128 = 0;
    for digit in whole.bytes() {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u128::from(digit - b'0')))
            .ok_or_else(|| format!("{name} \"{text}\" is out of range"))?;
    }
    let mut nanos: u128 = 0;
    let mut places = 0;
    for digit in fraction.bytes().take(9) {
        nanos = nanos * 10 + u128::from(digit - b'0');
        places += 1;
    }
    nanos *= 10u128.pow(9 - places);
    value
        .checked_mul(1_000_000_000)
        .and_then(|v| v.checked_add(nanos))
        .ok_or_else(|| format!("{name} \"{text}\" is out of range"))
}

/// Non-negative decimal seconds to whole nanoseconds (exact, truncating below 1 ns).
pub(crate) fn parse_seconds_ns(name: &str, text: &str) -> Result<u64, String> {
    let nanos = parse_decimal_e9(name, text)?;
    u64::try_from(nanos).map_err(|_| format!("{name} \"{text}\" is out of range"))
}

/// `value * factor` for unit conversion, with an error on overflow.
pub(crate) fn scale_u64(name: &str, text: &str, value: u64, factor: u64) -> Result<u64, String> {
    value.checked_mul(factor).ok_or_else(|| format!("{name} \"{text}\" is out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_exact_trims_and_counts_fields() {
        let fields: [&str; 3] = split_exact(" a, b ,c", ',', "A,B,C").unwrap();
        assert_eq!(fields, ["a", "b", "c"]);
        let err = split_exact::<3>("a,b", ',', "A,B,C").unwrap_err();
        assert_eq!(err, "expected 3 fields (A,B,C), found 2");
        assert!(split_exact::<3>("a,b,c,d", ',', "A,B,C").is_err());
    }

    #[test]
    fn whitespace_fields_are_split_at_runs_of_blanks_and_counted() {
        assert_eq!(split_whitespace_exact::<3>("a \t b   c", "A B C"), Ok(["a", "b", "c"]));
        assert_eq!(split_whitespace_exact::<3>("a b", "A B C").unwrap_err(), "expected 3 fields (A B C), found 2");
        assert!(split_whitespace_exact::<3>("a b c d", "A B C").unwrap_err().ends_with("found 4"));
    }

    #[test]
    fn split_at_least_ignores_trailing_fields() {
        let fields: [&str; 2] = split_at_least("a,b,c,d", ',', "A,B").unwrap();
        assert_eq!(fields, ["a", "b"]);
        assert!(split_at_least::<2>("a", ',', "A,B").is_err());
    }

    #[test]
    fn whole_numbers_reject_signs_garbage_and_zero_sizes() {
        assert_eq!(parse_u64("offset", "0"), Ok(0));
        assert_eq!(parse_u64("offset", "18446744073709551615"), Ok(u64::MAX));
        assert!(parse_u64("offset", "18446744073709551616").unwrap_err().contains("out of range"));
        assert!(parse_u64("offset", "-5").unwrap_err().contains("negative"));
        assert!(parse_u64("offset", "12x").unwrap_err().contains("bad offset"));
        assert!(parse_u64("offset", "").unwrap_err().contains("bad offset"));
        assert!(parse_positive_u64("size", "0").unwrap_err().contains("positive"));
        assert!(parse_positive_u64("size", "-4096").unwrap_err().contains("negative"));
    }

    /// The one-pass whole numbers are the library's, around 19 and 20 digits too; ASCII
    /// lines split as `split_whitespace` splits them (vertical tab and form feed included).
    #[test]
    fn the_fast_paths_agree_with_the_library() {
        let mut rng = crate::sim::RngStream::new(9, crate::sim::StreamId::Policy(0));
        let mut texts: Vec<String> = ["0", "00", "+5", "9999999999999999999", "10000000000000000000", "18446744073709551616", "1_0", " 1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        texts.extend((0..2000).map(|_| {
            let digits = format!("{}{}", rng.below(u64::MAX), rng.below(10));
            digits[..1 + rng.below(digits.len() as u64) as usize].to_string()
        }));
        for text in texts {
            let library = text.parse::<u64>().ok();
            assert_eq!(parse_u64("n", &text).ok(), library, "{text:?}");
        }
        for line in ["a b", " a\tb ", "a\x0bb\x0cc", "a\r\nb", "", "  ", "a  b\t\tc d", "a\u{3000}b c", "é b c"] {
            let expected: Vec<&str> = line.split_whitespace().collect();
            let split = |n| -> Result<Vec<&str>, String> {
                match n {
                    2 => split_whitespace_exact::<2>(line, "").map(|f| f.to_vec()),
                    _ => split_whitespace_exact::<3>(line, "").map(|f| f.to_vec()),
                }
            };
            for n in [2, 3] {
                match split(n) {
                    Ok(fields) => assert_eq!(fields, expected, "{line:?}"),
                    Err(err) => assert!(expected.len() != n && err.ends_with(&format!("found {}", expected.len())), "{line:?}: {err}"),
                }
            }
        }
    }

    #[test]
    fn decimal_seconds_parse_exactly_to_nanoseconds() {
        assert_eq!(parse_seconds_ns("t", "1456095145.133076000"), Ok(1_456_095_145_133_076_000));
        assert_eq!(parse_seconds_ns("t", "0.000000"), Ok(0));
        assert_eq!(parse_seconds_ns("t", "12"), Ok(12_000_000_000));
        assert_eq!(parse_seconds_ns("t", "12."), Ok(12_000_000_000));
        assert_eq!(parse_seconds_ns("t", ".5"), Ok(500_000_000));
        assert_eq!(parse_seconds_ns("t", "1.0000000019"), Ok(1_000_000_001));
        assert_eq!(parse_seconds_ns("t", "1.5e-3"), Ok(1_500_000));
        assert!(parse_seconds_ns("t", "-1.0").unwrap_err().contains("negative"));
        for bad in ["", ".", "1.2.3", "abc", "1,5", "nan", "inf"] {
            assert!(parse_seconds_ns("t", bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_seconds_ns("t", "99999999999999").unwrap_err().contains("out of range"));
    }

    #[test]
    fn the_one_pass_and_the_general_decimal_parsers_agree() {
        let mut cases: Vec<String> = [
            "", ".", "0", "7", "12.", ".5", "+1.5", "-0", "1..2", "1.2.3", "1e3", "1.5E-3", " 1", "1 ", "١",
            "9999999999999999999", "99999999999999999999", "18446744073709551616.5", "0.0000000019",
            "123456789012345678901234567890.1", "3.14x", "00012.00034000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut rng = crate::sim::RngStream::new(3, crate::sim::StreamId::Policy(0));
        for _ in 0..2000 {
            let digits = |rng: &mut crate::sim::RngStream, n: u64| -> String {
                (0..n).map(|_| char::from(b'0' + rng.below(10) as u8)).collect()
            };
            let (whole, fraction) = (rng.below(24), rng.below(14));
            let text = match rng.below(3) {
                0 => digits(&mut rng, whole),
                _ => format!("{}.{}", digits(&mut rng, whole), digits(&mut rng, fraction)),
            };
            cases.push(text);
        }
        for text in cases {
            assert_eq!(parse_decimal_e9("t", &text), parse_decimal_e9_general("t", &text), "{text:?}");
        }
    }
}
