//! Machine facts and the Markdown tables.

use std::fmt::Write as _;

use crate::cold::{ColdRow, CommandStat};
use crate::encode::EncodeRow;
use crate::measure::Summary;
use crate::variants::Workload;

/// What the numbers were measured on.
#[derive(Debug)]
pub struct Facts {
    pub cores: usize,
    pub cpu: String,
    pub kernel: String,
    pub load: String,
    pub redis_version: String,
    pub server: String,
    pub redis_benchmark: String,
    pub profile: &'static str,
    pub runtime: String,
    pub plan: String,
}

impl Facts {
    pub fn cpu_model() -> String {
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|line| line.strip_prefix("model name"))
                    .and_then(|rest| rest.split_once(':'))
                    .map(|(_, model)| model.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".to_owned())
    }

    pub fn kernel() -> String {
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|release| format!("Linux {}", release.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.to_owned())
    }

    /// `/proc/loadavg`'s 1-, 5- and 15-minute averages: other work on the
    /// machine shows up in the tails.
    pub fn load() -> String {
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .map(|text| {
                text.split_whitespace()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_else(|| "unknown".to_owned())
    }

    pub fn profile() -> &'static str {
        if cfg!(debug_assertions) {
            "debug (numbers not representative: use --release)"
        } else {
            "release"
        }
    }

    pub fn render(&self) -> String {
        format!(
            "- machine: {} cores, {}, {}, load average {} at start\n\
             - server: redis-server {} ({})\n\
             - redis-benchmark: {}\n\
             - client: build profile {}, {}\n\
             - plan: {}\n",
            self.cores,
            self.cpu,
            self.kernel,
            self.load,
            self.redis_version,
            self.server,
            self.redis_benchmark,
            self.profile,
            self.runtime,
            self.plan,
        )
    }
}

/// One row of the warm-call table.
#[derive(Debug)]
pub struct WarmRow {
    pub workload: Workload,
    pub in_flight: String,
    pub client: String,
    /// `Err` when the row could not be measured (e.g. no redis-benchmark).
    pub summary: Result<Summary, String>,
    /// The hand-written row's p50 for the same script and concurrency.
    pub baseline_p50_us: Option<f64>,
}

pub fn warm_table(rows: &[WarmRow]) -> String {
    let mut out = String::from(
        "| script | in flight | client | p50 µs | p99 µs | mean µs | calls/s | p50 vs hand-written |\n\
         | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for row in rows {
        let prefix = format!(
            "| {} | {} | {} |",
            row.workload.label(),
            row.in_flight,
            row.client
        );
        match &row.summary {
            Ok(summary) => {
                let ratio = row
                    .baseline_p50_us
                    .filter(|base| *base > 0.0)
                    .map(|base| format!("{:.2}×", summary.p50_us / base))
                    .unwrap_or_else(|| "–".to_owned());
                let _ = writeln!(
                    out,
                    "{prefix} {:.1} | {:.1} | {:.1} | {:.0} | {ratio} |",
                    summary.p50_us, summary.p99_us, summary.mean_us, summary.calls_per_second,
                );
            }
            Err(reason) => {
                let _ = writeln!(out, "{prefix} – | – | – | – | {reason} |");
            }
        }
    }
    out
}

/// Markdown for the batch rows.
pub fn batch_table(rows: &[crate::batches::BatchRow]) -> String {
    let mut out = String::from(
        "| batch | request bytes | p50 µs | p99 µs | µs per call (p50) |\n\
         | --- | ---: | ---: | ---: | ---: |\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} | {:.1} | {:.2} |",
            row.label,
            row.request_bytes,
            row.summary.p50_us,
            row.summary.p99_us,
            row.summary.p50_us / crate::batches::CALLS_PER_BATCH as f64,
        );
    }
    out
}

/// Markdown for the telemetry-cost rows: relative to the generated call
/// without the feature and with nothing installed.
pub fn instrumentation_table(
    (rows, other_build): &(
        Vec<crate::instrumentation::InstrumentationRow>,
        Result<(), String>,
    ),
) -> String {
    let mut out = String::from(
        "| call | ns | allocs | vs generated, feature off, nothing installed |\n| --- | ---: | ---: | ---: |\n",
    );
    let idle = rows.get(1).map_or(f64::NAN, |row| row.ns);
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {:.0} | {:.1} | {:.2}× |",
            row.label,
            row.ns,
            row.allocations,
            row.ns / idle,
        );
    }
    if let Err(reason) = other_build {
        let _ = writeln!(
            out,
            "| rows with the `metrics` feature | n/a: {reason} | | |"
        );
    }
    out
}

