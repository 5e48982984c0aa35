//! `bit_width`: a constant the `bit` library cannot take as written. The
//! scripts' BitOp converts every argument to a 32-bit integer: a constant
//! wider than 32 bits keeps its low 32 bits, a fraction is rounded to the
//! nearest integer (ties to even), and shifts and rotations use the low 5
//! bits of their count. Nothing raises; the operation runs with another
//! value on every call.

use super::Shown;
use crate::interp::observe::{Certainty, Finding, SandboxCall, Site};

pub(crate) struct BitWidth;

/// The range of numbers BitOp takes as written: a signed 32-bit integer,
/// or an unsigned one written in hexadecimal (`0xFFFFFFFF`).
const SMALLEST: f64 = -2_147_483_648.0;
const LARGEST: f64 = 4_294_967_295.0;

/// Past this size the conversion does not even keep the low 32 bits.
const EXACT_CONVERSION: f64 = 2_251_799_813_685_248.0; // 2^51

impl Finding for BitWidth {
    fn sandbox_call(&self, site: &mut Site<'_>, call: &SandboxCall<'_>) {
        let (Some(function), "bit") = (call.member, call.global) else {
            return;
        };
        let (numbers, count) = match function {
            "band" | "bor" | "bxor" => (call.operands.len(), None),
            "tobit" | "bnot" | "bswap" | "tohex" => (1, None),
            "lshift" | "rshift" | "arshift" | "rol" | "ror" => (1, Some(1)),
            _ => return,
        };
        for operand in call.operands.iter().take(numbers) {
            let Some(number) = operand.value.as_number().filter(|_| !operand.many) else {
                continue;
            };
            let Some(becomes) = converted(number) else {
                continue;
            };
            let shown = Shown::of(site, operand.span, "this constant").named();
            site.report(
                Certainty::Always,
                operand.span,
                format!(
                    "{shown} is not a 32-bit integer: `bit.{function}` {becomes}, on every call"
                ),
                "keep bit sets within 32 bits (from -2147483648 to 4294967295), or keep a wider set in several numbers",
            );
        }
        let Some(operand) = count.and_then(|at| call.operands.get(at)) else {
            return;
        };
        let Some(shift) = operand.value.as_number().filter(|_| !operand.many) else {
            return;
        };
        let whole = shift.round_ties_even();
        if (0.0..32.0).contains(&whole) && whole == shift {
            return;
        }
        let shown = Shown::of(site, operand.span, "this count").named();
        let used = if whole.abs() < EXACT_CONVERSION {
            format!("{}", (whole as i64) & 31)
        } else {
            "the low 5 bits of an unrelated number".to_owned()
        };
        site.report(
            Certainty::Always,
            operand.span,
            format!(
                "{shown} is not a count from 0 to 31: `bit.{function}` shifts by its low 5 bits, {used}, on every call"
            ),
            "shift by 0 to 31 bits: BitOp works on 32-bit integers",
        );
    }
}

/// What BitOp makes of `number` when it is not the 32-bit integer written:
/// "rounds it to 2", "takes it as 1 (its low 32 bits)".
fn converted(number: f64) -> Option<String> {
    let whole = number.round_ties_even();
    let fits = (SMALLEST..=LARGEST).contains(&whole);
    if whole == number && fits {
        return None;
    }
    if !number.is_finite() || number.abs() >= EXACT_CONVERSION {
        return Some(
            "computes with an unrelated number (past 2^51 not even its low 32 bits are kept)"
                .to_owned(),
        );
    }
    // The low 32 bits, as the signed integer BitOp computes with.
    let bits = (whole as i64) as i32;
    Some(match (whole == number, fits) {
        (false, true) => format!("rounds it to {bits}"),
        (true, _) => format!("takes it as {bits} (its low 32 bits)"),
        (false, false) => format!("rounds it and takes it as {bits} (the low 32 bits)"),
    })
}
