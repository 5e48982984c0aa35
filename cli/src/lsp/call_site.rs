//! What the cursor is on, read from its line alone, so that it works in a
//! file in the middle of an edit: a `KEYS[n]`/`ARGV[n]`, or a string
//! operand of `redis.call(…)` (the command, its subcommand, or a later
//! word), even one whose closing quote is not typed yet.

/// A string literal on one line: byte ranges of the whole literal and of
/// its text between the quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Literal {
    pub start: usize,
    pub end: usize,
    pub text_start: usize,
    pub text_end: usize,
}

/// The string literals of `line`, up to a `--` comment outside them; the
/// last one may be unterminated (it then ends with the line).
pub fn literals(line: &str) -> Vec<Literal> {
    let bytes = line.as_bytes();
    let mut found = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'-' if bytes.get(index + 1) == Some(&b'-') => break,
            quote @ (b'\'' | b'"') => {
                let start = index;
                index += 1;
                while index < bytes.len() && bytes[index] != quote {
                    index += if bytes[index] == b'\\' { 2 } else { 1 };
                }
                let text_end = index.min(bytes.len());
                let end = (index + 1).min(bytes.len());
                found.push(Literal {
                    start,
                    end,
                    text_start: start + 1,
                    text_end,
                });
                index = end;
            }
            _ => index += 1,
        }
    }
    found
}

/// Which operand of a command call a literal is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// The command name.
    Command,
    /// The word after a literal command name (a subcommand or an option).
    AfterCommand { command: String },
    /// A later word, after the literal command name.
    Later { command: String },
}

/// The functions that run a command.
const CALLS: &[&str] = &["redis.call", "redis.pcall", "server.call", "server.pcall"];

/// The operand `literals[index]` is, if it is one of a command call's
/// written on the same line as the call.
pub fn operand(line: &str, literals: &[Literal], index: usize) -> Option<Operand> {
    let literal = literals.get(index)?;
    let before = line.get(..literal.start)?.trim_end();
    if let Some(opened) = before.strip_suffix('(')
        && CALLS.iter().any(|call| opened.trim_end().ends_with(call))
    {
        return Some(Operand::Command);
    }
    // A literal command name earlier in the same call, on this line.
    let (command_index, command) = (0..index).rev().find_map(|earlier| {
        (operand(line, literals, earlier) == Some(Operand::Command))
            .then(|| Some((earlier, literals.get(earlier)?)))
            .flatten()
    })?;
    // The operands between are separated by commas outside parentheses
    // and strings; a closing parenthesis of the call itself ends it.
    let mut depth = 0i32;
    let mut commas = 0;
    let mut at = command.end;
    for inner in &literals[command_index + 1..=index] {
        for byte in line.get(at..inner.start)?.bytes() {
            match byte {
                b'(' | b'{' => depth += 1,
                b')' | b'}' => depth -= 1,
                b',' if depth == 0 => commas += 1,
                _ => {}
            }
            if depth < 0 {
                return None;
            }
        }
        at = inner.end;
    }
    if depth != 0 {
        // Inside a nested call's parentheses.
        return None;
    }
    let command = line.get(command.text_start..command.text_end)?.to_owned();
    match commas {
        0 => None,
        1 => Some(Operand::AfterCommand { command }),
        _ => Some(Operand::Later { command }),
    }
}

/// `KEYS[n]` or `ARGV[n]` around byte `at` of `line`: whether it is a key,
/// and `n`.
pub fn parameter_at(line: &str, at: usize) -> Option<(bool, usize)> {
    for (table, key) in [("KEYS[", true), ("ARGV[", false)] {
        for (start, _) in line.match_indices(table) {
            let digits_start = start + table.len();
            let digits: String = line
                .get(digits_start..)?
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let end = digits_start + digits.len() + 1;
            let closed = line.get(end - 1..end) == Some("]");
            let boundary = start == 0
                || !line[..start]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
            if closed && boundary && (start..end).contains(&at) {
                return Some((key, digits.parse().ok()?));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operand_of(line: &str, index: usize) -> Option<Operand> {
        operand(line, &literals(line), index)
    }

    #[test]
    fn reads_the_operands_of_a_call() {
        let line = "local v = redis.call('CONFIG', 'GET', 'maxmemory') -- 'x'";
        assert_eq!(literals(line).len(), 3);
        assert_eq!(operand_of(line, 0), Some(Operand::Command));
        assert_eq!(
            operand_of(line, 1),
            Some(Operand::AfterCommand {
                command: "CONFIG".to_owned()
            })
        );
        assert_eq!(
            operand_of(line, 2),
            Some(Operand::Later {
                command: "CONFIG".to_owned()
            })
        );
        assert_eq!(operand_of("print('GET')", 0), None);
        let nested = "redis.call('HSET', k, tostring('a'), 'b') .. f('c')";
        assert_eq!(
            operand_of(nested, 2),
            Some(Operand::Later {
                command: "HSET".to_owned()
            })
        );
        assert_eq!(operand_of(nested, 3), None);
        assert_eq!(
            operand_of("server.pcall ( \"hget\"", 0),
            Some(Operand::Command)
        );
    }

    #[test]
    fn an_unclosed_string_is_still_an_operand() {
        let line = "return redis.call('SET', KEYS[1], ARGV[1], 'E";
        let found = literals(line);
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].text_end, line.len());
        assert_eq!(
            operand_of(line, 1),
            Some(Operand::Later {
                command: "SET".to_owned()
            })
        );
    }

    #[test]
    fn finds_keys_and_argv() {
        let line = "redis.call('GET', KEYS[12]) .. ARGV[2] .. MYKEYS[1]";
        let at = line.find("KEYS[12]").unwrap_or(0) + 3;
        assert_eq!(parameter_at(line, at), Some((true, 12)));
        assert_eq!(
            parameter_at(line, line.find("ARGV").unwrap_or(0)),
            Some((false, 2))
        );
        assert_eq!(
            parameter_at(line, line.find("MYKEYS").unwrap_or(0) + 3),
            None
        );
    }
}