/// Markdown for the server's time per call of each source.
pub fn server_time_table(rows: &[crate::server_time::ServerTimeRow]) -> String {
    let mut out = String::from("| script | source | server µs per call |\n| --- | --- | ---: |\n");
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} |",
            row.workload, row.source, row.usec_per_call
        );
    }
    out
}

/// Markdown for the warm-call breakdown: ns per call in each column.
pub fn breakdown_table(rows: &[crate::instrumentation::BreakdownRow]) -> String {
    let columns = crate::instrumentation::BREAKDOWN_COLUMNS;
    let mut out = format!(
        "| async call | {} | allocs |\n| --- |{} ---: |\n",
        columns.join(" | "),
        " ---: |".repeat(columns.len())
    );
    for row in rows {
        let ns: Vec<String> = row.ns.iter().map(|ns| format!("{ns:.0}")).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} |",
            row.label,
            ns.join(" | "),
            row.allocations
        );
    }
    out
}

/// Markdown for the function-versus-script rows.
pub fn function_table(rows: &[crate::functions::FunctionRow]) -> String {
    let mut out = String::from(
        "| call | p50 µs | p99 µs | mean µs | calls/s |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {:.1} | {:.1} | {:.1} | {:.0} |",
            row.label,
            row.summary.p50_us,
            row.summary.p99_us,
            row.summary.mean_us,
            row.summary.calls_per_second,
        );
    }
    out
}

fn stat_cell(stat: CommandStat) -> String {
    let mut notes = Vec::new();
    if stat.failed_calls > 0 {
        notes.push(format!("{} failed", stat.failed_calls));
    }
    if stat.rejected_calls > 0 {
        notes.push(format!("{} rejected", stat.rejected_calls));
    }
    if notes.is_empty() {
        stat.calls.to_string()
    } else {
        format!("{} ({})", stat.calls, notes.join(", "))
    }
}

pub fn cold_table(rows: &[ColdRow]) -> String {
    let mut out = String::from(
        "| client, after `SCRIPT FLUSH` | round trips | `evalsha` | `eval` | `script\\|load` | replies |\n\
         | --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | `{}` |",
            row.label,
            row.round_trips,
            stat_cell(row.evalsha),
            stat_cell(row.eval),
            stat_cell(row.script_load),
            row.reply.replace('|', "\\|"),
        );
    }
    out
}

pub fn encode_table(rows: &[EncodeRow]) -> String {
    let mut out = String::from(
        "| script | client code | build ns | allocs | build + pack ns | allocs |\n\
         | --- | --- | ---: | ---: | ---: | ---: |\n",
    );
    for row in rows {
        let pack_ns = row
            .pack_ns
            .map(|ns| format!("{ns:.0}"))
            .unwrap_or_else(|| "n/a¹".to_owned());
        let pack_allocations = row
            .pack_allocations
            .map(|n| format!("{n:.1}"))
            .unwrap_or_else(|| "n/a¹".to_owned());
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.1} | {pack_ns} | {pack_allocations} |",
            row.workload.label(),
            row.label,
            row.build_ns,
            row.build_allocations,
        );
    }
    out
}

/// Markdown for the reads on replicas: one column per node.
pub fn replica_table(table: &crate::replicas::ReplicaTable) -> String {
    let mut out = format!(
        "| read from | in flight | calls/s | p50 µs | p99 µs | {} |\n| --- | --- | ---: | ---: | ---: |{}\n",
        table.nodes.join(" | "),
        " ---: |".repeat(table.nodes.len())
    );
    for row in &table.rows {
        let cells: Vec<String> = row.calls.iter().map(|calls| node_cell(*calls)).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.1} | {:.1} | {} |",
            row.read_from,
            row.in_flight,
            row.summary.calls_per_second,
            row.summary.p50_us,
            row.summary.p99_us,
            cells.join(" | "),
        );
    }
    out
}

fn node_cell(calls: crate::replicas::NodeCalls) -> String {
    let mut cell = calls.read_only.to_string();
    if calls.read_write > 0 {
        let _ = write!(cell, " + {} `evalsha`/`eval`", calls.read_write);
    }
    if calls.failed > 0 {
        let _ = write!(cell, " ({} failed)", calls.failed);
    }
    cell
}
