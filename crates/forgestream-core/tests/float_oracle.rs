//! The JSON reader's floats (`wire::json`, its own parser since issue 16's size work) against
//! `str::parse::<f64>`, the oracle: on every JSON number both give the same bits, or the reader
//! refuses a number `core` reads as infinite ("number out of range").
//!
//! Inputs: random doubles printed every way Rust prints them, random digit strings with random
//! exponents, and the hard cases of correct rounding — the exact decimal midpoint between two
//! neighbouring doubles (ties go to even), and just above and just below it, from subnormals to
//! the overflow threshold — plus long and tiny inputs at the edges.

use forgestream_core::wire::json;
use proptest::prelude::*;

/// The reader's value of `text` against `core`'s.
fn agree(text: &str) -> Result<(), TestCaseError> {
    let ours = json::from_str::<f64>(text).map(f64::to_bits).ok();
    let core = text
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(f64::to_bits);
    prop_assert_eq!(ours, core, "{}", text);
    Ok(())
}

/// Little-endian decimal digits times `factor`.
fn mul(digits: &mut Vec<u8>, factor: u32) {
    let mut carry = 0u32;
    for d in digits.iter_mut() {
        let v = u32::from(*d) * factor + carry;
        *d = (v % 10) as u8;
        carry = v / 10;
    }
    while carry > 0 {
        digits.push((carry % 10) as u8);
        carry /= 10;
    }
}

/// The exact decimal text of `odd × 2^exp2`.
fn exact(odd: u64, exp2: i32) -> String {
    let mut digits: Vec<u8> = odd.to_string().bytes().rev().map(|b| b - b'0').collect();
    let factor = if exp2 >= 0 { 2 } else { 5 };
    for _ in 0..exp2.unsigned_abs() {
        mul(&mut digits, factor);
    }
    let text: String = digits.iter().rev().map(|d| char::from(b'0' + d)).collect();
    if exp2 >= 0 {
        text
    } else {
        // × 5^k / 10^k: the point k digits from the right.
        format!("{text}e-{}", exp2.unsigned_abs())
    }
}

/// The midpoint above the positive finite double `bits`, exactly, as `(odd, exp2)`.
fn midpoint(bits: u64) -> (u64, i32) {
    let field = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (m, e) = if field == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, field - 1075)
    };
    (2 * m + 1, e - 1)
}

/// A decimal integer's text less one (it is at least 1), without leading zeros.
fn decrement(text: &str) -> String {
    let mut digits = text.as_bytes().to_vec();
    for d in digits.iter_mut().rev() {
        if *d == b'0' {
            *d = b'9';
        } else {
            *d -= 1;
            break;
        }
    }
    let text = String::from_utf8(digits).unwrap();
    match text.trim_start_matches('0') {
        "" => String::from("0"),
        rest => rest.to_string(),
    }
}

/// Checks the midpoint above `bits`, and a hair above and below it.
fn midpoints(bits: u64) -> Result<(), TestCaseError> {
    let (odd, exp2) = midpoint(bits);
    let text = exact(odd, exp2);
    agree(&text)?;
    agree(&format!("-{text}"))?;
    // Digits appended: just above (the mantissa part gains a tiny fraction).
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    agree(&format!("{mantissa}.00000000000000000001e{exponent}"))?;
    agree(&format!("{mantissa}.000000000000000000000000000000000000000000000000000000000000000000000000000000000001e{exponent}"))?;
    // Just below: the mantissa less one, then almost one more.
    agree(&format!(
        "{}.99999999999999999999e{exponent}",
        decrement(mantissa)
    ))?;
    Ok(())
}

#[test]
fn edges() {
    let long_one = format!("1{}e-1000", "0".repeat(1000));
    let tiny = format!("0.{}1e500", "0".repeat(500));
    let many = format!("0.1{}", "0000000001".repeat(200));
    let exact_tenth = "0.1000000000000000055511151231257827021181583404541015625";
    let half_min_sub = exact(1, -1075);
    let cases = [
        "0",
        "-0",
        "0.0",
        "-0.0",
        "0e999999999999999999999999",
        "-0.000e-5",
        "1e-400",
        "-1e-400",
        "1e400",
        "-1e400",
        "1e99999999999999999999999999",
        "1e-99999999999999999999999999",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "4.9406564584124654e-324",
        "2.2250738585072011e-308",
        "2.2250738585072014e-308",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "9007199254740993",
        "9007199254740993.0",
        "9007199254740992.5",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890e-20",
        "0.1",
        "0.3",
        "1.5",
        "1e22",
        "1e23",
        "1e-22",
        "1e-23",
        "4.35679e-5",
        "1.0E+2",
        "1E2",
        "17.125e-0",
        exact_tenth,
        &long_one,
        &tiny,
        &many,
        &half_min_sub,
    ];
    for text in cases {
        agree(text).unwrap();
    }
    // The midpoints at the ends: smallest subnormals, the subnormal/normal seam, the largest.
    for bits in [
        1,
        2,
        3,
        (1 << 52) - 1,
        1 << 52,
        (1 << 52) + 1,
        0x7fef_ffff_ffff_fffe,
        0x7fef_ffff_ffff_ffff,
        0x3ff0_0000_0000_0000,
    ] {
        midpoints(bits).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn printed_doubles(bits in any::<u64>()) {
        let value = f64::from_bits(bits);
        prop_assume!(value.is_finite());
        for text in [
            format!("{value}"),
            format!("{value:?}"),
            format!("{value:e}"),
            format!("{value:.3e}"),
            format!("{value:.16e}"),
            format!("{value:.40e}"),
        ] {
            agree(&text)?;
        }
    }

    #[test]
    fn midpoints_between_doubles(bits in 1u64..0x7fef_ffff_ffff_ffff) {
        midpoints(bits)?;
    }

    #[test]
    fn digit_strings(
        negative in any::<bool>(),
        int in "(0|[1-9][0-9]{0,30})",
        frac in proptest::option::of("[0-9]{1,40}"),
        exp in proptest::option::of(-420i32..420),
    ) {
        let mut text = String::new();
        if negative {
            text.push('-');
        }
        text.push_str(&int);
        if let Some(frac) = frac {
            text.push('.');
            text.push_str(&frac);
        }
        if let Some(exp) = exp {
            text.push_str(&format!("e{exp}"));
        }
        agree(&text)?;
    }
}
