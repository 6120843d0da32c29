//! Decimal text → `f64`, correctly rounded (round half to even), for the JSON reader: the same
//! value as `str::parse::<f64>` for every JSON number, without its tables.
//!
//! Why not `core`'s parser: its Eisel–Lemire step carries a table of 128-bit powers of five
//! (10.4 KB that gzip cannot shrink, ~4% of the wasm + glue gzip; issue 16), for a speed the SDK
//! does not need — JSON floats are rare on the wire (costs, tool arguments) and the common ones
//! take the exact fast path below. Everything else is one exact big-integer division.
//!
//! `tests/float_oracle.rs` holds this to `str::parse::<f64>` (random doubles printed every way,
//! the exact midpoints between neighbouring doubles and their neighbours, subnormals, overflow).

use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Ordering;

/// Significant digits kept: more than the 767 a midpoint between two doubles can have, so
/// dropping the rest (remembered by one more nonzero digit) never changes the rounding.
const MAX_DIGITS: usize = 780;

/// The value of `text`, a number in the JSON grammar (RFC 8259 §6; the caller has checked it).
/// Too large is infinite (the caller refuses it), too small is a signed zero, as `core` rounds.
pub(crate) fn parse(text: &str) -> f64 {
    let bytes = text.as_bytes();
    let negative = bytes.first() == Some(&b'-');
    let mantissa_end = bytes
        .iter()
        .position(|b| matches!(b, b'e' | b'E'))
        .unwrap_or(bytes.len());
    let (mantissa, exponent) = bytes.split_at(mantissa_end);
    // The explicit exponent, saturated far beyond where every result is 0 or infinite.
    let mut exp: i64 = 0;
    if let Some((_, digits)) = exponent.split_first() {
        let (minus, digits) = match digits.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some((b'+', rest)) => (false, rest),
            _ => (false, digits),
        };
        for &d in digits {
            exp = (exp * 10 + i64::from(d - b'0')).min(1 << 40);
        }
        if minus {
            exp = -exp;
        }
    }
    // The value is D × 10^exp, D the mantissa's significant digits (leading zeros skipped).
    let mut digits = mantissa
        .iter()
        .filter(|b| b.is_ascii_digit())
        .skip_while(|&&b| b == b'0');
    let frac = mantissa
        .iter()
        .position(|&b| b == b'.')
        .map_or(0, |dot| mantissa.len() - dot - 1);
    exp -= frac as i64;
    let mut big = Big::default();
    let mut small: u64 = 0;
    let mut count = 0;
    for &d in digits.by_ref().take(MAX_DIGITS) {
        if count < 19 {
            small = small * 10 + u64::from(d - b'0');
        }
        big.mul_add(10, u32::from(d - b'0'));
        count += 1;
    }
    // Digits beyond the kept ones move the exponent; a nonzero one among them is kept as a
    // final `1` (above the kept value, below the next one: the same side of every midpoint).
    let mut sticky = false;
    for &d in digits {
        exp += 1;
        sticky |= d != b'0';
    }
    if sticky {
        big.mul_add(10, 1);
        count += 1;
        exp -= 1;
    }
    let magnitude = if count == 0 {
        0.0
    } else if count <= 19 && small <= 1 << 53 && (-22..=22).contains(&exp) {
        // Exact operands, one correctly rounded operation (Clinger's fast path).
        let mut scale = 1.0;
        for _ in 0..exp.unsigned_abs() {
            scale *= 10.0;
        }
        if exp < 0 {
            small as f64 / scale
        } else {
            small as f64 * scale
        }
    } else if count as i64 + exp > 310 {
        f64::INFINITY
    } else if count as i64 + exp < -330 {
        // Below 10^-330, less than half the smallest subnormal.
        0.0
    } else {
        divide(big, exp)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// `digits × 10^exp` (digits nonzero, within the range `parse` leaves), rounded half to even.
fn divide(digits: Big, exp: i64) -> f64 {
    // num / den = the value, both integers.
    let (mut num, mut den) = (digits, Big::from(1));
    let scaled = if exp < 0 { &mut den } else { &mut num };
    for _ in 0..exp.unsigned_abs() {
        scaled.mul_add(10, 0);
    }
    // e2 = floor(log2(num / den)): the bit lengths give it to within one.
    let mut e2 = num.bits() as i64 - den.bits() as i64;
    let below = if e2 >= 0 {
        num.cmp(&den.shl(e2 as usize))
    } else {
        num.shl(e2.unsigned_abs() as usize).cmp(&den)
    };
    if below == Ordering::Less {
        e2 -= 1;
    }
    if e2 > 1023 {
        return f64::INFINITY;
    }
    // q = num × 2^shift / den has 53 bits (fewer for a subnormal, whose unit is 2^-1074).
    let e2 = e2.max(-1022);
    let shift = 52 - e2;
    if shift >= 0 {
        num = num.shl(shift as usize);
    } else {
        den = den.shl(shift.unsigned_abs() as usize);
    }
    // Long division, one quotient bit at a time (q < 2^53); num becomes the remainder.
    let mut q: u64 = 0;
    let mut step = den.shl(52);
    for bit in (0..53).rev() {
        if num.cmp(&step) != Ordering::Less {
            num.sub(&step);
            q |= 1 << bit;
        }
        step.shr1();
    }
    // Half to even: compare the remainder with half the divisor.
    match num.shl(1).cmp(&den) {
        Ordering::Greater => q += 1,
        Ordering::Equal => q += q & 1,
        Ordering::Less => {}
    }
    // A normal q lies in [2^52, 2^53): adding it to the biased exponent's field carries its
    // leading bit in, and a q rounded up to 2^53 (or a subnormal rounded up to 2^52) moves to
    // the next binade; past the largest finite value this gives the bits of infinity.
    let bits = (((e2 + 1022) as u64) << 52) + q;
    f64::from_bits(bits.min(f64::INFINITY.to_bits()))
}

/// An unsigned big integer, 32-bit limbs, least significant first, no zero limb on top.
#[derive(Default)]
struct Big(Vec<u32>);

impl From<u32> for Big {
    fn from(value: u32) -> Self {
        Big(vec![value])
    }
}

impl Big {
    /// `self = self × m + a`.
    fn mul_add(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn bits(&self) -> usize {
        self.0
            .last()
            .map_or(0, |top| 32 * self.0.len() - top.leading_zeros() as usize)
    }

    /// `self × 2^n`.
    fn shl(&self, n: usize) -> Big {
        let (limbs, bits) = (n / 32, n % 32);
        let mut out = vec![0; limbs];
        let mut carry = 0u32;
        for &limb in &self.0 {
            if bits == 0 {
                out.push(limb);
            } else {
                out.push(limb << bits | carry);
                carry = limb >> (32 - bits);
            }
        }
        if carry > 0 {
            out.push(carry);
        }
        Big(out)
    }

    /// `self / 2`, for a `self` known even or whose low bit may go.
    fn shr1(&mut self) {
        let mut carry = 0;
        for limb in self.0.iter_mut().rev() {
            let next = *limb << 31;
            *limb = *limb >> 1 | carry;
            carry = next;
        }
        if self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// `self -= other`, for `other <= self`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let v = i64::from(*limb) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            *limb = v as u32;
            borrow = i64::from(v < 0);
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}
