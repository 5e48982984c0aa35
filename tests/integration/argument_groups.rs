//! Trailing groups of values (`HSET key field value …`, `MSET`, `ZADD`,
//! `GEOADD`): for every command of the live server's release whose grammar
//! ends with a repeated group of plain values, calls passing one value up
//! to two groups and one value there go to the server and to the checker.
//! A count that is no whole number of groups, the checker refuses and the
//! server refuses too; a whole number of groups, the checker accepts.

use redis_script_analysis::commands::shapes::{Argument, ArgumentKind, SHAPES};
use redis_script_analysis::{Code, Severity, Signature, Target, analyze};
use redis_script_test::RedisServer;

use crate::server_refusals::{server_error, target_of};

/// The operands before the groups, when the grammar's required arguments
/// there are plain (a key is `KEYS[1]`, a value `'1'`, a token its word);
/// optional arguments are left out.
fn prefix(arguments: &[Argument]) -> Option<Vec<String>> {
    let mut operands = Vec::new();
    for argument in arguments {
        if argument.optional {
            continue;
        }
        if let Some(token) = argument.token {
            operands.push(format!("'{token}'"));
        }
        match argument.kind {
            ArgumentKind::PureToken => {
                if argument.token.is_none() {
                    operands.push(format!("'{}'", argument.name));
                }
            }
            ArgumentKind::OneOf(_) | ArgumentKind::Block(_) => return None,
            ArgumentKind::Key => operands.push("KEYS[1]".to_owned()),
            _ => operands.push("'1'".to_owned()),
        }
    }
    Some(operands)
}

/// The codes of the checker's errors for `source` on the live release.
fn errors(source: &str, target: &Target) -> Vec<Code> {
    let signature = Signature {
        keys: 1,
        allow_unused: true,
        dynamic_keys: true,
        target: target.clone(),
        ..Signature::default()
    };
    analyze(source, &signature)
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|diagnostic| diagnostic.code)
        .collect()
}

#[test]
fn counts_of_grouped_values_the_checker_refuses_the_server_refuses() {
    let server = RedisServer::start();
    let target = target_of(&server);
    let release = target.releases();
    let mut connection = server.client().get_connection().expect("connection");
    let mut commands = Vec::new();
    for shape in SHAPES {
        let Some(form) = shape.form_for(release) else {
            continue;
        };
        let Some((last, before)) = form.arguments.split_last() else {
            continue;
        };
        let (Some(group), Some(prefix)) = (last.plain_group(), prefix(before)) else {
            continue;
        };
        let mut words: Vec<String> = shape
            .name
            .split('|')
            .map(|word| format!("'{word}'"))
            .collect();
        words.extend(prefix);
        let call = |passed: usize| {
            let mut operands = words.clone();
            operands.extend(std::iter::repeat_n("'1'".to_owned(), passed));
            format!("return redis.call({})", operands.join(", "))
        };
        // Commands a script may not call, or calls the checker refuses for
        // another reason, are not about groups.
        if !errors(&call(group.len()), &target).is_empty() {
            continue;
        }
        for passed in 1..=2 * group.len() + 1 {
            let source = call(passed);
            let found = errors(&source, &target);
            if passed % group.len() == 0 {
                assert_eq!(found, [], "{source}: the checker refused whole groups");
                continue;
            }
            assert_eq!(
                found,
                [Code::WrongArity],
                "{source}: the checker missed a broken group"
            );
            assert!(
                server_error(&mut connection, &source).is_some(),
                "{source}: the checker refused what the server ran"
            );
        }
        commands.push(shape.name);
    }
    eprintln!("commands with groups checked: {commands:?}");
    for expected in ["hset", "mset", "msetnx", "zadd", "geoadd"] {
        assert!(
            commands.contains(&expected),
            "{expected} not covered: {commands:?}"
        );
    }
}
