//! [`PackedUsage`]: a message's usage kept as a few bytes and read back as a [`UsageView`].
//!
//! Why: every finished message has a usage, and as a boxed [`UsageView`] it was 104 bytes of
//! heap and 8 inline — W2's 38k messages held 4.0 MB of usage for 3.2 MB of text (`cargo run
//! --release -p forgestream-core --example bench_core`, "view breakdown"). A message's usage
//! has nine counts that matter (input, output, cache read and write, the five breakdown
//! parts; the total is input + output, reasoning and cost are never set from a message), each
//! a few thousand tokens: LEB128 varints take ~20 bytes. The packing is canonical (one byte
//! string per value), so comparing packed usages compares the usages.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::view::{BreakdownView, UsageView};
use crate::wire::{self, write::Encode};

/// One message's usage, packed (see the module docs). Crosses to JS as its [`UsageView`].
#[derive(Clone, PartialEq, Eq)]
pub struct PackedUsage(Box<[u8]>);

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
        let mut bytes = Vec::with_capacity(counts.len() * 2);
        for mut n in counts {
            loop {
                // Seven bits a byte, low first; the high bit says another byte follows.
                let low = (n & 0x7f) as u8;
                n >>= 7;
                if n == 0 {
                    bytes.push(low);
                    break;
                }
                bytes.push(low | 0x80);
            }
        }
        PackedUsage(bytes.into_boxed_slice())
    }

    /// The usage in view form (as [`UsageView::from_message`] builds it).
    pub fn get(&self) -> UsageView {
        // Nine counts were written; a short read (cannot happen) stands in zeros.
        let mut counts = [0u64; 9];
        let mut bytes = self.0.iter();
        for count in &mut counts {
            let mut shift = 0u32;
            for &byte in bytes.by_ref() {
                *count |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
                shift = shift.saturating_add(7);
                if byte & 0x80 == 0 {
                    break;
                }
            }
        }
        let [input, output, cache_read, cache_write, harness, skills, instructions, tools, messages] =
            counts;
        UsageView {
            input_tokens: input,
            output_tokens: output,
            total_tokens: input.saturating_add(output),
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            reasoning_tokens: 0,
            cost_usd: None,
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
        }
    }
}
