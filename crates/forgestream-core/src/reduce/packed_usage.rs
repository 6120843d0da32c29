//! [`PackedUsage`]: a message's usage kept as a few bytes and read back as a [`UsageView`].
//!
//! Why: every finished message has a usage, and as a boxed [`UsageView`] it was 104 bytes of
//! heap and 8 inline — W2's 38k messages held 4.0 MB of usage for 3.2 MB of text (`cargo run
//! --release -p forgestream-core --example bench_core`, "view breakdown"). A message's usage
//! has nine counts that matter (input, output, cache read and write, the five breakdown
//! parts; the total is input + output, reasoning and cost are never set from a message), each
//! a few thousand tokens: LEB128 varints take ~20 bytes. The packing is canonical (one byte
//! string per value), so comparing packed usages compares the usages.
//!
//! A turn's usage is packed too ([`PackedUsage::from_view`]: the metrics' totals, reasoning
//! tokens and cost follow the nine counts when set): inline as a [`UsageView`] it was 104 of
//! a turn record's 408 bytes (W2: 1.6 MB for 15k turns; issue 16).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::view::{BreakdownView, UsageView};
use crate::wire::{self, write::Encode};

/// One message's usage, packed (see the module docs). Crosses to JS as its [`UsageView`].
#[derive(Clone, PartialEq, Eq)]
pub struct PackedUsage(Box<[u8]>);

/// The tail's flags (after the nine counts; absent when none is set): which of the fields a
/// message's usage never has follow, in this order.
const TOTAL_DIFFERS: u8 = 1;
const REASONING: u8 = 2;
const COST: u8 = 4;

/// Appends `n` as a LEB128 varint: seven bits a byte, low first; the high bit says another
/// byte follows.
fn push_varint(bytes: &mut Vec<u8>, mut n: u64) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            bytes.push(low);
            break;
        }
        bytes.push(low | 0x80);
    }
}

/// Reads a varint (a short read, which cannot happen, gives what was read).
fn read_varint(bytes: &mut core::slice::Iter<'_, u8>) -> u64 {
    let (mut n, mut shift) = (0u64, 0u32);
    for &byte in bytes.by_ref() {
        n |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        shift = shift.saturating_add(7);
        if byte & 0x80 == 0 {
            break;
        }
    }
    n
}

impl PackedUsage {
    /// The usage of a wire message (or delta).
    pub(crate) fn from_message(usage: &wire::Usage) -> Self {
        let b = usage.input_tokens_breakdown.clone().unwrap_or_default();
        let counts = [
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens.unwrap_or(0),
            usage.cache_write_tokens.unwrap_or(0),
            b.harness,
            b.skills,
            b.instructions,
            b.tool_definitions,
            b.messages,
        ];
        PackedUsage(pack_counts(counts).into_boxed_slice())
    }

    /// Any usage (a turn's: metrics' totals, reasoning tokens and cost included). The nine
    /// counts a message has, then, only when one is set, a flags byte and the total (when it
    /// is not input + output), the reasoning tokens (when not 0) and the cost (the `f64`'s
    /// bits, little-endian): a message's usage packs as `PackedUsage::from_message` packs it.
    pub fn from_view(usage: &UsageView) -> Self {
        let b = &usage.breakdown;
        let counts = [
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            b.harness,
            b.skills,
            b.instructions,
            b.tool_definitions,
            b.messages,
        ];
        let mut bytes = pack_counts(counts);
        let total_differs =
            usage.total_tokens != usage.input_tokens.saturating_add(usage.output_tokens);
        let mut flags = 0;
        if total_differs {
            flags |= TOTAL_DIFFERS;
        }
        if usage.reasoning_tokens != 0 {
            flags |= REASONING;
        }
        if usage.cost_usd.is_some() {
            flags |= COST;
        }
        if flags != 0 {
            bytes.push(flags);
            if total_differs {
                push_varint(&mut bytes, usage.total_tokens);
            }
            if usage.reasoning_tokens != 0 {
                push_varint(&mut bytes, usage.reasoning_tokens);
            }
            if let Some(cost) = usage.cost_usd {
                bytes.extend_from_slice(&cost.to_bits().to_le_bytes());
            }
        }
        PackedUsage(bytes.into_boxed_slice())
    }

