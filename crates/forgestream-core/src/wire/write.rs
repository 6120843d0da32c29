//! JSON text out (RFC 8259): the [`Encode`] trait the SDK's types implement by hand, the
//! string, number and object writers under it, and `encode_struct!` — the mirror of
//! [`json`](super::json)'s reader, [`Decode`](super::json::Decode) and `decode_struct!`.
//!
//! Why not serde's derives: every `Serialize` impl is generic over the serializer and goes
//! through serde's struct, map and tagged-enum adapters; with `serde_json::ser` that was a tenth
//! of the wasm's code (issue 16 follow-up: 57 KB of 570 KB) for one job, writing compact JSON
//! text. Here each type has one plain function appending to a `String`, and the writer is a
//! handful of non-generic helpers.
//!
//! The output is serde_json's `to_string` of the same value, byte for byte, so the derives (kept
//! on the types: tsify reads them for the TypeScript declarations) are the oracle of the native
//! tests (`tests/encode_oracle.rs`): members in declaration order, the tag of an internally
//! tagged enum first, `Option::None` as `null` unless the serde attribute skips it, maps in
//! their (sorted) order, strings escaped as serde_json does (`"`, `\\` and control characters
//! only: `\b \f \n \r \t`, others `\u00xx` in lowercase hex), integers in decimal, finite floats
//! in serde_json's shortest form and non-finite ones as `null`. Writing into a `String` cannot
//! fail, so nothing here returns an error or panics.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;
use serde_json::{Map, Number, Value};

/// A type written as JSON text by hand (see the module docs for the rules).
pub trait Encode {
    /// Appends this value's JSON text to `out`.
    fn encode(&self, out: &mut String);
}

/// The members of a struct (or of a variant's struct), written into an object that is already
/// open: what an internally tagged enum writes after its tag. `encode_struct!` implements it
/// beside [`Encode`].
pub trait EncodeFields {
    /// Writes the members into `o`.
    fn encode_fields(&self, o: &mut Object<'_>);
}

/// `value` as compact JSON text.
pub fn to_string<T: Encode + ?Sized>(value: &T) -> String {
    let mut out = String::new();
    value.encode(&mut out);
    out
}

/// An object being written: `{` when opened, `,"key":` before each member, `}` at
/// [`Object::close`].
pub struct Object<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Object<'a> {
    /// Opens an object on `out`.
    pub fn open(out: &'a mut String) -> Self {
        out.push('{');
        Object { out, first: true }
    }

    /// Writes the separator before the next member and returns the text, for a member whose
    /// key is data: the caller writes the key ([`string`]), the `:`, then the value.
    pub fn raw_key(&mut self) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        self.out
    }

    /// Writes the key of the next member (`key` as is: the SDK's keys are literals that need no
    /// escaping) and returns the text for its value, which the caller must then write.
    pub fn key(&mut self, key: &str) -> &mut String {
        self.raw_key();
        self.out.push('"');
        self.out.push_str(key);
        self.out.push_str("\":");
        self.out
    }

    /// Writes one member.
    pub fn member<T: Encode + ?Sized>(&mut self, key: &str, value: &T) {
        value.encode(self.key(key));
    }

    /// Writes one member unless `value` is `None` (serde's
    /// `skip_serializing_if = "Option::is_none"`).
    pub fn member_some<T: Encode>(&mut self, key: &str, value: &Option<T>) {
        if let Some(value) = value {
            self.member(key, value);
        }
    }

    /// Closes the object.
    pub fn close(self) {
        self.out.push('}');
    }
}

/// Appends `text` as a JSON string, escaped as serde_json does (module docs).
pub fn string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut rest = text;
    // `special_at` stops at exactly the bytes that need escaping (all ASCII, so each cut is on
    // a character boundary).
    while let Some(at) = super::fast::special_at(rest.as_bytes()) {
        let (run, tail) = rest.split_at(at);
        out.push_str(run);
        let mut tail = tail.chars();
        let Some(c) = tail.next() else {
            break;
        };
        rest = tail.as_str();
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => {
                let byte = c as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[(byte >> 4) & 0xf]));
                out.push(char::from(HEX[byte & 0xf]));
            }
        }
    }
    out.push_str(rest);
    out.push('"');
}

/// Appends `n` in decimal (without `core::fmt`: integers are the most frequent value of a
/// change set — versions, token counts).
pub fn unsigned(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in digits.get(at..).unwrap_or_default() {
        out.push(char::from(d));
    }
}

/// Appends a finite `value` in serde_json's shortest round-trip form (through
/// [`serde_json::Number`]'s `Display`, the formatter serde_json's serializer uses), and
/// `null` for NaN and the infinities, as serde_json writes them.
pub fn float(out: &mut String, value: f64) {
    match Number::from_f64(value) {
        Some(number) => number_text(out, &number),
        None => out.push_str("null"),
    }
}

fn number_text(out: &mut String, number: &Number) {
    if let Some(n) = number.as_u64() {
        unsigned(out, n);
    } else if let Some(n) = number.as_i64() {
        out.push('-');
        unsigned(out, n.unsigned_abs());
    } else {
        // A float (`Number` holds only finite ones). Writing to a `String` cannot fail.
        let _ = write!(out, "{number}");
    }
}

impl Encode for str {
    fn encode(&self, out: &mut String) {
        string(out, self);
    }
}

