//! `redis-benchmark` sending the same `EVALSHA` to the same server.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use crate::BoxError;
use crate::measure::Summary;
use crate::variants::Workload;

/// The `redis-benchmark` binary: `$REDIS_BENCHMARK`, else from `PATH`.
pub fn binary() -> PathBuf {
    std::env::var_os("REDIS_BENCHMARK")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("redis-benchmark"))
}

/// `redis-benchmark --version`, or why it could not run.
pub fn version() -> Result<String, String> {
    let output = Command::new(binary())
        .arg("--version")
        .output()
        .map_err(|error| {
            format!(
                "cannot run {}: {error} (install the redis-tools package, or set REDIS_BENCHMARK)",
                binary().display()
            )
        })?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// `redis-benchmark -u <url> -c <clients> -P 1 -n <calls> --csv EVALSHA …`:
/// `clients` connections, one request in flight on each. A warm-up run of
/// `warmup` requests comes first and is discarded.
pub fn run(
    url: &str,
    workload: Workload,
    clients: usize,
    calls: usize,
    warmup: usize,
) -> Result<Summary, BoxError> {
    if warmup > 0 {
        run_once(url, workload, clients, warmup)?;
    }
    run_once(url, workload, clients, calls)
}

fn run_once(
    url: &str,
    workload: Workload,
    clients: usize,
    calls: usize,
) -> Result<Summary, BoxError> {
    let mut command = Command::new(binary());
    command
        .arg("-u")
        .arg(url)
        .arg("-c")
        .arg(clients.to_string())
        .arg("-P")
        .arg("1")
        .arg("-n")
        .arg(calls.to_string())
        .arg("--precision")
        .arg("3")
        .arg("--csv")
        .arg("EVALSHA")
        .arg(workload.file_sha1())
        .args(workload.evalsha_tail());
    let output = command
        .output()
        .map_err(|error| format!("cannot run {}: {error}", binary().display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "{command:?} failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    parse_csv(&stdout).map_err(|error| format!("{command:?}: {error}:\n{stdout}").into())
}

/// Reads the header and the one result line of `--csv` output.
fn parse_csv(text: &str) -> Result<Summary, String> {
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let header = split_csv_line(lines.next().ok_or("no CSV header")?);
    let values = split_csv_line(lines.next().ok_or("no CSV result line")?);
    let row: HashMap<&str, &str> = header
        .iter()
        .map(String::as_str)
        .zip(values.iter().map(String::as_str))
        .collect();
    let number = |field: &str| -> Result<f64, String> {
        row.get(field)
            .ok_or_else(|| format!("no `{field}` column"))?
            .parse::<f64>()
            .map_err(|error| format!("`{field}`: {error}"))
    };
    Ok(Summary {
        p50_us: number("p50_latency_ms")? * 1_000.0,
        p99_us: number("p99_latency_ms")? * 1_000.0,
        mean_us: number("avg_latency_ms")? * 1_000.0,
        calls_per_second: number("rps")?,
    })
}

/// Splits one CSV line whose fields may be double-quoted (`""` escapes `"`).
fn split_csv_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.trim_end().chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_output_is_parsed() {
        let text = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n\
            \"EVALSHA e0e1 2 {a},b c 1\",\"29850.75\",\"0.030\",\"0.016\",\"0.031\",\"0.047\",\"0.063\",\"0.223\"\n";
        let summary = parse_csv(text).unwrap();
        assert_eq!(summary.calls_per_second, 29850.75);
        assert!((summary.p50_us - 31.0).abs() < 1e-9);
        assert!((summary.p99_us - 63.0).abs() < 1e-9);
        assert!((summary.mean_us - 30.0).abs() < 1e-9);
    }
}