    /// The usage in view form (as it was packed).
    pub fn get(&self) -> UsageView {
        let mut bytes = self.0.iter();
        // Nine counts were written; a short read (cannot happen) stands in zeros.
        let mut counts = [0u64; 9];
        for count in &mut counts {
            *count = read_varint(&mut bytes);
        }
        let [input, output, cache_read, cache_write, harness, skills, instructions, tools, messages] =
            counts;
        let flags = bytes.next().copied().unwrap_or(0);
        let mut total_tokens = input.saturating_add(output);
        if flags & TOTAL_DIFFERS != 0 {
            total_tokens = read_varint(&mut bytes);
        }
        let reasoning_tokens = if flags & REASONING != 0 {
            read_varint(&mut bytes)
        } else {
            0
        };
        let cost_usd = (flags & COST != 0).then(|| {
            let mut le = [0u8; 8];
            for (slot, &byte) in le.iter_mut().zip(bytes.by_ref()) {
                *slot = byte;
            }
            f64::from_bits(u64::from_le_bytes(le))
        });
        UsageView {
            input_tokens: input,
            output_tokens: output,
            total_tokens,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            reasoning_tokens,
            cost_usd,
            breakdown: BreakdownView {
                harness,
                skills,
                instructions,
                tool_definitions: tools,
                messages,
            },
        }
    }
}

impl Default for PackedUsage {
    /// No usage (all zero).
    fn default() -> Self {
        PackedUsage::from_view(&UsageView::default())
    }
}

impl core::fmt::Debug for PackedUsage {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(&self.get(), f)
    }
}

impl Encode for PackedUsage {
    fn encode(&self, out: &mut String) {
        self.get().encode(out);
    }
}

impl serde::Serialize for PackedUsage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(serializer)
    }
}

/// The nine counts every usage starts with, as varints (see [`PackedUsage::from_view`]).
fn pack_counts(counts: [u64; 9]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(counts.len() * 2);
    for n in counts {
        push_varint(&mut bytes, n);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::PackedUsage;
    use crate::reduce::UsageView;
    use crate::wire;

    #[test]
    fn reads_back_what_from_message_builds() {
        for (input, output, read, breakdown) in [
            (0, 0, None, None),
            (3890, 129, Some(0), Some((751, 0, 19, 343, 5568))),
            (
                u64::MAX,
                u64::MAX,
                Some(1 << 63),
                Some((127, 128, 16383, 16384, u64::MAX)),
            ),
        ] {
            let usage = wire::Usage {
                input_tokens: input,
                output_tokens: output,
                cache_read_tokens: read,
                cache_write_tokens: Some(7),
                input_tokens_breakdown: breakdown.map(|(h, s, i, t, m)| {
                    wire::InputTokensBreakdown {
                        harness: h,
                        skills: s,
                        instructions: i,
                        tool_definitions: t,
                        messages: m,
                    }
                }),
            };
            assert_eq!(
                PackedUsage::from_message(&usage).get(),
                UsageView::from_message(&usage)
            );
            assert!(
                PackedUsage::from_view(&UsageView::from_message(&usage))
                    == PackedUsage::from_message(&usage)
            );
        }
    }

    #[test]
    fn any_usage_reads_back() {
        let mut usage = UsageView::default();
        assert_eq!(PackedUsage::default().get(), usage);
        usage.input_tokens = 3890;
        usage.output_tokens = u64::MAX;
        assert_eq!(PackedUsage::from_view(&usage).get(), usage);
        usage.total_tokens = 17;
        assert_eq!(PackedUsage::from_view(&usage).get(), usage);
        usage.reasoning_tokens = 1 << 40;
        usage.cost_usd = Some(0.0);
        assert_eq!(PackedUsage::from_view(&usage).get(), usage);
        usage.total_tokens = u64::MAX;
        usage.cost_usd = Some(-1.25e-9);
        usage.breakdown.messages = 5568;
        assert_eq!(PackedUsage::from_view(&usage).get(), usage);
        usage.reasoning_tokens = 0;
        usage.cost_usd = Some(f64::MAX);
        assert_eq!(PackedUsage::from_view(&usage).get(), usage);
        // A truncated packing (cannot be built) reads as zeros rather than panicking.
        let short = super::PackedUsage(alloc::boxed::Box::from(&[0x80u8][..]));
        assert_eq!(short.get().input_tokens, 0);
    }
}