impl Encode for String {
    fn encode(&self, out: &mut String) {
        string(out, self);
    }
}

impl Encode for bool {
    fn encode(&self, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }
}

impl Encode for u64 {
    fn encode(&self, out: &mut String) {
        unsigned(out, *self);
    }
}

impl Encode for u32 {
    fn encode(&self, out: &mut String) {
        unsigned(out, u64::from(*self));
    }
}

impl Encode for u16 {
    fn encode(&self, out: &mut String) {
        unsigned(out, u64::from(*self));
    }
}

impl Encode for usize {
    fn encode(&self, out: &mut String) {
        // `usize` is at most 64 bits on every target Rust supports.
        unsigned(out, *self as u64);
    }
}

impl Encode for f64 {
    fn encode(&self, out: &mut String) {
        float(out, *self);
    }
}

impl<T: Encode + ?Sized> Encode for &T {
    fn encode(&self, out: &mut String) {
        (**self).encode(out);
    }
}

impl<T: Encode + ?Sized> Encode for alloc::boxed::Box<T> {
    fn encode(&self, out: &mut String) {
        (**self).encode(out);
    }
}

impl<T: Encode + ?Sized> Encode for alloc::sync::Arc<T> {
    fn encode(&self, out: &mut String) {
        (**self).encode(out);
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, out: &mut String) {
        match self {
            Some(value) => value.encode(out),
            None => out.push_str("null"),
        }
    }
}

impl<T: Encode> Encode for [T] {
    fn encode(&self, out: &mut String) {
        out.push('[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            item.encode(out);
        }
        out.push(']');
    }
}

impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, out: &mut String) {
        self.as_slice().encode(out);
    }
}

impl Encode for Value {
    fn encode(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => b.encode(out),
            Value::Number(n) => number_text(out, n),
            Value::String(s) => string(out, s),
            Value::Array(items) => items.encode(out),
            Value::Object(map) => map.encode(out),
        }
    }
}

impl Encode for Map<String, Value> {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        for (key, value) in self {
            // Map keys are data, not literals: escaped.
            let out = o.raw_key();
            string(out, key);
            out.push(':');
            value.encode(out);
        }
        o.close();
    }
}

/// Implements [`Encode`] and [`EncodeFields`] for a struct from its members, in declaration
/// order (serde's): `name: "key"` always written (an `Option` as `null` when `None`),
/// `name: "key" => skip_none` left out when `None`, `name: "key" => skip_empty` left out when
/// empty (`Vec::is_empty`). Keys are the serialized spellings (renames, camelCase).
macro_rules! encode_struct {
    ($ty:ident $(<$lt:lifetime>)? { $($name:ident : $key:literal $(=> $mode:ident)?),* $(,)? }) => {
        impl$(<$lt>)? $crate::wire::write::EncodeFields for $ty$(<$lt>)? {
            fn encode_fields(&self, o: &mut $crate::wire::write::Object<'_>) {
                $($crate::wire::write::encode_struct!(@member o, self.$name, $key $(, $mode)?);)*
            }
        }
        impl$(<$lt>)? $crate::wire::write::Encode for $ty$(<$lt>)? {
            fn encode(&self, out: &mut alloc::string::String) {
                let mut o = $crate::wire::write::Object::open(out);
                $crate::wire::write::EncodeFields::encode_fields(self, &mut o);
                o.close();
            }
        }
    };
    (@member $o:ident, $value:expr, $key:literal) => { $o.member($key, &$value) };
    (@member $o:ident, $value:expr, $key:literal, skip_none) => { $o.member_some($key, &$value) };
    (@member $o:ident, $value:expr, $key:literal, skip_empty) => {
        if !$value.is_empty() {
            $o.member($key, &$value)
        }
    };
}
pub(crate) use encode_struct;

/// Implements [`Encode`] for a fieldless `Copy` enum written as a string,
/// `Variant => "spelling"`, and its `as_str` (the same spelling, for code that needs the text).
macro_rules! encode_str_enum {
    ($ty:ident { $($variant:ident => $key:literal),* $(,)? }) => {
        impl $ty {
            /// The serialized spelling (serde's `rename_all`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $key,)*
                }
            }
        }
        impl $crate::wire::write::Encode for $ty {
            fn encode(&self, out: &mut alloc::string::String) {
                $crate::wire::write::string(out, self.as_str());
            }
        }
    };
}
pub(crate) use encode_str_enum;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_as_serde_json() {
        let text = "a\"b\\c\u{0}\u{8}\u{c}\n\r\t\u{1f}\u{7f}é/😀";
        assert_eq!(to_string(text), serde_json::to_string(text).unwrap());
    }

    #[test]
    fn numbers_write_as_serde_json() {
        for n in [0, 1, 9, 10, 99, 100, u64::MAX] {
            assert_eq!(to_string(&n), serde_json::to_string(&n).unwrap());
        }
        for f in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1e300,
            -2.5e-300,
            f64::NAN,
            f64::INFINITY,
        ] {
            assert_eq!(to_string(&f), serde_json::to_string(&f).unwrap(), "{f}");
        }
        for n in [i64::MIN, -1, 5] {
            let v = Value::from(n);
            assert_eq!(to_string(&v), serde_json::to_string(&v).unwrap());
        }
    }
}
